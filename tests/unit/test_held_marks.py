"""A cooperative handle's view of its marks across a mark service takeover (HeldMarks), against
MarkTables that stand for the old and the new service (no broker; the takeover tests in
tests/faults/test_mark_takeover.py run the real services)."""

from __future__ import annotations

import time
from typing import Any

from pyjms.browse.client import HeldMarks
from pyjms.browse.marks import MarkTable


class TableService:
    """Answers restore requests from a MarkTable, as the mark service does, in one epoch."""

    def __init__(self, epoch: str) -> None:
        self.epoch = epoch
        self.table = MarkTable(interval_ms=5000, lease_ms=1500)
        self.calls: list[str] = []

    def call(self, op: str, **fields: Any) -> dict[str, Any]:
        self.calls.append(op)
        assert op == "restore"
        self.table.open(fields["handle"])
        restored = self.table.restore(fields["handle"], fields["queue"], fields["ids"], fields["ages_ms"])
        return {"ok": True, "restored": restored, "epoch": self.epoch}


def held(lease_ms: int = 1500) -> HeldMarks:
    h = HeldMarks("handle-a", "Q")
    h.interval_ms = 5000
    h.lease_ms = lease_ms
    return h


def test_a_handle_holds_its_claims_for_a_lease_after_the_last_answered_request() -> None:
    h = held()
    old = TableService("e1")
    assert not h.current(0.2), "nothing answered yet"
    assert h.seen({"epoch": "e1"}, old, time.monotonic())  # type: ignore[arg-type]
    assert h.current(0.2)
    h.seen({"epoch": "e1"}, old, time.monotonic() - 1.3)  # type: ignore[arg-type]
    assert h.current(0.2), "an older answer does not take the confirmation back"
    h.lost()
    assert not h.current(0.2), "a lost lease holds nothing"
    h.seen({"epoch": "e1"}, old, time.monotonic() - 1.3)  # type: ignore[arg-type]
    assert not h.current(0.2), "sent 1.3 s ago: within the lease, not within its last fifth"


def test_after_a_takeover_only_what_the_new_service_restored_is_held() -> None:
    h = held()
    old, new = TableService("e1"), TableService("e2")
    h.seen({"epoch": "e1"}, old, time.monotonic())  # type: ignore[arg-type]
    h.claimed(["m1", "m2", "m3"])
    # another dispatcher got m2 at the new service before this handle restored
    new.table.open("handle-b")
    assert new.table.claim("handle-b", "Q", ["m2"]) == ["m2"]
    sent = time.monotonic()
    assert h.seen({"epoch": "e2"}, new, sent)  # type: ignore[arg-type]
    assert new.calls == ["restore"]
    takeover = h.taken_over()
    assert takeover is not None
    assert takeover[1] == {"m1", "m3"}, "m2 is the other dispatcher's now"
    assert h.taken_over() is None, "a takeover is reported once"
    assert h.current(0.2)
    # a late answer of the old service: its grants are void, and it restores nothing again
    assert not h.seen({"epoch": "e1"}, old, time.monotonic())  # type: ignore[arg-type]
    assert new.calls == ["restore"]
    # a second restore to the same service (a retry) keeps what the handle holds
    assert new.table.restore("handle-a", "Q", ["m1"], [0]) == ["m1"]


def test_a_restore_that_fails_is_tried_again_at_the_next_answer() -> None:
    h = held()
    old = TableService("e1")
    h.seen({"epoch": "e1"}, old, time.monotonic())  # type: ignore[arg-type]
    h.claimed(["m1"])

    class Down:
        def call(self, op: str, **fields: Any) -> dict[str, Any]:
            raise TimeoutError("nothing answered")

    try:
        h.seen({"epoch": "e2"}, Down(), time.monotonic())  # type: ignore[arg-type]
    except TimeoutError:
        pass
    assert h.taken_over() is None
    new = TableService("e2")
    assert h.seen({"epoch": "e2"}, new, time.monotonic())  # type: ignore[arg-type]
    takeover = h.taken_over()
    assert takeover is not None and takeover[1] == {"m1"}
