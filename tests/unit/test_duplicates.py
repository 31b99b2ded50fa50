"""Dropping resent messages where the broker does not (pyjms.api.duplicates): the window of
duplicate ids a process received, and reading a record's duplicate id without decoding it."""

from __future__ import annotations

import pytest

from pyjms import Message, TextMessage
from pyjms.api.duplicates import DuplicateWindow, duplicate_id_of
from pyjms.bridge import codec as C
from pyjms.bridge import contract
from tests.fakes.channel import StoredMessage, encode_record


def test_the_same_duplicate_id_under_another_message_id_is_a_resend() -> None:
    window = DuplicateWindow(10)
    assert not window.is_resend("queue://Q", "order-1", "ID:1")
    assert not window.is_resend("queue://Q", "order-1", "ID:1")  # a redelivery, not a resend
    assert window.is_resend("queue://Q", "order-1", "ID:2")
    assert window.dropped == 1


def test_scopes_are_apart() -> None:
    window = DuplicateWindow(10)
    assert not window.is_resend("queue://A", "k", "ID:1")
    assert not window.is_resend("queue://B", "k", "ID:2")  # another queue: its own message
    assert not window.is_resend(("consumer", 1, "topic://T"), "k", "ID:3")


def test_the_window_forgets_the_oldest_ids_first() -> None:
    window = DuplicateWindow(2)
    for n in range(3):
        window.is_resend("q", f"k{n}", f"ID:{n}")
    assert not window.is_resend("q", "k0", "ID:other")  # forgotten: taken as a first sighting
    assert window.is_resend("q", "k2", "ID:other")


@pytest.mark.parametrize(("raw", "size"), [("", 100_000), ("5", 5), ("0", 1), ("many", 100_000)])
def test_the_window_size_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, raw: str, size: int
) -> None:
    monkeypatch.setenv("PYJMS_DUPLICATE_WINDOW", raw)
    assert DuplicateWindow().size == size


def received(properties: dict[str, tuple[int, object]]) -> Message:
    return Message.from_record(
        C.IncomingRecord(encode_record(StoredMessage(C.KIND_TEXT, "x", properties)), 0)
    )


def test_a_records_duplicate_id_is_read_only_where_it_holds_one() -> None:
    assert duplicate_id_of(received({})) is None
    assert duplicate_id_of(received({"other": (C.T_INT, 1)})) is None
    assert duplicate_id_of(received({contract.DUPLICATE_ID: (C.T_STRING, "k")})) == "k"
    made = TextMessage("x")
    made.set_duplicate_id("mine")
    assert duplicate_id_of(made) == "mine"  # a message made in Python has no record to search
