"""IBM MQ's browse with mark and cooperative browsing, on any JMS provider.

    with factory.create_context() as ctx:
        dispatcher = ctx.create_marking_browser(queue, cooperative=True)
        m = dispatcher.get(BROWSE_CO_OP)              # marked for every cooperating handle
        consumer_ctx.create_consumer(queue).receive_by_token(m.get_message_token())

Handle marks live in the handle; marks for the cooperating set live in a mark service at the
broker (pyjms brokers run one; ``pyjms mark-service --url`` serves any other broker), so
dispatchers in different processes and hosts cooperate and a crashed one loses nothing.
"""

from typing import Any, cast

from pyjms.api import extension
from pyjms.api.context import JMSContext
from pyjms.api.destination import Queue
from pyjms.api.factory import ConnectionFactory
from pyjms.bridge.contract import MARK_QUEUE
from pyjms.browse.browsed import NoMessageAvailable, NoMessageUnderCursor
from pyjms.browse.browser import MarkingBrowser
from pyjms.browse.client import MarkClient
from pyjms.browse.options import (
    BROWSE_CO_OP,
    BROWSE_FIRST,
    BROWSE_HANDLE,
    BROWSE_NEXT,
    MARK_BROWSE_CO_OP,
    MARK_BROWSE_HANDLE,
    UNMARK_BROWSE_CO_OP,
    UNMARK_BROWSE_HANDLE,
    UNMARKED_BROWSE_MSG,
    check_interval,
)
from pyjms.browse.service import MarkService
from pyjms.browse.tokens import receive_by_token, receive_by_tokens

__all__ = [
    "MarkingBrowser",
    "NoMessageAvailable",
    "NoMessageUnderCursor",
    "MarkService",
    "MARK_QUEUE",
    "BROWSE_FIRST",
    "BROWSE_NEXT",
    "MARK_BROWSE_HANDLE",
    "MARK_BROWSE_CO_OP",
    "UNMARK_BROWSE_CO_OP",
    "UNMARK_BROWSE_HANDLE",
    "UNMARKED_BROWSE_MSG",
    "BROWSE_HANDLE",
    "BROWSE_CO_OP",
    "create_marking_browser",
    "mark_browse_interval",
    "set_mark_browse_interval",
]


def create_marking_browser(
    ctx: JMSContext,
    queue: Queue,
    message_selector: str | None = None,
    cooperative: bool = False,
    claim_batch: int | None = None,
) -> MarkingBrowser:
    """IBM MQ's browse with mark on queue: a handle of its own, or (cooperative=True, IBM's
    MQOO_CO_OP) one of a cooperating set whose marks every handle on the broker sees.
    ``ctx.create_marking_browser(...)`` is the same call (this package provides it)."""
    return MarkingBrowser(ctx, queue, message_selector, cooperative, claim_batch)


def mark_browse_interval(factory: ConnectionFactory) -> int:
    """The broker's MsgMarkBrowseInterval (ms; -1 = never), read from its mark service."""
    return cast(int, _config(factory)["interval_ms"])


def set_mark_browse_interval(factory: ConnectionFactory, interval_ms: int) -> int:
    """Sets the broker's MsgMarkBrowseInterval (IBM's ALTER QMGR MARKINT) and returns it."""
    return cast(int, _config(factory, interval_ms=check_interval(interval_ms))["interval_ms"])


def _config(factory: ConnectionFactory, **fields: Any) -> dict[str, Any]:
    with factory.create_context() as ctx:
        with MarkClient(ctx) as client:
            return client.call("config", **fields)


# the client's methods this feature carries out (pyjms.api.extension)
extension.provide("create_marking_browser", create_marking_browser)
extension.provide("receive_by_token", receive_by_token)
extension.provide("receive_by_tokens", receive_by_tokens)
