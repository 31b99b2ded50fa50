"""The delay processor's slot book (pyjms.delay.processor_slots): which slots the deliverer
still has to drain while the sorter files new ones, what each owes, and the slot markers a
restarted processor finds its slots by."""

from __future__ import annotations

import re

import pytest

from pyjms import SESSION_TRANSACTED, ConnectionFactory
from pyjms.api.destination import Queue
from pyjms.api.expiry import now_ms
from pyjms.api.message import BytesMessage, TextMessage
from pyjms.bridge import codec as C
from pyjms.bridge.contract import DEAD_LETTER_QUEUE, DLQ_DETAIL, QUARANTINE_REASON
from pyjms.delay.processor_slots import LEGACY_SLOT_MS, SlotBook, marker_text, parse_marker
from pyjms.dlq import header as dlh
from pyjms.errors import InvalidArgumentRuntimeException
from tests.fakes.channel import FakeBroker


def test_a_slot_filed_again_while_a_later_one_drains_stays_pending():
    """The sorter may make an earlier slot pending again (messages it committed to a slot the
    deliverer had just finished) while the deliverer drains a later one: finishing the later
    slot must take that slot off the book, never the earlier one."""
    book = SlotBook("STAGE", 20)
    book.add(10)
    assert book.first() == [10]  # the deliverer starts draining slot 10
    book.add(7)  # meanwhile the sorter makes slot 7 pending again
    assert book.finish(10, complete=True) == (False, 7)
    assert book.first() == [7]
    assert not book.add(7)  # still pending: not made pending twice
    assert book.finish(7, complete=True) == (False, None)
    assert book.pending() == 0


def test_a_slot_the_sorter_filed_more_to_while_it_drained_is_drained_again():
    book = SlotBook("STAGE", 20)
    book.add(3)
    late = book.record_filed({3: 5}, marked=[3])
    assert late == []
    assert book.record_moved(3, 4)  # one more is owed
    assert book.finish(3, complete=True) is None  # drain it again
    assert book.first() == [3]
    assert not book.record_moved(3, 1)
    assert book.finish(3, complete=True) == (False, None)


def test_slots_and_markers_are_named_per_staging_queue():
    book = SlotBook("STAGE", 20)
    assert book.slot_queue(17) == Queue("PYJMS.SLOT.17.STAGE")
    assert book.slots_queue == Queue("PYJMS.SLOTS.STAGE")
    assert book.marker(17) == "17/20"
    assert parse_marker(book.marker(17)) == (17, 20)  # what it writes it reads back


@pytest.mark.parametrize(
    ("text", "parsed"),
    [("5/10", (5, 10)), ("0/1", (0, 1)), ("123456789/1000", (123456789, 1000)), ("42", (42, LEGACY_SLOT_MS))],
)
def test_a_marker_gives_its_slot_and_length(text, parsed):
    assert parse_marker(text) == parsed


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (None, "not a text message"),
        ("", "two decimal numbers"),
        ("-1/10", "two decimal numbers"),
        ("5/x", "two decimal numbers"),
        ("5/10/2", "two decimal numbers"),
        ("five", "two decimal numbers"),
        ("5/0", "1..1000 ms"),
        ("5/1001", "1..1000 ms"),
    ],
)
def test_a_malformed_marker_is_refused_with_what_it_should_be(text, why):
    with pytest.raises(InvalidArgumentRuntimeException, match=re.escape(why)):
        parse_marker(text)


def test_a_long_malformed_marker_is_shown_cut_short():
    with pytest.raises(InvalidArgumentRuntimeException) as e:
        parse_marker("x" * 500)
    assert "x" * 77 + "..." in str(e.value) and "x" * 78 not in str(e.value)


def test_only_a_text_message_is_a_marker():
    assert marker_text(TextMessage("3/10")) == "3/10"
    assert marker_text(BytesMessage(b"3/10")) is None
    assert marker_text(TextMessage(None)) is None


def test_the_earliest_pending_slots_come_first():
    book = SlotBook("STAGE", 10)
    for slot in (30, 10, 20, 40):
        assert book.add(slot)
    assert not book.add(20)
    assert book.first() == [10]
    assert book.first(3) == [10, 20, 30]
    assert book.unknown([5, 10, 40, 50]) == [5, 50]
    assert book.pending() == 4


def test_a_slot_set_aside_counts_as_pending_but_is_not_first():
    book = SlotBook("STAGE", 10)
    book.add(5, aside=True)
    book.add(8)
    book.add(3, aside=True)
    assert book.first(5) == [8] and book.pending() == 3
    assert book.is_aside(5) and not book.is_aside(8)
    assert book.aside(1) == [5] and book.aside(5) == [5, 3]  # the newest first
    assert book.finish(5, complete=True) == (False, 8)
    assert not book.is_aside(5) and book.pending() == 2


def test_what_a_slot_owes_is_filed_minus_moved():
    book = SlotBook("STAGE", 10)
    assert book.owed(4) is None and not book.was_filed(4)  # found at start-up: count unknown
    assert book.record_moved(4, 3)  # unknown: there may be more
    book.record_filed({4: 5, 6: 1}, marked=[4, 6])
    assert book.was_filed(4) and book.owed(4) == 5 - 3
    assert not book.record_moved(4, 2)
    assert book.owed(4) == 0 and book.owed(6) == 1


def test_the_sorter_learns_which_filed_slots_the_deliverer_finished_meanwhile():
    book = SlotBook("STAGE", 10)
    book.add(1)
    book.add(2)
    assert book.finish(1, complete=False) == (False, 2)
    # slot 1 was finished, slot 2 is pending, slot 3 is marked in this very transaction
    assert book.record_filed({1: 1, 2: 1, 3: 1}, marked=[3]) == [1]


def test_moves_rolled_back_make_a_finished_slot_pending_again():
    book = SlotBook("STAGE", 10)
    book.add(9)
    book.record_filed({9: 2}, marked=[9])
    book.record_moved(9, 2)
    assert book.finish(9, complete=True) == (False, None)
    assert book.pending() == 0
    book.unmove(9, 2)
    assert book.first() == [9] and book.owed(9) == 2


def test_markers_are_compacted_once_drained_slots_outnumber_the_pending_ones():
    book = SlotBook("STAGE", 10)
    results = []
    for slot in range(70):
        book.add(slot)
        results.append(book.finish(slot, complete=False))
    assert book.dead_markers() == 70
    # at most 64 dead markers wait while few slots are pending; the 65th asks for a compaction
    assert [compact for compact, _ in results].index(True) == 64


# ---------------------------------------------------------------------------- markers on the broker


def put_markers(factory: ConnectionFactory, *texts: str) -> None:
    with factory.create_context() as ctx:
        ctx.create_producer().send_batch(Queue("PYJMS.SLOTS.STAGE"), list(texts))


def test_a_restarted_processor_finds_its_slots_by_their_markers(
    broker: FakeBroker, factory: ConnectionFactory
) -> None:
    now_slot = now_ms() // 10
    future, past = now_slot + 1000, now_slot - 1000
    put_markers(factory, f"{future}/10", f"{past}/10", f"{now_slot}/20", "junk")
    book = SlotBook("STAGE", 10)
    with factory.create_context() as ctx:
        assert sorted(book.recover(ctx)) == [past, future]
    assert book.first() == [future]  # a slot that has ended is set aside: the others go first
    assert book.is_aside(past) and book.pending() == 2
    assert book.foreign_queues() == [f"PYJMS.SLOT.{now_slot}.STAGE"]  # another slot length's
    assert book.dead_markers() == 1  # the malformed marker, for the next compaction
    assert len(broker.queue("PYJMS.SLOTS.STAGE")) == 4  # a browse: nothing consumed


def test_recovery_with_the_brokers_queue_list_drops_markers_of_gone_queues_and_finds_lost_ones(
    factory: ConnectionFactory,
) -> None:
    now_slot = now_ms() // 10
    gone, kept, lost, ancient = now_slot + 10, now_slot + 20, now_slot + 30, 5
    put_markers(factory, f"{gone}/10", f"{kept}/10")
    names = [f"PYJMS.SLOT.{n}.STAGE" for n in (kept, lost, ancient)] + ["PYJMS.SLOT.7.OTHER", "ELSEWHERE"]
    book = SlotBook("STAGE", 10)
    with factory.create_context() as ctx:
        found = book.recover(ctx, names, non_empty=lambda queues: queues)
    assert sorted(found) == [kept, lost]  # lost: a slot queue whose marker went missing
    assert book.dead_markers() == 1  # gone's marker
    assert book.foreign_queues() == [f"PYJMS.SLOT.{ancient}.STAGE"]  # decades away under 10 ms


def test_a_compaction_keeps_live_markers_and_dead_letters_malformed_ones(
    broker: FakeBroker, factory: ConnectionFactory
) -> None:
    now_slot = now_ms() // 10
    drained, live, ended = now_slot + 100, now_slot + 200, now_slot - 100
    put_markers(factory, f"{drained}/10", f"{live}/10", f"{ended}/10", "junk")
    book = SlotBook("STAGE", 10)
    with factory.create_context() as ctx:
        book.recover(ctx)
    book.finish(drained, complete=False)
    book.finish(ended, complete=False)
    with factory.create_context(SESSION_TRANSACTED) as ctx:
        book.compact_markers(ctx, keep=set())
    # a slot not ended yet keeps its marker whatever the book says (the sorter may be filing it)
    assert sorted(m.text() for m in broker.queue("PYJMS.SLOTS.STAGE")) == sorted(
        [f"{drained}/10", f"{live}/10"]
    )
    assert book.dead_markers() == 0
    (dead,) = broker.queue(DEAD_LETTER_QUEUE)
    assert dead.text() == "junk" and dead.properties[dlh.REASON] == (C.T_INT, QUARANTINE_REASON)
    assert "junk" in dead.properties[DLQ_DETAIL][1]
