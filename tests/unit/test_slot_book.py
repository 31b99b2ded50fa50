"""The delay processor's slot book (pyjms.delay.processor_slots): which slots the deliverer
still has to drain while the sorter files new ones."""

from __future__ import annotations

from pyjms.delay.processor_slots import SlotBook


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
