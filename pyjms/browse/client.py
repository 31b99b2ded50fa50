"""How a browse handle or a consumer reaches the mark service: requests with answers, one-way
notices, and a lease kept alive by a heartbeat thread while the handle is open.

A cooperative handle also remembers the marks it holds for the set (:class:`HeldMarks`): when
an answer carries an epoch other than the one it opened in, another mark service has taken over
with an empty table, and the handle sends those marks back to it ("restore").
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from pyjms.api.destination import Queue
from pyjms.api.quietlog import QuietLog
from pyjms.api.requests import ServiceClient
from pyjms.bridge import jvm
from pyjms.bridge.contract import MARK_QUEUE
from pyjms.errors import JMSRuntimeException

if TYPE_CHECKING:
    from pyjms.api.context import JMSContext


class MarkClient(ServiceClient):
    """Requests and notices to PYJMS.MARKS (pyjms.api.requests), on a session of its own."""

    def __init__(self, parent: JMSContext, timeout_ms: int = 5000) -> None:
        super().__init__(
            parent,
            Queue(MARK_QUEUE),
            timeout_ms=timeout_ms,
            serves="a pyjms broker, or `pyjms mark-service --url URL` beside another broker "
            "(cooperative browsing needs one)",
        )


_log = logging.getLogger("pyjms.browse")
_quiet = QuietLog(_log)

#: ids one restore request carries at most (well within the service's request limits)
_RESTORE_CHUNK = 1000


class HeldMarks:
    """The marks a cooperative handle holds for the set on one queue, as it knows them, and the
    mark service epoch they are held in. Thread-safe: the handle's thread and its heartbeat
    both see answers.

    A claim may be handed out only while the handle knows it still holds it (:meth:`current`):
    within a lease of sending the last request that the service answered in this epoch. A new
    active service grants nobody else's claims for a lease after it took over, so a handle cut
    off from the service (its request went down with the old one) stops handing out claims
    before anyone else can be granted them."""

    #: marks remembered at most (the oldest go first; a mark that never lapses is held until
    #: its message is consumed, which the dispatcher does not hear of)
    MOST = 100_000

    def __init__(self, handle: str, queue: str) -> None:
        self.handle = handle
        self.queue = queue
        self.interval_ms = -1
        self.lease_ms = 0
        self._epoch: str | None = None
        self._retired: set[str] = set()  # epochs of services that went away
        self._confirmed = float("-inf")  # when the last request answered in this epoch was sent
        self._takeover: tuple[float, set[str]] | None = None  # (when seen, the ids restored)
        self._restoring = False  # a restore is under way (on one of the handle's threads)
        self._marks: OrderedDict[str, float] = OrderedDict()  # token -> when claimed (monotonic)
        self._lock = threading.Lock()
        #: how many times this handle restored its marks to a new mark service
        self.restores = 0

    def claimed(self, ids: list[str]) -> None:
        now = time.monotonic()
        with self._lock:
            for t in ids:
                self._marks[t] = now
            while len(self._marks) > self.MOST:
                self._marks.popitem(last=False)

    def released(self, ids: list[str]) -> None:
        with self._lock:
            for t in ids:
                self._marks.pop(t, None)

    def clear(self) -> None:
        with self._lock:
            self._marks.clear()

    def current(self, margin: float) -> bool:
        """Whether the handle knows it holds its claims now: it sent a request that the service
        answered in this epoch less than a lease (less ``margin`` of it) ago."""
        keep_s = self.lease_ms * (1 - margin) / 1000.0
        with self._lock:
            return not self._restoring and time.monotonic() - self._confirmed < keep_s

    def taken_over(self) -> tuple[float, set[str]] | None:
        """Once after each takeover: (when the handle saw it, the ids the new service holds for
        it). The handle drops every claim it made before then that is not among them."""
        with self._lock:
            takeover, self._takeover = self._takeover, None
        return takeover

    def seen(self, answer: dict[str, Any], client: MarkClient, sent_at: float) -> bool:
        """An answer of the mark service to a request sent at ``sent_at`` (monotonic): if it
        comes from a new epoch, restore the marks there. False if it comes from a service that
        went away (its grants are void)."""
        epoch = answer.get("epoch")
        now = time.monotonic()
        with self._lock:
            if not isinstance(epoch, str):
                return True
            if epoch in self._retired:
                return False
            if epoch == self._epoch or self._epoch is None:
                self._epoch = epoch
                if not self._restoring:
                    self._confirmed = max(self._confirmed, sent_at)
                return True
            previous, self._epoch = self._epoch, epoch
            self._retired.add(previous)
            self._restoring = True
            # marks that lapsed at the old service need not come back
            live = [
                (t, int((now - at) * 1000))
                for t, at in self._marks.items()
                if self.interval_ms < 0 or (now - at) * 1000 < self.interval_ms
            ]
        self.restores += 1
        _log.info(
            "browse handle %s: a new mark service took over; restoring %d mark(s)", self.handle[:8], len(live)
        )
        restored: set[str] = set()
        try:
            for i in range(0, max(len(live), 1), _RESTORE_CHUNK):
                chunk = live[i : i + _RESTORE_CHUNK]
                restored.update(
                    client.call(
                        "restore",
                        handle=self.handle,
                        queue=self.queue,
                        ids=[t for t, _ in chunk],
                        ages_ms=[age for _, age in chunk],
                    )["restored"]
                )
        except BaseException:
            with self._lock:  # not restored: the next answer of the new epoch tries again
                self._restoring = False
                self._retired.discard(previous)
                self._epoch = previous
            raise
        with self._lock:
            self._restoring = False
            self._confirmed = sent_at
            self._takeover = (now, restored)
            for t in [t for t in self._marks if t not in restored]:
                del self._marks[t]
        return True

    def lost(self) -> None:
        """The service says the handle's lease ran out: none of its claims is held."""
        with self._lock:
            self._confirmed = float("-inf")


class Heartbeat:
    """Renews a handle's lease every lease/3 on a thread and session of its own. Each renewal
    is a request: its answer tells whether another mark service took over (then the handle's
    marks are restored there, ``held``). It ends with the handle's close, or once the handle's
    context is closed: the handle can do nothing more and its lease may lapse (a heartbeat on
    a failover connection would otherwise renew for ever, also against brokers that are gone)."""

    def __init__(self, parent: JMSContext, handle: str, lease_ms: int, held: HeldMarks | None = None) -> None:
        self._parent = parent
        # made here; used only by the thread from now on. A renewal lost with a mature service is
        # given up after a lease, not the default 5 s: the next one finds the new service
        self._marks = MarkClient(parent, timeout_ms=min(5000, max(lease_ms, 500)))
        self._handle = handle
        self._held = held
        self._every_s = max(lease_ms / 3000.0, 0.05)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"pyjms-mark-lease-{handle[:8]}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        with jvm.java_thread():
            while not self._stop.wait(self._every_s) and not self._parent.closed:
                try:
                    sent_at = time.monotonic()
                    answer = self._marks.call("renew", handles=[self._handle])
                    if self._held is not None:
                        if self._handle in answer.get("lost", ()):
                            self._held.lost()
                        else:
                            self._held.seen(answer, self._marks, sent_at)
                except JMSRuntimeException as e:
                    if self._stop.is_set() or jvm.shutting_down():
                        break
                    # no mark service active this moment (a takeover), or the session broke:
                    # renew again next time; a lease that runs out shows at the next claim
                    _quiet.warn(
                        "renew", "browse handle %s: renewing its lease failed: %s", self._handle[:8], e
                    )
            try:
                self._marks.close()
            except JMSRuntimeException:
                pass

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
