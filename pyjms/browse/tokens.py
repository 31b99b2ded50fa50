"""Gets by message token (IBM MQ's MQMO_MATCH_MSG_TOKEN), and what the mark service hears of them.

``JMSConsumer.receive_by_token`` and ``receive_by_tokens`` are this module's (the client
declares them and hands them here, pyjms.api.extension). The get itself is the client's
``receive_by_message_ids``. What is got by token leaves the cooperating set's marks: the mark
service is told the messages were consumed (forget the marks) when the get commits, or that
they are to be unmarked (dispatchable again) when it rolls back. For a transacted context a
:class:`TokenSettlement` synchronization (pyjms.api.synchronization) carries the notices at
commit, rollback and close; other contexts tell the service at once. Notices are best effort:
unheard, the marks lapse with MsgMarkBrowseInterval.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Sequence
from datetime import timedelta

from pyjms.api.checks import to_ms
from pyjms.api.constants import SESSION_TRANSACTED
from pyjms.api.consumer import JMSConsumer
from pyjms.api.context import JMSContext
from pyjms.api.message import Message
from pyjms.api.synchronization import TransactionSynchronization
from pyjms.browse.browsed import NoMessageAvailable, NoMessageUnderCursor, check_token, expired_under_cursor
from pyjms.browse.client import MarkClient
from pyjms.browse.kept import context_rolled_back, paired
from pyjms.errors import JMSRuntimeException
from pyjms.reasons import MQRC

_log = logging.getLogger("pyjms.browse")


class TokenSettlement(TransactionSynchronization):
    """One context's gets by token, told to the mark service when their outcome is known."""

    def __init__(self, ctx: JMSContext) -> None:
        # made while ctx is open: a session of its own, which outlives ctx's close
        self._marks = MarkClient(ctx)
        self._pending: list[tuple[str, str]] = []  # (queue, token) got in the open transaction
        self._lock = threading.Lock()

    def got(self, queue: str, tokens: list[str], settled: bool) -> None:
        """Messages got by token; ``settled``: already consumed for good (not transacted)."""
        if settled:
            self._tell("consumed", [(queue, t) for t in tokens])
        else:
            with self._lock:
                self._pending.extend((queue, t) for t in tokens)

    def after_commit(self, context: JMSContext) -> None:
        self._tell("consumed", self._take())

    def after_rollback(self, context: JMSContext) -> None:
        context_rolled_back(context)
        self._tell("unmark", self._take())

    def on_close(self, context: JMSContext) -> None:
        try:
            self._tell("unmark", self._take())  # closing rolled the transaction back
        finally:
            with _settlements_lock:
                _settlements.pop(context, None)
            self._marks.close()

    def _take(self) -> list[tuple[str, str]]:
        with self._lock:
            got, self._pending = self._pending, []
        return got

    def _tell(self, outcome: str, got: list[tuple[str, str]]) -> None:
        """Tells the mark service the gets were committed ("consumed": forget the marks) or
        backed out ("unmark": the messages can be dispatched again). A notice, not a request."""
        by_queue: dict[str, list[str]] = {}
        for queue, token in got:
            by_queue.setdefault(queue, []).append(token)
        for queue, tokens in by_queue.items():
            try:
                self._marks.notify(outcome, queue=queue, ids=tokens)
            except JMSRuntimeException as e:  # best effort: unheard, the marks lapse with the interval
                _log.warning(
                    "could not tell the mark service of %d %s message(s) on %s: %s",
                    len(tokens),
                    outcome,
                    queue,
                    e,
                )


#: each context's settlement, made at its first get by token
_settlements: weakref.WeakKeyDictionary[JMSContext, TokenSettlement] = weakref.WeakKeyDictionary()
_settlements_lock = threading.Lock()


def _settlement(ctx: JMSContext) -> TokenSettlement:
    with _settlements_lock:
        settlement = _settlements.get(ctx)
        if settlement is None:
            settlement = _settlements[ctx] = TokenSettlement(ctx)
            ctx.add_synchronization(settlement)
        return settlement


def receive_by_tokens(
    consumer: JMSConsumer, tokens: Sequence[str], timeout_ms: int | timedelta = 1000
) -> list[Message]:
    """JMSConsumer.receive_by_tokens: the messages with these tokens that are on the queue."""
    wanted = [check_token(t) for t in tokens]
    kept = paired(consumer)
    got = None
    if kept is not None and wanted and len(set(wanted)) == len(wanted):
        wait_ms = 0 if timeout_ms is None else to_ms(timeout_ms, "timeout_ms")
        if wait_ms >= 0:
            got = kept.get(wanted, wait_ms)
    if got is None:
        got = consumer.receive_by_message_ids(wanted, timeout_ms)
    if got:
        ctx = consumer.context
        _settlement(ctx).got(
            consumer.destination.name,
            [m.get_message_token() for m in got],
            settled=ctx.get_session_mode() != SESSION_TRANSACTED,
        )
    return got


def receive_by_token(consumer: JMSConsumer, token: str, timeout_ms: int | timedelta = 1000) -> Message:
    """JMSConsumer.receive_by_token: exactly the message with this token, or NoMessageAvailable
    (2033), or NoMessageUnderCursor (2034) if it expired after a browse here returned it."""
    got = receive_by_tokens(consumer, [token], timeout_ms)
    if not got:
        if expired_under_cursor(token):
            raise NoMessageUnderCursor(
                f"message {token} on {consumer.destination} expired after it was browsed",
                reason=MQRC.NO_MSG_UNDER_CURSOR,
                values={"token": token},
            )
        raise NoMessageAvailable(
            f"message {token} is not on {consumer.destination}: another consumer got it, it expired, "
            "or it was removed",
            reason=MQRC.NO_MSG_AVAILABLE,
            values={"token": token},
        )
    return got[0]
