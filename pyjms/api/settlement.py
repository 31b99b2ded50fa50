"""How a JMSContext (pyjms.api.context) settles the messages its session consumed, by its session
mode: commit and rollback in SESSION_TRANSACTED (through the session's LocalTransaction,
pyjms.api.transactions, and the synchronizations it tells), recover in the other modes,
acknowledge in CLIENT_ACKNOWLEDGE and INDIVIDUAL_ACKNOWLEDGE, and what a received message's
acknowledge() calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pyjms.api.constants import CLIENT_ACKNOWLEDGE, INDIVIDUAL_ACKNOWLEDGE, SESSION_MODES, SESSION_TRANSACTED
from pyjms.api.message import Message
from pyjms.api.synchronization import TransactionSynchronization
from pyjms.api.transactions import LocalTransaction
from pyjms.bridge.channel import Channel
from pyjms.errors import IllegalStateRuntimeException


class Settlement:
    """The transaction and acknowledgement methods of jakarta.jms.JMSContext."""

    # set by JMSContext.open_for
    _mode: int
    _channel: Channel
    _transaction: LocalTransaction
    #: INDIVIDUAL_ACKNOWLEDGE: what a received message's acknowledge() does (set_message_acknowledge)
    _message_acknowledge: Callable[[Message], None]

    def _check_open(self) -> None:  # JMSContext's: raises once the context is closed
        raise NotImplementedError

    # ------------------------------------------------------------------ transactions and acks

    def commit(self) -> None:
        """Commits the session's transaction (pyjms.api.transactions: committed, rolled back,
        or in doubt)."""
        self._check_open()
        if self._mode != SESSION_TRANSACTED:
            raise IllegalStateRuntimeException("commit() needs a SESSION_TRANSACTED context")
        self._transaction.commit()

    def rollback(self) -> None:
        self._check_open()
        if self._mode != SESSION_TRANSACTED:
            raise IllegalStateRuntimeException("rollback() needs a SESSION_TRANSACTED context")
        self._transaction.rollback()

    def recover(self) -> None:
        """Redelivers every unacknowledged message (not for transacted contexts)."""
        self._check_open()
        if self._mode == SESSION_TRANSACTED:
            raise IllegalStateRuntimeException("recover() is not allowed on a SESSION_TRANSACTED context")
        self._channel.recover()

    def acknowledge(self) -> None:
        """CLIENT_ACKNOWLEDGE: acknowledges all messages consumed (INDIVIDUAL_ACKNOWLEDGE: all
        consumed and not acknowledged yet); ignored in other modes."""
        self._check_open()
        if self._mode in (CLIENT_ACKNOWLEDGE, INDIVIDUAL_ACKNOWLEDGE):
            self._channel.acknowledge()

    def acknowledge_messages(self, messages: Sequence[Message]) -> None:
        """INDIVIDUAL_ACKNOWLEDGE: acknowledges exactly these messages that the context
        consumed, with one crossing; the others stay unacknowledged (a recovery or the close
        hands them back to the provider). Each is found by its JMSMessageID among the messages
        consumed and not acknowledged yet, oldest first; one acknowledged already, or handed
        back by a recovery since it was received, is passed over."""
        self._check_open()
        if self._mode != INDIVIDUAL_ACKNOWLEDGE:
            raise IllegalStateRuntimeException(
                f"acknowledge_messages needs an INDIVIDUAL_ACKNOWLEDGE context, not session mode "
                f"{self._mode} ({SESSION_MODES[self._mode]})"
            )
        if messages:
            self._channel.acknowledge_messages([m.get_jms_message_id() for m in messages])

    # ------------------------------------------------------------------ synchronizations

    def add_synchronization(self, synchronization: TransactionSynchronization) -> None:
        """Tells ``synchronization`` of every commit and rollback from now on, and of the close
        (pyjms.api.synchronization). Adding one twice adds it once."""
        self._check_open()
        self._transaction.add(synchronization)

    def remove_synchronization(self, synchronization: TransactionSynchronization) -> None:
        self._transaction.remove(synchronization)

    def set_message_acknowledge(self, acknowledge: Callable[[Message], None] | None) -> None:
        """INDIVIDUAL_ACKNOWLEDGE: what a received message's acknowledge() does from now on,
        called with the message on the thread that calls acknowledge() (None: acknowledge that
        message, the default). For a layer that hands messages over itself and keeps JMS's
        CLIENT_ACKNOWLEDGE meaning on such a session: pyjms.aio acknowledges every message it
        handed to a caller so far."""
        self._message_acknowledge = acknowledge or self._acknowledge_one

    def _acknowledge_one(self, message: Message) -> None:
        self.acknowledge_messages((message,))

    def _acker(self) -> Callable[[Message], None] | None:
        """What a received message's acknowledge() calls (JMSContext.acknowledger)."""
        if self._mode == CLIENT_ACKNOWLEDGE:
            return lambda _message: self.acknowledge()
        if self._mode == INDIVIDUAL_ACKNOWLEDGE:
            return lambda message: self._message_acknowledge(message)
        return None
