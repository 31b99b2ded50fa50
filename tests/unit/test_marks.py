"""The cooperative mark table and the browse options, on a controllable clock (no broker)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pyjms.browse import options as O
from pyjms.browse.marks import LostHandle, MarkTable
from pyjms.errors import InvalidArgumentRuntimeException


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, ms: float) -> None:
        self.now += ms / 1000.0


@pytest.fixture
def clock() -> Clock:
    return Clock()


def table(clock: Clock, interval_ms: int = 5000, lease_ms: int = 10_000) -> MarkTable:
    t = MarkTable(interval_ms=interval_ms, lease_ms=lease_ms, clock=clock)
    t.open("a")
    t.open("b")
    return t


def test_B04_a_mark_for_the_set_keeps_every_other_handle_off(clock: Clock) -> None:
    t = table(clock)
    assert t.claim("a", "Q", ["m1", "m2"]) == ["m1", "m2"]
    assert t.claim("b", "Q", ["m1", "m2", "m3"]) == ["m3"]
    assert t.marked("Q", ["m1", "m2", "m3", "m4"]) == ["m1", "m2", "m3"]
    assert t.claim("b", "OTHER", ["m1"]) == ["m1"], "marks are per queue"


def test_B05_mark_lapses_after_the_interval_in_ms(clock: Clock) -> None:
    t = table(clock, interval_ms=5000)
    t.claim("a", "Q", ["m1"])
    clock.advance(4999)
    assert t.claim("b", "Q", ["m1"]) == []
    clock.advance(1)
    assert t.claim("b", "Q", ["m1"]) == ["m1"], "after MsgMarkBrowseInterval the set may dispatch it again"


def test_B05_interval_minus_one_never_lapses(clock: Clock) -> None:
    t = table(clock, interval_ms=-1)
    t.claim("a", "Q", ["m1"])
    clock.advance(10**9)
    t.renew("a")
    t.renew("b")
    t.sweep()
    assert t.claim("b", "Q", ["m1"]) == []


def test_B05_sweep_frees_lapsed_marks_and_an_interval_change_applies_at_once(clock: Clock) -> None:
    t = table(clock, interval_ms=5000)
    t.claim("a", "Q", ["m1", "m2"])
    clock.advance(1000)
    t.claim("a", "Q", ["m3"])
    t.interval_ms = 1000
    t.sweep()
    assert t.count() == 1 and t.marked("Q", ["m1", "m2", "m3"]) == ["m3"]


def test_B06_closing_a_handle_releases_its_marks_only(clock: Clock) -> None:
    t = table(clock)
    t.claim("a", "Q", ["m1"])
    t.claim("b", "Q", ["m2"])
    assert t.close("a") == 1
    assert t.marked("Q", ["m1", "m2"]) == ["m2"]


def test_B06_a_silent_handle_loses_its_marks_when_its_lease_runs_out(clock: Clock) -> None:
    t = table(clock, interval_ms=-1, lease_ms=3000)
    t.claim("a", "Q", ["m1"])
    clock.advance(2000)
    t.renew("b")
    t.sweep()
    assert t.marked("Q", ["m1"]) == ["m1"]
    clock.advance(1000)
    t.renew("b")
    t.sweep()
    assert t.marked("Q", ["m1"]) == [], "the process that marked it stopped renewing: released"
    with pytest.raises(LostHandle):
        t.claim("a", "Q", ["m2"])


def test_B08_a_backed_out_get_unmarks_whoever_held_it(clock: Clock) -> None:
    t = table(clock, interval_ms=-1)
    t.claim("a", "Q", ["m1", "m2"])
    assert t.unmark("Q", ["m1"], handle=None) == 1
    assert t.unmark("Q", ["m2"], handle="b") == 0, "UNMARK_BROWSE_CO_OP from another handle leaves it"
    assert t.claim("b", "Q", ["m1", "m2"]) == ["m1"]


def test_B07_a_consumed_message_can_never_be_claimed_again(clock: Clock) -> None:
    t = MarkTable(interval_ms=5000, tombstone_ms=60_000, clock=clock)
    t.open("a")
    t.claim("a", "Q", ["m1"])
    t.consumed("Q", ["m1"])
    assert t.count() == 0
    clock.advance(10_000)
    t.renew("a")
    assert t.claim("a", "Q", ["m1"]) == [], "an old browse snapshot cannot dispatch a message already got"
    clock.advance(60_000)
    t.renew("a")
    t.sweep()
    assert t.claim("a", "Q", ["m1"]) == ["m1"], "tombstones are forgotten after tombstone_ms"


def test_B02_BROWSE_HANDLE_and_BROWSE_CO_OP_are_IBMs_combinations() -> None:
    assert O.BROWSE_HANDLE == O.BROWSE_FIRST | O.UNMARKED_BROWSE_MSG | O.MARK_BROWSE_HANDLE == 0x01100010
    assert O.BROWSE_CO_OP == O.BROWSE_FIRST | O.UNMARKED_BROWSE_MSG | O.MARK_BROWSE_CO_OP == 0x01200010


@pytest.mark.parametrize(
    "options, cooperative, rule",
    [
        (O.UNMARKED_BROWSE_MSG, False, "exactly one of BROWSE_FIRST and BROWSE_NEXT"),
        (O.BROWSE_FIRST | O.BROWSE_NEXT, False, "exactly one of BROWSE_FIRST and BROWSE_NEXT"),
        (O.BROWSE_FIRST | O.MARK_BROWSE_HANDLE | O.MARK_BROWSE_CO_OP, True, "exclude each other"),
        (O.BROWSE_CO_OP, False, "needs a browser opened cooperative=True"),
        (O.BROWSE_FIRST | 0x2, False, "unknown or unsupported flags"),
        (True, False, "must be an int"),
    ],
)
def test_bad_option_combinations_are_MQRC_OPTIONS_ERROR(options: int, cooperative: bool, rule: str) -> None:
    with pytest.raises(InvalidArgumentRuntimeException) as e:
        O.check_get_options(options, cooperative)
    assert e.value.reason == 2046 and rule in str(e.value)


@pytest.mark.parametrize("value", [-2, 1_000_000_000, 1.5, "5000", True])
def test_B05_interval_outside_minus_one_to_999999999_is_refused(value: object) -> None:
    with pytest.raises(InvalidArgumentRuntimeException, match="MsgMarkBrowseInterval"):
        O.check_interval(value)
    with pytest.raises(InvalidArgumentRuntimeException):
        MarkTable(interval_ms=value)  # type: ignore[arg-type]


def test_mark_service_requests_answer_as_the_table_says(clock: Clock) -> None:
    from pyjms.browse.service import MarkService

    service = MarkService(factory=None, mark_browse_interval=1000, lease_ms=500)  # type: ignore[arg-type]
    service.table.clock = clock
    assert service.handle({"op": "open", "handle": "a"})["interval_ms"] == 1000
    assert service.handle({"op": "claim", "handle": "a", "queue": "Q", "ids": ["m1"]})["granted"] == ["m1"]
    assert service.handle({"op": "marked", "queue": "Q", "ids": ["m1", "m2"]})["marked"] == ["m1"]
    clock.advance(600)
    service.table.sweep()
    with pytest.raises(LostHandle):  # a handle whose lease ran out is told so
        service.handle({"op": "claim", "handle": "a", "queue": "Q", "ids": ["m2"]})
    assert service.handle({"op": "config", "interval_ms": -1})["interval_ms"] == -1
    with pytest.raises(InvalidArgumentRuntimeException):
        service.handle({"op": "config", "interval_ms": -5})
    with pytest.raises(InvalidArgumentRuntimeException, match="nonsense"):
        service.handle({"op": "nonsense"})
    with pytest.raises(InvalidArgumentRuntimeException, match="lease"):
        MarkService(factory=None, lease_ms=10)  # type: ignore[arg-type]


def test_after_a_takeover_the_grace_runs_from_the_first_request_the_new_service_serves(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mark service that takes over grants no claims while the handles restore their marks,
    for four fifths of a lease (or interval) from the first request it serves. Counted from its
    election, the grace was over before a service that took seconds to open its connection (a
    loaded machine) served anyone: the handles' renewals were answered "lost", they dropped their
    marks, and messages consumed under the old service went to other dispatchers
    (tests/faults/test_mark_takeover.py[amqp])."""
    import pyjms.browse.service as service_module
    from pyjms.browse.service import MarkService

    monkeypatch.setattr(service_module, "time", SimpleNamespace(monotonic=clock))
    service = MarkService(factory=SimpleNamespace(url="fake://"), lease_ms=1500)  # type: ignore[arg-type]
    monkeypatch.setattr(service, "_take_note", lambda: True)  # another service was active before
    monkeypatch.setattr(service, "_serve", lambda stop: None)
    service._elected()
    clock.advance(2000)  # its connection took 2 s to open: the first request comes now
    assert service.handle({"op": "renew", "handles": ["a"]})["lost"] == [], (
        "a handle it does not know yet restores"
    )
    restore = {"op": "restore", "handle": "a", "queue": "Q", "ids": ["m1"], "ages_ms": [100]}
    assert service.handle(restore)["restored"] == ["m1"]
    service.handle({"op": "open", "handle": "b"})
    clock.advance(1100)
    claim = {"op": "claim", "handle": "b", "queue": "Q", "ids": ["m1", "m2"]}
    assert service.handle(claim)["restoring"], "1.1 s after its first request: within the grace (1.2 s)"
    clock.advance(200)
    assert service.handle(claim)["granted"] == ["m2"], "m1 is the handle's that restored it"


def test_B04_claim_some_stops_at_the_limit_and_says_how_far_it_looked(clock: Clock) -> None:
    t = table(clock)
    t.claim("b", "Q", ["m1", "m3"])
    assert t.claim_some("a", "Q", ["m1", "m2", "m3", "m4", "m5", "m6"], 2) == (["m2", "m4"], 4)
    assert t.claim_some("a", "Q", ["m5", "m6"], None) == (["m5", "m6"], 2)
