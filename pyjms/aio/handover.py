"""AUTO_ACKNOWLEDGE and DUPS_OK_ACKNOWLEDGE for asyncio: a message is acknowledged when it
reaches its caller, so a receive cancelled after it took a message loses nothing, even if its
consumer is closed before it receives again.

The worker runs the receive, but only the event loop knows whether the caller is still there to
get the message. So a pyjms.aio context in these modes runs on a CLIENT_ACKNOWLEDGE session:

* a message handed to its caller is acknowledged, on the worker, before the next take;
* a message whose caller was cancelled meanwhile is kept, unacknowledged, by its consumer for
  the next receive (pyjms.aio.consumer), which hands it over and acknowledges it then;
* a consumer closed while it keeps messages has the session recover first: the provider
  delivers them again (JMSRedelivered set) to another consumer of the queue.

A session's acknowledgement covers every message it consumed, so it must never run while a
message is in flight to the loop or kept by a consumer: one take is in flight per context at a
time, and while one consumer keeps a message the others' takes wait. If they wait longer than
KEPT_PATIENCE_S (the keeper does not come back for it), the session recovers, handing the kept
message back to the provider, and the takes go on.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

from pyjms.aio.worker import Worker
from pyjms.api.constants import AUTO_ACKNOWLEDGE, CLIENT_ACKNOWLEDGE, DUPS_OK_ACKNOWLEDGE
from pyjms.api.consumer import JMSConsumer as SyncConsumer
from pyjms.api.context import JMSContext as SyncContext
from pyjms.errors import JMSRuntimeException

#: the session modes whose acknowledgements pyjms.aio makes itself
MODES = (AUTO_ACKNOWLEDGE, DUPS_OK_ACKNOWLEDGE)

#: how long a receive step waits on the worker for the loop to settle the last take, before
#: it lets the jobs queued behind it run
SETTLE_WAIT_S = 0.005
#: how long other consumers' takes wait for a consumer that keeps a message to receive it
KEPT_PATIENCE_S = 1.0
#: how long a recovery waits for each message handed over since the last acknowledgement to
#: come back, to take it again (see HandOver.recover_now)
RETAKE_MS = 3000


def session_mode_for(mode: int) -> int:
    """The synchronous session mode a pyjms.aio context in ``mode`` runs on (a bad mode is
    passed on unchanged, for the synchronous API to refuse)."""
    return CLIENT_ACKNOWLEDGE if not isinstance(mode, bool) and mode in MODES else mode


class HandOver:
    """The acknowledgements one AUTO/DUPS_OK context owes. ``may_take``, ``taken`` and
    ``before_step`` run on the context's worker; ``handed_over``, ``kept`` and ``recover_soon``
    on the event loop.

    ``keeps(besides)`` tells whether a consumer of the context keeps a message (from a
    cancelled receive, of the current recovery epoch) anywhere but in ``besides``, the store the
    asking receive serves first; ``recovered`` is called after each recovery."""

    def __init__(
        self,
        sync: SyncContext,
        worker: Worker,
        keeps: Callable[[object | None], bool],
        recovered: Callable[[], None],
    ) -> None:
        self._sync = sync
        self._worker = worker
        self._keeps = keeps
        self._recovered = recovered
        self._settled = threading.Event()  # clear while a take is in flight to the loop
        self._settled.set()
        self._ack_owed = False
        self._recover_owed = False
        self._waiting_since: float | None = None  # takes wait for a keeper since then
        self._nudged = False  # a job that settles what is owed is queued
        self._nudge_soon = False  # a look at whether to queue one is due on the loop
        # the messages handed over since the last acknowledgement, in order: each hand-over's
        # consumer and messages (one entry a hand-over, not a message: a batch costs no more)
        self._handed: list[tuple[SyncConsumer, tuple[Any, ...]]] = []
        # acknowledge a batch at once, on the worker, not before the next take (the broker
        # counts what is unacknowledged against what it sends: ProviderPlugin)
        self._prompt = sync.provider.dispatches_on_acknowledgement
        worker.before_step = self.before_step

    # ------------------------------------------------------------------ on the worker

    def may_take(self, besides: object) -> bool:
        """Whether a receive that serves ``besides`` first may take a message now. If not, its
        step returns AGAIN (after a wait of at most SETTLE_WAIT_S)."""
        if not self._settled.wait(SETTLE_WAIT_S):
            return False
        if self._keeps(besides):
            now = time.monotonic()
            if self._waiting_since is None:
                self._waiting_since = now
            if now - self._waiting_since < KEPT_PATIENCE_S:
                time.sleep(SETTLE_WAIT_S)
                return False
            self._recover_owed = True  # the keeper did not come back: hand its message back
        self._waiting_since = None
        # what the hand-over that opened the gate owes is settled before this take (the gate
        # may have opened after this step's own before_step ran)
        self.before_step()
        return True

    def taken(self) -> None:
        """A receive step took a message (or a batch) for the loop to hand over."""
        self._settled.clear()

    def before_step(self) -> None:
        """Settles what is owed, never while a take is in flight: a recovery (which hands back
        everything unacknowledged, so nothing handed over may still owe its acknowledgement
        then: the gate sees to it), then an acknowledgement, unless a consumer keeps a message
        it would cover."""
        if not self._settled.is_set():
            return
        if self._recover_owed:
            self._recover_owed = False
            self.recover_now()
        if self._ack_owed and not self._keeps(None):
            self._ack_owed = False
            self._handed = []  # covered by this acknowledgement (one handed meanwhile is too)
            self._sync.acknowledge()

    def recovered_what_is_kept(self) -> bool:
        """For a closing consumer's close step: whether the recovery it asked for has run (it
        waits for a take in flight to settle first)."""
        if self._recover_owed and self._settled.wait(SETTLE_WAIT_S):
            self.before_step()
        return not self._recover_owed

    def recover_now(self) -> None:
        """Hands back everything unacknowledged (also for a receive_body that took a message
        it could not convert: it is left for redelivery, as the synchronous API does in
        AUTO/DUPS_OK).

        A recovery also hands back the messages handed over to callers since the last
        acknowledgement (those taken together with messages a consumer still keeps, which the
        acknowledgement waits for). Each is taken again, in order, from the consumer that
        handed it over, and acknowledged, so no caller gets it twice; if one does not come back
        as it went (another consumer got it first), the session recovers again, and what was
        handed over is redelivered, marked JMSRedelivered: nothing is lost (so too when that
        consumer has closed since)."""
        handed, self._handed = self._handed, []
        self._sync.recover()
        self._recovered()
        for consumer, message in ((c, m) for c, messages in handed for m in messages):
            try:
                again = consumer.receive(RETAKE_MS)
            except JMSRuntimeException:  # that consumer closed meanwhile: its messages went back
                again = None
            if again is None or again.get_jms_message_id() != message.get_jms_message_id():
                self._sync.recover()
                self._recovered()
                return
        if handed:
            self._ack_owed = True
            if not self._keeps(None):
                self._ack_owed = False
                self._sync.acknowledge()

    def _settle_owed(self) -> None:
        self._nudged = False  # before looking: what the loop owes from now on nudges again
        self.before_step()

    # ------------------------------------------------------------------ on the loop

    def handed_over(
        self, consumer: SyncConsumer | None = None, messages: list[Any] | None = None, batch: bool = False
    ) -> None:
        """A caller has the message(s) of the last take, or kept ones (``messages``, from
        ``consumer``; ``batch``: a receive_batch's). Their acknowledgement waits while a
        consumer keeps messages (taken with them), so the worker is nudged only when none
        does."""
        if consumer is not None and messages:
            self._handed.append((consumer, tuple(messages)))
        self._ack_owed = True
        if not self._settled.is_set():  # (a receive served from what is kept finds it set)
            self._settled.set()
        if self._keeps(None):
            return
        if self._prompt and batch:
            self._nudge()  # a batch: its caller handles it while the worker acknowledges it
        elif not self._nudge_soon:
            # once the caller's task has yielded: a call it queued by then (its next receive,
            # most often) settles what is owed before its step, with no job of its own
            self._nudge_soon = True
            asyncio.get_running_loop().call_soon(self._nudge_unless_queued)

    def _nudge_unless_queued(self) -> None:
        self._nudge_soon = False
        if not self._worker.backlog():
            self._nudge()

    def kept(self) -> None:
        """The caller of the last take went away: its consumer keeps the message(s)."""
        self._settled.set()

    def recover_soon(self) -> None:
        """A consumer closes while it keeps messages: the provider is to have them back."""
        self._recover_owed = True
        self._nudge()

    def _nudge(self) -> None:
        if not self._nudged:
            self._nudged = True
            try:
                self._worker.submit_detached(self._settle_owed, "acknowledging received messages")
            except RuntimeError:  # the context closed: its session's close hands back the rest
                pass
