"""IBM MQ's browse with mark and cooperative browsing, on any JMS provider.

    with factory.create_context() as ctx:
        dispatcher = ctx.create_marking_browser(queue, cooperative=True)
        m = dispatcher.get(BROWSE_CO_OP)              # marked for every cooperating handle
        consumer_ctx.create_consumer(queue).receive_by_token(m.get_message_token())

Handle marks live in the handle; marks for the cooperating set live in a mark service at the
broker (pyjms brokers run one; ``pyjms mark-service --url`` serves any other broker), so
dispatchers in different processes and hosts cooperate and a crashed one loses nothing.
"""

from pyjms.browse.browser import MarkingBrowser, NoMessageAvailable, NoMessageUnderCursor
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
)
from pyjms.browse.service import MARK_QUEUE, MarkService

__all__ = [
    "MarkingBrowser", "NoMessageAvailable", "NoMessageUnderCursor", "MarkService", "MARK_QUEUE",
    "BROWSE_FIRST", "BROWSE_NEXT", "MARK_BROWSE_HANDLE", "MARK_BROWSE_CO_OP", "UNMARK_BROWSE_CO_OP",
    "UNMARK_BROWSE_HANDLE", "UNMARKED_BROWSE_MSG", "BROWSE_HANDLE", "BROWSE_CO_OP",
    "mark_browse_interval", "set_mark_browse_interval",
]


def mark_browse_interval(factory) -> int:  # type: ignore[no-untyped-def]
    """The broker's MsgMarkBrowseInterval (ms; -1 = never), read from its mark service."""
    return _config(factory)["interval_ms"]


def set_mark_browse_interval(factory, interval_ms: int) -> int:  # type: ignore[no-untyped-def]
    """Sets the broker's MsgMarkBrowseInterval (IBM's ALTER QMGR MARKINT) and returns it."""
    from pyjms.browse.options import check_interval

    return _config(factory, interval_ms=check_interval(interval_ms))["interval_ms"]


def _config(factory, **fields):  # type: ignore[no-untyped-def]
    from pyjms.browse.client import MarkClient

    with factory.create_context() as ctx:
        client = MarkClient(ctx)
        try:
            answer = client.call("config", **fields)
        finally:
            client.close()
    if not answer.get("ok"):
        from pyjms.errors import InvalidArgumentRuntimeException

        raise InvalidArgumentRuntimeException(answer.get("error", "mark service refused the request"))
    return answer
