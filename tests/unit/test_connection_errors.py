"""Connection failures are caught by kind (issue 35): an error whose reason is
MQRC_CONNECTION_BROKEN (2009) or MQRC_Q_MGR_NOT_AVAILABLE (2059) is Python's ConnectionError
and pyjms's ConnectionBroken/BrokerUnavailableRuntimeException, and stays of the class it was
raised as, so that code choosing by class (a commit's outcome) chooses as before."""

from __future__ import annotations

import pickle

import pytest

import pyjms
from pyjms.errors import (
    BrokerUnavailableRuntimeException,
    ConnectionBrokenRuntimeException,
    IllegalStateRuntimeException,
    InvalidArgumentRuntimeException,
    JMSRuntimeException,
    SetupError,
    TransactionRolledBackRuntimeException,
)
from pyjms.reasons import MQRC


def test_the_base_class_with_a_connection_reason_is_the_connection_error() -> None:
    broken = JMSRuntimeException("send: connection reset", reason=MQRC.CONNECTION_BROKEN)
    assert type(broken) is ConnectionBrokenRuntimeException
    assert isinstance(broken, ConnectionError) and isinstance(broken, JMSRuntimeException)
    unavailable = JMSRuntimeException("cannot connect", reason=MQRC.Q_MGR_NOT_AVAILABLE)
    assert type(unavailable) is BrokerUnavailableRuntimeException
    assert isinstance(unavailable, ConnectionError)
    assert str(unavailable) == "cannot connect [MQRC_Q_MGR_NOT_AVAILABLE (2059)]"
    assert unavailable.reason_name == "MQRC_Q_MGR_NOT_AVAILABLE"


def test_a_subclass_with_a_connection_reason_stays_that_subclass() -> None:
    error = IllegalStateRuntimeException("the producer is closed", reason=MQRC.CONNECTION_BROKEN)
    assert isinstance(error, IllegalStateRuntimeException)
    assert isinstance(error, ConnectionBrokenRuntimeException) and isinstance(error, ConnectionError)
    assert type(error).__name__ == "IllegalStateConnectionBrokenRuntimeException"
    rolled_back = TransactionRolledBackRuntimeException("rolled back", reason=MQRC.Q_MGR_NOT_AVAILABLE)
    assert isinstance(rolled_back, TransactionRolledBackRuntimeException)
    assert isinstance(rolled_back, BrokerUnavailableRuntimeException)
    argument = InvalidArgumentRuntimeException("bad", reason=MQRC.CONNECTION_BROKEN)
    assert isinstance(argument, ValueError) and isinstance(argument, ConnectionError)


def _branch(error: JMSRuntimeException) -> str:
    """The except clauses of pyjms.api.transactions.LocalTransaction.commit, in their order."""
    try:
        raise error
    except TransactionRolledBackRuntimeException:
        return "rolled back"
    except IllegalStateRuntimeException:
        return "illegal state"
    except JMSRuntimeException:
        return "other"


@pytest.mark.parametrize("reason", [None, MQRC.CONNECTION_BROKEN, MQRC.Q_MGR_NOT_AVAILABLE])
def test_a_commit_outcome_is_classified_as_before(reason: int | None) -> None:
    assert _branch(TransactionRolledBackRuntimeException("x", reason=reason)) == "rolled back"
    assert _branch(IllegalStateRuntimeException("x", reason=reason)) == "illegal state"
    assert _branch(JMSRuntimeException("x", reason=reason)) == "other"


def test_other_reasons_and_no_reason_leave_the_class_alone() -> None:
    assert type(JMSRuntimeException("x")) is JMSRuntimeException
    assert type(JMSRuntimeException("x", reason=MQRC.NO_MSG_AVAILABLE)) is JMSRuntimeException
    assert not isinstance(IllegalStateRuntimeException("closed"), ConnectionError)


def test_set_up_errors_are_never_connection_errors() -> None:
    """A retry loop that catches ConnectionError never retries a missing Java."""
    error = SetupError("no Java runtime found")
    assert not isinstance(error, ConnectionError) and isinstance(error, JMSRuntimeException)
    assert type(SetupError("jar missing", reason=MQRC.CONNECTION_BROKEN)) is SetupError


def test_made_directly_they_carry_their_reason_and_are_public() -> None:
    assert ConnectionBrokenRuntimeException("lost").reason == MQRC.CONNECTION_BROKEN
    assert BrokerUnavailableRuntimeException("refused").reason == MQRC.Q_MGR_NOT_AVAILABLE
    assert pyjms.ConnectionBrokenRuntimeException is ConnectionBrokenRuntimeException
    assert pyjms.BrokerUnavailableRuntimeException is BrokerUnavailableRuntimeException


def test_they_pickle_as_their_class() -> None:
    error = IllegalStateRuntimeException("closed", reason=MQRC.CONNECTION_BROKEN)
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error) and again.reason == MQRC.CONNECTION_BROKEN
