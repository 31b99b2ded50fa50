"""A cooperative handle's view of its marks across a mark service takeover (HeldMarks), against
MarkTables that stand for the old and the new service (no broker; the takeover tests in
tests/faults/test_mark_takeover.py run the real services)."""

from __future__ import annotations

import time
from typing import Any

from pyjms import ConnectionFactory, JMSConsumer, JMSContext
from pyjms.browse import BROWSE_CO_OP
from pyjms.browse.client import HeldMarks
from pyjms.browse.marks import LostHandle, MarkTable


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


class LeaseLostAtTakeover:
    """A mark service that took over and does not know the handle (it came after the grace):
    the first claim is refused as from a handle whose lease ran out, and meanwhile another
    dispatcher takes the first message (its tombstone went with the old service); then it
    grants what it is offered and did not grant before."""

    def __init__(self, take_first: JMSConsumer) -> None:
        self.take_first = take_first
        self.offered: list[list[str]] = []
        self.taken = ""  # the token of the message the other dispatcher took
        self.granted: set[str] = set()

    def call(self, op: str, **fields: Any) -> dict[str, Any]:
        answer: dict[str, Any] = {"ok": True, "epoch": "e2", "interval_ms": 5000, "lease_ms": 1500}
        if op == "claim":
            self.offered.append(list(fields["ids"]))
            if len(self.offered) == 1:
                taken = self.take_first.receive(1000)
                assert taken is not None
                self.taken = taken.get_message_token()
                raise LostHandle("browse handle is not live: its lease ran out or it was closed")
            granted = [t for t in fields["ids"] if t not in self.granted][: fields["limit"]]
            self.granted.update(granted)
            answer.update(granted=granted, checked=len(fields["ids"]))
        elif op == "restore":
            answer.update(restored=[])
        elif op == "renew":
            answer.update(lost=[])
        return answer

    def notify(self, op: str, **fields: Any) -> None:
        pass

    def close(self) -> None:
        pass


def test_a_handle_that_lost_its_lease_claims_from_a_new_browse_not_its_old_one(
    ctx: JMSContext, factory: ConnectionFactory
) -> None:
    """A handle told its lease ran out opens again and browses afresh before it claims: what it
    browsed before may have been consumed since, and a mark service that took over has no
    tombstone for it (tests/faults/test_mark_takeover.py[amqp] handed such messages out)."""
    queue = ctx.create_queue("Q")
    ctx.create_producer().send_batch(queue, ["m0", "m1", "m2"])
    with factory.create_context() as other:
        service = LeaseLostAtTakeover(other.create_consumer(queue))
        browser = ctx.create_marking_browser(queue, cooperative=True)
        browser._client = service  # type: ignore[assignment]
        browser._interval_ms = browser._held.interval_ms = 5000
        browser._held.lease_ms = 1500
        browser._held.seen({"epoch": "e1"}, service, time.monotonic())  # type: ignore[arg-type]
        handed = []
        while (m := browser.get_or_none(BROWSE_CO_OP, wait_ms=500)) is not None:
            handed.append(m.get_text())
        assert handed == ["m1", "m2"], "m0 was consumed while the handle had lost its lease"
        assert service.taken in service.offered[0]
        assert all(service.taken not in offered for offered in service.offered[1:])
