"""A session's local transaction: commit and rollback with their outcomes classified, and the
synchronizations told of each (pyjms.api.synchronization), as Qpid JMS keeps its
JmsLocalTransactionContext apart from its session.

A commit has three outcomes that matter to a caller: committed; rolled back (nothing of it
happened: safe to do again); or in doubt (the connection broke while the commit's answer was on
its way: it may or may not have happened, TransactionInDoubtRuntimeException). The provider
plug-in tells which of its clients' errors mean which (commit_in_doubt,
commit_rejected_duplicate).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from pyjms.api.provider import ProviderPlugin
from pyjms.api.sending import SendPath
from pyjms.api.synchronization import TransactionSynchronization
from pyjms.bridge.channel import Channel
from pyjms.errors import (
    DuplicateRejectedRuntimeException,
    IllegalStateRuntimeException,
    InvalidArgumentRuntimeException,
    JMSRuntimeException,
    TransactionInDoubtRuntimeException,
    TransactionRolledBackRuntimeException,
)
from pyjms.reasons import MQRC

if TYPE_CHECKING:
    from pyjms.api.context import JMSContext

_log = logging.getLogger("pyjms")


class LocalTransaction:
    """The commits and rollbacks of one session (``ctx``), and who is told of them."""

    def __init__(self, ctx: JMSContext, channel: Channel, sends: SendPath, provider: ProviderPlugin) -> None:
        self._ctx = ctx
        self._channel = channel
        self._sends = sends
        self._provider = provider
        self._synchronizations: list[TransactionSynchronization] = []
        self._lock = threading.Lock()

    def commit(self) -> None:
        self._sends.drain()
        provider = self._provider
        # A commit on a connection known to have failed before never left: nothing was committed.
        # Otherwise a commit that fails for a broken connection is in doubt, whatever the error
        # says: ActiveMQ's client, once a written commit has lost its answer, reports the error
        # its consumers' rollback then met ("Cannot send, channel has already failed"), not its own.
        try:
            self._channel.commit()
        except TransactionRolledBackRuntimeException as e:
            self._synchronize("after_rollback")
            if provider.commit_rejected_duplicate(e):
                raise _duplicate_rejected(e) from None
            if provider.commit_in_doubt(e):
                raise _in_doubt(e) from None
            raise
        except IllegalStateRuntimeException as e:
            broke = e.reason == MQRC.CONNECTION_BROKEN or provider.commit_in_doubt(e)
            if not broke or self._channel.lost_before_last_commit():
                raise  # nothing was tried: the context was closed, or its connection had failed
            # Qpid JMS, Artemis: the connection broke while the commit waited for its answer
            self._synchronize("after_rollback")
            raise _in_doubt(e) from None
        except JMSRuntimeException as e:
            if provider.commit_rejected_duplicate(e):
                # Artemis's core client reports this rollback as a plain error: its outcome is known
                self._synchronize("after_rollback")
                raise _duplicate_rejected(e) from None
            self._synchronize("after_rollback")
            if e.reason is not None and e.reason not in _CONNECTION_REASONS:
                # the broker answered, refusing a put of the transaction with IBM MQ's reason (a
                # pyjms broker, at the commit of a put its client did not wait for): rolled back
                raise _refused(e) from None
            if self._channel.lost_before_last_commit():
                raise IllegalStateRuntimeException(
                    f"the commit was not sent, so nothing was committed: {e.message}",
                    error_code=e.error_code,
                    reason=e.reason or MQRC.CONNECTION_BROKEN,
                ) from None
            # the commit was sent and no answer came back: committed or not, nobody can say here
            raise _in_doubt(e) from None
        self._synchronize("after_commit")

    def rollback(self) -> None:
        self._sends.drain()
        self._channel.rollback()
        self._synchronize("after_rollback")

    # ------------------------------------------------------------------ synchronizations

    def add(self, synchronization: TransactionSynchronization) -> None:
        """Tells ``synchronization`` of every commit and rollback from now on, and of the close.
        Adding one twice adds it once."""
        if not isinstance(synchronization, TransactionSynchronization):
            raise InvalidArgumentRuntimeException(
                f"a synchronization must be a pyjms.api.synchronization.TransactionSynchronization, "
                f"got {synchronization!r}"
            )
        with self._lock:
            if synchronization not in self._synchronizations:
                self._synchronizations.append(synchronization)

    def remove(self, synchronization: TransactionSynchronization) -> None:
        with self._lock:
            if synchronization in self._synchronizations:
                self._synchronizations.remove(synchronization)

    def closed(self) -> None:
        """The session closed: each synchronization hears of it once, and is forgotten."""
        with self._lock:
            synchronizations, self._synchronizations = self._synchronizations, []
        for sync in synchronizations:
            self._tell(sync.on_close, "on_close")

    def _synchronize(self, hook: str) -> None:
        for sync in list(self._synchronizations):
            self._tell(getattr(sync, hook), hook)

    def _tell(self, hook: Callable[[JMSContext], None], name: str) -> None:
        try:
            hook(self._ctx)
        except Exception:  # one failing feature must not stop the others, nor the commit's caller
            _log.exception("transaction synchronization %s failed", name)


def _duplicate_rejected(error: JMSRuntimeException) -> DuplicateRejectedRuntimeException:
    return DuplicateRejectedRuntimeException(
        f"the broker rolled the transaction back: it holds a message whose duplicate id was "
        f"committed before: {error}",
        error_code=error.error_code,
    )


#: the reasons an error gives a connection that failed, which leave a commit's outcome unknown
_CONNECTION_REASONS = (MQRC.CONNECTION_BROKEN, MQRC.Q_MGR_NOT_AVAILABLE)


def _refused(error: JMSRuntimeException) -> TransactionRolledBackRuntimeException:
    return TransactionRolledBackRuntimeException(
        f"the broker rolled the transaction back: it refused a put of it: {error}",
        error_code=error.error_code,
        reason=error.reason,
    )


def _in_doubt(error: JMSRuntimeException) -> TransactionInDoubtRuntimeException:
    return TransactionInDoubtRuntimeException(
        f"the commit's outcome is unknown (it may or may not have been committed): {error}",
        reason=MQRC.CALL_INTERRUPTED,
    )
