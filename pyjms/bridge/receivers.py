"""What a channel's session receives with: its receivers (JMS consumers) and browsers, typed, and
the notes of the poison the shim quarantined (org.pyjms.shim.Poison).

A receiver shares a memory area with the shim for one record at a time (Receiver.receiveToArea):
a returned byte[] cost a Java object, a global reference and a copy per message. Every call
translates a Java exception as the channel does (Channel.translated).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar, cast

from pyjms.bridge import jvm
from pyjms.bridge.java_types import JavaBrowser, JavaPoisonClass, JavaReceiver

if TYPE_CHECKING:
    from pyjms.bridge.channel import Channel

_T = TypeVar("_T")
_poison_log = logging.getLogger("pyjms.poison")
#: how the shim's note of a browse's skip begins (org.pyjms.shim.Poison.skipped)
_SKIPPED = "browse skipped"
#: a batch's count when it holds no record
_EMPTY_BATCH = bytes(4)
#: the size of the memory a sender or receiver shares with the shim for one record at a time
#: (Channel.sendFromArea, Receiver.receiveToArea): a larger record crosses as a byte[]
AREA_BYTES = 16 * 1024
#: receiveToArea's answer for a record larger than the area (then takeOversize); -1 is none came
_OVERSIZE = -2


def poison_notes() -> list[str]:
    """The notes, one a line, of the poison messages the shim quarantined or a browse skipped
    since the last call (org.pyjms.shim.Poison): each is handed out once."""
    notes = cast(JavaPoisonClass, jvm.shim().jclass("org.pyjms.shim.Poison")).drainNotes()
    return [] if notes is None else str(notes).splitlines()


def is_browse_skip(note: str) -> bool:
    """Whether a poison note tells of a browse's skip (told again when a receiver quarantines
    the message), not of a quarantine, which is what an operator acts on."""
    return note.startswith(_SKIPPED)


def log_poison_notes() -> None:
    """Logs, once each, the poison messages the shim quarantined or a browse skipped since the
    last call (org.pyjms.shim.Poison). Called when a receive or browse comes back empty, so the
    path that hands messages over costs nothing more."""
    for line in poison_notes():
        _poison_log.log(logging.INFO if is_browse_skip(line) else logging.WARNING, "%s", line)


class Receiver:
    """A consumer on the wire (org.pyjms.shim.Receiver)."""

    __slots__ = (
        "java",
        "id",
        "_jexc",
        "_translated",
        "_area",
        "_java_area",
        "_area_lock",
        "_receive_to_area",
    )

    def __init__(self, java: JavaReceiver, channel: Channel) -> None:
        self.java = java
        self.id = int(java.id())
        self._jexc = channel.java_exception
        # the channel's translation: a call that fails because the connection broke says so
        # (MQRC_CONNECTION_BROKEN), not only what the client said ("The Consumer is closed")
        self._translated = channel.translated
        # where the shim writes each record (Receiver.receiveToArea): a returned byte[] cost a
        # Java object, a global reference and a copy per message
        self._area = bytearray(AREA_BYTES)
        self._java_area = channel.direct_buffer(self._area)
        self._area_lock = threading.Lock()  # a consumer used from two threads keeps its records apart
        self._receive_to_area = java.receiveToArea  # bound once: JPype makes a method object per lookup

    def receive(self, timeout_ms: int, ack: bool, what: str) -> bytes | None:
        """One record, or None if none came within timeout_ms (0: none waiting)."""
        with self._area_lock:
            try:
                n = self._receive_to_area(self._java_area, timeout_ms, ack)
                if n >= 0:
                    return bytes(memoryview(self._area)[:n])
                if n == _OVERSIZE:
                    return bytes(self.java.takeOversize())
            except self._jexc as e:
                raise self._translated(e, what) from None
        log_poison_notes()
        return None

    def receive_batch(self, max_messages: int, timeout_ms: int, what: str) -> bytes:
        """A batch (codec.iter_batch) of up to max_messages: waits for the first only."""
        try:
            raw = bytes(self.java.receiveBatch(max_messages, timeout_ms))
        except self._jexc as e:
            raise self._translated(e, what) from None
        if raw[:4] == _EMPTY_BATCH:
            log_poison_notes()
        return raw

    def receive_body(self, kind: int, timeout_ms: int, what: str) -> bytes | None:
        """The client's own receiveBody as a record of that body kind, or None if none came;
        a body of another kind stays unconsumed (the client's JMS 2.0 rule)."""
        try:
            raw = self.java.receiveBody(kind, timeout_ms)
        except self._jexc as e:
            raise self._translated(e, what) from None
        return None if raw is None else bytes(raw)

    def ack_last(self, what: str = "acknowledge") -> None:
        self._run(self.java.ackLast, what)

    def listen(self, what: str = "set_message_listener") -> None:
        self._run(self.java.listen, what)

    def unlisten(self, what: str = "set_message_listener(None)") -> None:
        self._run(self.java.unlisten, what)

    def close(self, what: str = "close consumer") -> None:
        self._run(self.java.close, what)

    def _run(self, fn: Callable[[], _T], what: str) -> _T:
        try:
            return fn()
        except self._jexc as e:
            raise self._translated(e, what) from None


class Browser:
    """A queue browser on the wire (org.pyjms.shim.Browser)."""

    __slots__ = ("java", "_jexc", "_translated")

    def __init__(self, java: JavaBrowser, channel: Channel) -> None:
        self.java = java
        self._jexc = channel.java_exception
        self._translated = channel.translated  # as Receiver's

    def next(self, max_messages: int, what: str) -> bytes:
        """A batch of up to max_messages records; an empty batch at the end of the queue."""
        try:
            raw = bytes(self.java.next(max_messages))
        except self._jexc as e:
            raise self._translated(e, what) from None
        if raw[:4] == _EMPTY_BATCH:
            log_poison_notes()
        return raw

    def skipped_ids(self) -> list[str]:
        """The JMSMessageIDs of the poison messages the browse skipped since the last call."""
        ids = self.java.skippedIds()
        return [] if ids is None else str(ids).splitlines()

    def close(self, what: str = "close browser") -> None:
        try:
            self.java.close()
        except self._jexc as e:
            raise self._translated(e, what) from None
