"""The cooperative mark table: which browse handle marked which message, and for how long.

Pure Python with an injectable clock, so MsgMarkBrowseInterval and lease expiry are tested
without sleeping. The mark service (pyjms.browse.service) holds one table per broker and
answers every cooperating handle from it.

Three things end a mark:
- the interval: a mark older than MsgMarkBrowseInterval lapses (never when it is -1);
- its handle: closing releases its marks, and a handle that stops renewing its lease (the
  process stopped or died) has them released when the lease runs out;
- the message: a consumer that backs out its get unmarks it; one that commits turns the mark
  into a tombstone, so a dispatcher holding an old browse snapshot cannot dispatch a message
  that is already gone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from pyjms.browse.options import DEFAULT_MSG_MARK_BROWSE_INTERVAL_MS, check_interval
from pyjms.errors import IllegalStateRuntimeException

Key = tuple[str, str]  # (queue name, message id)


class LostHandle(IllegalStateRuntimeException):
    """The handle's lease ran out (or it was closed): its marks were released."""


@dataclass
class _Mark:
    handle: str
    at: float


class MarkTable:
    """Marks for the cooperating set of each queue. Not thread-safe: one service thread owns it."""

    def __init__(
        self,
        interval_ms: int = DEFAULT_MSG_MARK_BROWSE_INTERVAL_MS,
        lease_ms: int = 10_000,
        tombstone_ms: int = 60_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.interval_ms = check_interval(interval_ms)
        self.lease_ms = lease_ms
        self.tombstone_ms = tombstone_ms
        self.clock = clock
        self._marks: dict[Key, _Mark] = {}  # insertion order = marking order
        self._by_handle: dict[str, set[Key]] = {}
        self._seen: dict[str, float] = {}  # handle -> last renewal
        self._owner: dict[str, str | None] = {}  # handle -> the user who opened it
        self._gone: dict[Key, float] = {}  # consumed messages -> when

    # ------------------------------------------------------------------ handles

    def open(self, handle: str, owner: str | None = None) -> None:
        """Opens (or renews) a handle for ``owner``, the user who asked (None: nobody named)."""
        self._seen[handle] = self.clock()
        self._by_handle.setdefault(handle, set())
        self._owner.setdefault(handle, owner)

    def owner(self, handle: str) -> tuple[bool, str | None]:
        """(whether the handle is live, the user who opened it)."""
        return handle in self._seen, self._owner.get(handle)

    def renew(self, handle: str) -> bool:
        """Keeps a live handle's lease; False if it is not live (its marks are gone)."""
        if handle not in self._seen:
            return False
        self._seen[handle] = self.clock()
        return True

    def close(self, handle: str) -> int:
        """Releases every mark of the handle; returns how many."""
        self._seen.pop(handle, None)
        self._owner.pop(handle, None)
        keys = self._by_handle.pop(handle, set())
        for k in keys:
            self._marks.pop(k, None)
        return len(keys)

    def live_handles(self) -> int:
        return len(self._seen)

    # ------------------------------------------------------------------ marks

    def _lapsed(self, mark: _Mark, now: float) -> bool:
        return self.interval_ms >= 0 and (now - mark.at) * 1000.0 >= self.interval_ms

    def _current(self, key: Key, now: float) -> _Mark | None:
        mark = self._marks.get(key)
        if mark is not None and self._lapsed(mark, now):
            self._drop(key)
            return None
        return mark

    def _drop(self, key: Key) -> None:
        mark = self._marks.pop(key, None)
        if mark is not None:
            held = self._by_handle.get(mark.handle)
            if held is not None:
                held.discard(key)

    def claim(self, handle: str, queue: str, ids: Iterable[str]) -> list[str]:
        """Marks for the set each id that nobody in it holds; returns those granted, in order."""
        return self.claim_some(handle, queue, list(ids), None)[0]

    def claim_some(self, handle: str, queue: str, ids: list[str], limit: int | None) -> tuple[list[str], int]:
        """As claim, but stops after ``limit`` grants; also returns how many ids it looked at
        (the caller offers the rest again). One request then serves a dispatcher whose
        candidates are mostly taken by others."""
        if not self.renew(handle):
            raise LostHandle(f"browse handle {handle} is not live: its lease ran out or it was closed")
        now = self.clock()
        held = self._by_handle[handle]
        granted: list[str] = []
        checked = 0
        for mid in ids:
            if limit is not None and len(granted) >= limit:
                break
            checked += 1
            key = (queue, mid)
            if key in self._gone or self._current(key, now) is not None:
                continue
            self._marks[key] = _Mark(handle, now)
            held.add(key)
            granted.append(mid)
        return granted, checked

    def restore(self, handle: str, queue: str, ids: list[str], ages_ms: list[int]) -> list[str]:
        """Marks again what a live handle held at a mark service that went away (each id as old
        as it was there), where nobody else holds it now; returns the ids the handle holds now
        (the handle hands out no other claim it made before)."""
        if not self.renew(handle):
            raise LostHandle(f"browse handle {handle} is not live: open it before restoring its marks")
        now = self.clock()
        held = self._by_handle[handle]
        restored: list[str] = []
        for mid, age_ms in zip(ids, ages_ms, strict=True):
            key = (queue, mid)
            mark = _Mark(handle, now - age_ms / 1000.0)
            current = None if key in self._gone else self._current(key, now)
            if current is not None and current.handle == handle:
                restored.append(mid)  # restored twice (a retry): the handle holds it
                continue
            if key in self._gone or current is not None or self._lapsed(mark, now):
                continue
            self._marks[key] = mark
            held.add(key)
            restored.append(mid)
        if restored:  # marks are kept in time order (sweep stops at the first that has not lapsed)
            self._marks = dict(sorted(self._marks.items(), key=lambda item: item[1].at))
        return restored

    def marked(self, queue: str, ids: Iterable[str]) -> list[str]:
        """The ids marked for the set now (or already consumed)."""
        now = self.clock()
        return [m for m in ids if (queue, m) in self._gone or self._current((queue, m), now) is not None]

    def unmark(self, queue: str, ids: Iterable[str], handle: str | None = None) -> int:
        """Removes marks: a handle's own (UNMARK_BROWSE_CO_OP), or anyone's (a backed-out get)."""
        n = 0
        for mid in ids:
            key = (queue, mid)
            mark = self._marks.get(key)
            if mark is not None and (handle is None or mark.handle == handle):
                self._drop(key)
                n += 1
        return n

    def consumed(self, queue: str, ids: Iterable[str]) -> None:
        """The messages were got and committed: forget their marks, refuse them from now on."""
        now = self.clock()
        for mid in ids:
            key = (queue, mid)
            self._drop(key)
            self._gone.pop(key, None)
            self._gone[key] = now

    def count(self) -> int:
        return len(self._marks)

    # ------------------------------------------------------------------ time

    def sweep(self) -> None:
        """Expires leases, lapses marks, forgets old tombstones. Cheap: marks are in time order."""
        now = self.clock()
        for handle, seen in list(self._seen.items()):
            if (now - seen) * 1000.0 >= self.lease_ms:
                self.close(handle)
        if self.interval_ms >= 0:
            while self._marks:
                key, mark = next(iter(self._marks.items()))
                if not self._lapsed(mark, now):
                    break
                self._drop(key)
        while self._gone:
            key, at = next(iter(self._gone.items()))
            if (now - at) * 1000.0 < self.tombstone_ms:
                break
            del self._gone[key]
