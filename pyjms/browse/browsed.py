"""What a browse hands to a get by token: the token itself (a JMS message id), checked; the
expirations of the messages marking browsers in this process returned, so that a get can tell
"expired under the cursor" (MQRC_NO_MSG_UNDER_CURSOR, 2034) from "gone" (2033); and those two
errors. The marking browser notes what it returns here; receive_by_token (tokens) reads it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from pyjms.api.expiry import now_ms
from pyjms.api.message import Message
from pyjms.errors import InvalidArgumentRuntimeException, JMSRuntimeException


class NoMessageAvailable(JMSRuntimeException):
    """No message matched: MQRC_NO_MSG_AVAILABLE (2033)."""


class NoMessageUnderCursor(NoMessageAvailable):
    """The message a browse returned expired before the get by its token (E12):
    MQRC_NO_MSG_UNDER_CURSOR (2034)."""


#: expirations of the messages marking browsers in this process returned, by token, so that a
#: get by token can tell "expired under the cursor" (2034) from "gone" (2033); the oldest go first
_browsed_expiration: OrderedDict[str, int] = OrderedDict()
_BROWSED_KEPT = 100_000
_browsed_lock = threading.Lock()


def note_browsed(m: Message) -> None:
    """A marking browser returned ``m``: its expiration is kept, for expired_under_cursor."""
    expiration = m.get_jms_expiration()
    if expiration:
        with _browsed_lock:
            _browsed_expiration[m.get_message_token()] = expiration
            while len(_browsed_expiration) > _BROWSED_KEPT:
                _browsed_expiration.popitem(last=False)


def expired_under_cursor(token: str) -> bool:
    """Whether a marking browser in this process returned this message and it has expired since."""
    with _browsed_lock:
        expiration = _browsed_expiration.get(token)
    return expiration is not None and now_ms() >= expiration


def token_of(message_or_token: Message | str) -> str:
    """The token of a browsed message, or a token given as such, checked (check_token)."""
    if isinstance(message_or_token, Message):
        token = message_or_token.get_message_token()
    else:
        token = message_or_token
    return check_token(token)


def check_token(token: Any) -> str:
    """A message token is the JMS message id ("ID:..."), as every JMS provider writes it."""
    if not isinstance(token, str) or not token.startswith("ID:") or len(token) > 4096:
        raise InvalidArgumentRuntimeException(
            f"message token {token!r} is not a token from a browsed message (a JMS message id 'ID:...')",
            values={"token": token},
        )
    return token
