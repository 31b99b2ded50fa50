"""Transaction synchronizations: how a feature hears of a context's commits and rollbacks.

A feature that does work in a context's transaction (pyjms.browse tells the mark service of
messages got by token) registers a :class:`TransactionSynchronization` with
``JMSContext.add_synchronization``; the context calls it after each commit and rollback of
its transaction and once when it closes. The context holds no feature state of its own.
A synchronization that raises is logged and does not stop the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyjms.api.context import JMSContext


class TransactionSynchronization:
    """Hooks on one context's transactions; override what you need."""

    def after_commit(self, context: JMSContext) -> None:
        """The transaction committed."""

    def after_rollback(self, context: JMSContext) -> None:
        """The transaction rolled back (rollback(), or a commit that failed and rolled back)."""

    def on_close(self, context: JMSContext) -> None:
        """The context closed: its session is gone (a transacted one's uncommitted work rolled
        back), its connection may be too. Called once, after which the context drops it."""
