"""The dead-letter queue handler: IBM MQ's runmqdlq over JMS (spec 004, checklist Q01-Q11).

This module gets, browses and moves the messages; what becomes of each (its rule, its target,
its retry count) is decided by pyjms.dlq.decisions, and the totals are pyjms.dlq.stats's.

A handler makes passes over the DLQ. Each pass gets the dead letters one by one through a
transacted consumer on the DLQ, as a plain JMS move loop would: for each message that carries a
dead-letter header (Q05) it finds the first rule that matches it and whose retry count for that
message is not used up (Q01-Q03), and carries out the action in the transaction that got the
message: the put to its target and the get, committed together, or rolled back when the put
fails. So nothing is lost or duplicated, and several handlers (or any other reader) can share
the DLQ (Q10, Q11): the provider gives each message to one consumer at a time, and a handler's
consumer is sent only a few messages ahead (_PREFETCH), so instances share the queue's work.

A message the handler must leave where it is (no header, IGNORE, a failed attempt waiting for
RETRYINT; Q04) is rolled back and, from then on, kept out of the handler's consumer by its
selector (``NOT JMSMessageID IN (...)``); a retry that comes due is let in again. When a
consumer got such a message, the next pass browses the queue first and finds the other
messages to leave, so that each costs a look rather than a rolled-back get. A pass whose
consumer finds nothing more browses the queue to see what is still there: what it remembers
about messages gone from the DLQ is forgotten, and messages it has not left but did not get
(another reader holds them, or the broker is slow to dispatch) are looked for again.

RETRY puts the message back on the header's DestQ without the header; FWD puts it on FWDQ
(``&DESTQ``/``&REPLYQ`` resolved), without the header when HEADER(NO). Both put the message
unchanged otherwise (pyjms.dlq.forward, Q08). A target queue manager other than this one
(FWDQM, DestQMgr) is reached the IBM way: through the transmission queue of that name
(or as ``transmission_queues`` maps it), with the target queue and queue manager in
``JMS_PYJMS_XQH_RemoteQName``/``JMS_PYJMS_XQH_RemoteQMgrName``, as IBM's MQXQH carries them.

JMS has no alternate put authority: every put is made with the handler's connection, so
PUTAUT(CTX) has the effect of PUTAUT(DEF). A target that is the DLQ itself is a failed
attempt (it would come round for ever). Retry counts live in the handler, as in IBM's: a
restarted handler, or another instance, starts them afresh.

A failed attempt is retried on a later pass, RETRYINT seconds later; an exhausted rule
passes the message to the next matching rule at once. WAIT(YES) keeps the handler polling
for new messages, WAIT(NO) ends it when nothing is left to do, WAIT(n) after n idle
seconds; retries still pending always keep it going. Messages without a header are
reported every ``report_interval_s`` and left alone.

A message the handler leaves is got and rolled back once per handler run (a broker that counts
deliveries, such as Artemis with max-delivery-attempts, counts that get). ActiveMQ limits what
a JMS client sees of a deep queue: a browser sees the first 400 messages (maxBrowsePageSize)
and a selector reaches only messages the broker has paged in (maxPageSize, 200). Messages the
handler leaves (no header, IGNORE) stay at the head of the DLQ; if more than about 200 pile up
there, the handler cannot reach those behind them and says so. Raise both limits in the
broker's policy for the DLQ, or clear it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, cast

from pyjms.api.bulk import MessageReceiver
from pyjms.api.constants import SESSION_TRANSACTED
from pyjms.api.destination import Queue
from pyjms.api.duplicates import duplicate_id_of
from pyjms.api.message import Message
from pyjms.bridge import jvm
from pyjms.bridge.contract import DUPLICATE_ID, XQH_REMOTE_Q, XQH_REMOTE_Q_MGR
from pyjms.dlq.decisions import Decisions, Move
from pyjms.dlq.forward import handler_factory, put_unchanged
from pyjms.dlq.header import HEADER_PROPERTIES
from pyjms.dlq.rules import Action, RulesTable
from pyjms.dlq.stats import HandlerStats
from pyjms.errors import InvalidArgumentRuntimeException, JMSRuntimeException

if TYPE_CHECKING:
    from pyjms.api.context import JMSContext
    from pyjms.api.factory import ConnectionFactory
    from pyjms.api.producer import JMSProducer

_log = logging.getLogger("pyjms.dlq")
#: the PutApplName of what the handler quarantines
PUT_APPL_NAME = "pyjms dlq handler"

#: ActiveMQ's default DLQ, the default provider's (ProviderPlugin.dead_letter_queue); kept
#: under this name for programs that use it
DEFAULT_DLQ = "ActiveMQ.DLQ"

# The handler's consumer is sent at most this many messages ahead: enough to keep it busy, and
# few enough that other handlers on the DLQ share its messages rather than wait for them.
_PREFETCH = 32
# How long a new consumer waits for its first message, then for each next one; a consumer
# that waits in vain ends the pass, which then browses for what it did not get.
_FIRST_WAIT_MS = 1000
_NEXT_WAIT_MS = 100
# When messages were out of reach, the next pass comes this soon (or after poll_interval_s,
# if sooner): another handler holding them is likely done with them by then.
_UNREACHED_RECHECK_S = 0.1


class DLQHandler:
    """Processes a dead-letter queue by a rules table, as IBM MQ's runmqdlq does.

    ``connection`` is a ConnectionFactory or a URL (None: PYJMS_URL or the embedded broker).
    ``queue`` defaults to the table's INPUTQ, then the provider's dead-letter queue
    (ProviderPlugin.dead_letter_queue: ActiveMQ.DLQ on ActiveMQ); ``queue_manager`` (this
    broker's name for DESTQM/FWDQM/REPLYQM) to INPUTQM, then ''. ``retry_interval_s`` and
    ``wait`` override RETRYINT and WAIT. A table with errors raises RulesTableError here,
    before anything starts (Q07). Call run() (it returns when WAIT says so or after stop()).
    """

    def __init__(
        self,
        connection: ConnectionFactory | str | None,
        queue: str | None,
        rules: RulesTable | str,
        queue_manager: str | None = None,
        *,
        retry_interval_s: float | None = None,
        wait: bool | int | None = None,
        poll_interval_s: float = 1.0,
        report_interval_s: float = 60.0,
        transmission_queues: Mapping[str, str] | None = None,
        progress: Callable[[HandlerStats], None] | None = None,
    ) -> None:
        self.table = rules if isinstance(rules, RulesTable) else RulesTable.parse(rules)
        control = self.table.control
        self._factory = handler_factory(connection)
        default_queue = self._factory.provider.dead_letter_queue
        if not (queue or control.input_q or default_queue):
            raise InvalidArgumentRuntimeException(
                f"no dead-letter queue to process: name one (queue=..., INPUTQ in the table); "
                f"{self._factory.provider.name} has no default"
            )
        self.queue = cast(str, queue or control.input_q or default_queue)  # one is set: checked above
        self.queue_manager = (queue_manager if queue_manager is not None else control.input_qm) or ""
        self.retry_interval_s = float(
            control.retry_interval_s if retry_interval_s is None else retry_interval_s
        )
        self.wait: bool | int = control.wait if wait is None else wait
        self.poll_interval_s = poll_interval_s
        self.report_interval_s = report_interval_s
        self.transmission_queues = dict(transmission_queues or {})
        self.stats = HandlerStats()
        self._decisions = Decisions(
            self.table,
            self.queue,
            self.queue_manager,
            provider=self._factory.provider,
            retry_interval_s=self.retry_interval_s,
            report_interval_s=report_interval_s,
            transmission_queues=self.transmission_queues,
            stats=self.stats,
        )
        self._progress = progress
        self._stop = threading.Event()
        # the quarantine count of the move session at its last commit or rollback
        self._quarantined_before = 0
        # the last drain got a message to leave: the next pass browses for others first
        self._got_one_to_leave = False
        self._move_ctx: JMSContext  # made by run()
        self._producer: JMSProducer  # the move context's

    def __repr__(self) -> str:
        return (
            f"DLQHandler(queue={self.queue!r}, queue_manager={self.queue_manager!r}, rules={len(self.table)})"
        )

    # ------------------------------------------------------------------ running

    def stop(self) -> None:
        """Asks run() to return after the move in progress (from any thread or a signal handler)."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def run(self) -> HandlerStats:
        """Passes over the DLQ until WAIT says stop or stop() is called; returns the totals."""
        with _attached(), self._factory.create_context() as browse_ctx:
            # moves on a connection of their own, which a failed commit makes the handler renew
            self._move_ctx = self._new_move_ctx()
            try:
                self._passes(browse_ctx)
            finally:
                self._move_ctx.close()
        return self.stats

    def _passes(self, browse_ctx: JMSContext) -> None:
        dlq = browse_ctx.create_queue(self.queue)
        idle_since: float | None = None
        while not self.stopping:
            changed, again = self._pass(browse_ctx, dlq)
            if changed:
                idle_since = None
            if again:
                continue  # a message to leave was got, or a retry came due: at once
            now = time.monotonic()
            next_retry = self._decisions.next_retry()
            unreached = self._decisions.unreached()
            wait_s = None if isinstance(self.wait, bool) else float(self.wait)  # WAIT(nnn)
            if next_retry is None and not unreached:  # nothing pending: WAIT decides
                if self.wait is False:
                    break
                idle_since = now if idle_since is None else idle_since
                if wait_s is not None and now - idle_since >= wait_s:
                    break
            wake = now + (
                min(self.poll_interval_s, _UNREACHED_RECHECK_S) if unreached else self.poll_interval_s
            )
            if next_retry is not None and next_retry > now:
                wake = min(wake, next_retry)
            if wait_s is not None and idle_since is not None:
                wake = min(wake, idle_since + wait_s)
            self._stop.wait(max(0.0, wake - now))

    def _pass(self, browse_ctx: JMSContext, dlq: Queue) -> tuple[bool, bool]:
        """One pass over the DLQ: (anything done or left?, look again at once?)."""
        self.stats.passes += 1
        changed = False
        if self._got_one_to_leave:  # others like it may follow: find them by a browse first
            changed, _ = self._look(browse_ctx, dlq, count_unreached=False)
        drained, again = self._drain(browse_ctx, dlq)
        changed |= drained
        if drained:  # the consumer got some: the others were not reached yet, not out of reach
            self._decisions.reached()
        if not again and not self.stopping:
            left, unreached = self._look(browse_ctx, dlq, count_unreached=not drained)
            changed |= left
            # a consumer that got some, then waited in vain, was slow to be sent more (or
            # another handler holds the rest): a new one at once
            again = drained and unreached
        self._decisions.report_without_header()
        if self._progress is not None:
            self._progress(self.stats)
        return changed, again

    # ------------------------------------------------------------------ getting and moving

    def _drain(self, browse_ctx: JMSContext, dlq: Queue) -> tuple[bool, bool]:
        """Gets and handles messages until none comes; (any handled?, ended early: look
        again at once?). It ends early when it must leave a message it got (rolled back: the
        provider would hand it straight back to this consumer) and when a retry comes due."""
        self._got_one_to_leave = False
        now = time.monotonic()
        held, next_due = self._decisions.held(now)
        receiver = MessageReceiver(self._move_ctx, dlq, _excluding(held), _PREFETCH)
        changed = False
        wait_ms = min(_FIRST_WAIT_MS, max(1, int(self.poll_interval_s * 1000)))  # polls no slower
        try:
            while not self.stopping:
                if next_due is not None:
                    to_due_ms = int((next_due - time.monotonic()) * 1000)
                    if to_due_ms <= 0:
                        return changed, True  # let the message whose retry is due in
                    wait_ms = min(wait_ms, to_due_ms)
                message = receiver.receive(wait_ms)
                wait_ms = _NEXT_WAIT_MS
                if message is None:
                    if next_due is not None and time.monotonic() >= next_due:
                        return changed, True
                    # what the receive skipped (poison quarantined, messages expired) goes for good
                    self._commit_skipped()
                    return changed, False
                changed = True
                if not self._handle(browse_ctx, message):
                    self._got_one_to_leave = True
                    return True, True
            return changed, False
        finally:
            with contextlib.suppress(JMSRuntimeException):
                receiver.close()

    def _handle(self, browse_ctx: JMSContext, message: Message) -> bool:
        """Decides and carries out what becomes of a message got in the move transaction; True
        if that transaction was committed, False if it was rolled back (the message stays)."""
        message_id = message.get_jms_message_id() or ""
        decisions = self._decisions
        if decisions.is_resend(message):
            # a resent copy of a dead letter the rules handle (or handled): retried or
            # forwarded, it would arrive twice
            if not self._commit_get("a resent copy of a dead letter"):
                return False
            self.stats.resends_dropped += 1
            _log.info("%s on %s: a resent copy of a dead letter, removed", message_id, self.queue)
            return True
        if decisions.waiting(message_id, time.monotonic()):
            return self._leave_got()  # left since this consumer was made (by a browse)
        if decisions.details_unread(message):
            return self._leave_got()  # the next pass's browse reads them, then it is got again
        header = decisions.header(browse_ctx, message)
        if header is None:
            decisions.headerless(message_id)
            return self._leave_got()
        if browse_ctx.provider.duplicate_dead_letter(message) is not None:
            # a copy of a message delivered already: no rule applies
            if not self._commit_get("a copy of a message delivered already"):
                return False
            self.stats.duplicates += 1
            self.stats.discarded += 1
            _log.info("%s on %s: a copy of a message delivered already, removed", message_id, self.queue)
            return True
        move = decisions.decide(message, header)
        if move is None:  # IGNORE applied, or the attempt failed before the put
            return self._leave_got()
        return self._attempt(self._move_ctx, message, move)

    def _leave_got(self) -> bool:
        """Rolls back the get of a message the handler leaves on the DLQ; False."""
        try:
            self._move_ctx.rollback()
        except JMSRuntimeException:
            self._reconnect()
        self._quarantined_before = self._move_ctx.channel.quarantined_count()  # undone: not counted
        return False

    def _commit_get(self, what: str) -> bool:
        """Commits a get with no put (a copy removed); False if the commit failed."""
        try:
            self._move_ctx.commit()
        except JMSRuntimeException as e:
            with contextlib.suppress(JMSRuntimeException):
                self._move_ctx.rollback()
            self._reconnect()
            _log.warning("%s on %s could not be removed (again on the next pass): %s", what, self.queue, e)
            return False
        self._count_quarantined()
        return True

    def _commit_skipped(self) -> None:
        """Commits what the consumer took without handing it over (poison it quarantined,
        expired messages), when a receive comes back empty."""
        if self._move_ctx.channel.quarantined_count() == self._quarantined_before:
            return  # nothing quarantined; an expired message may wait for the next commit
        self._commit_get("poison quarantined")

    def _count_quarantined(self) -> None:
        """After a commit: the poison quarantined in it (org.pyjms.shim.Poison) is final."""
        count = self._move_ctx.channel.quarantined_at_commit  # the commit brought it back
        self.stats.quarantined += count - self._quarantined_before
        self._quarantined_before = count

    # ------------------------------------------------------------------ looking

    def _look(self, browse_ctx: JMSContext, dlq: Queue, *, count_unreached: bool) -> tuple[bool, bool]:
        """Browses the DLQ: finds messages to leave before a get would (no header, IGNORE, an
        attempt that fails before any put) and forgets messages gone. (Any message newly left?,
        any the handler neither left nor got?); with count_unreached, after a consumer that
        got nothing, those count as out of reach for a pass."""
        now = time.monotonic()
        decisions = self._decisions
        changed = False
        seen: set[str] = set()
        unreached: list[str] = []
        with browse_ctx.create_browser(dlq) as browser:
            for message in browser:
                if self.stopping:
                    return changed, False
                message_id = message.get_jms_message_id() or ""
                seen.add(message_id)
                if message_id in decisions.without_header:
                    continue
                decisions.seen_in_browse(message_id)
                if decisions.waiting(message_id, now):
                    continue
                if decisions.is_resend(message):
                    pass  # the drain removes it
                else:
                    header = decisions.header(browse_ctx, message)
                    if header is None:
                        decisions.headerless(message_id)
                        changed = True
                        continue
                    if browse_ctx.provider.duplicate_dead_letter(message) is None:
                        if decisions.decide(message, header) is None:
                            changed = True  # IGNORE applied, or an attempt failed before any get
                            continue
                unreached.append(message_id)
            unreached += browser.skipped_poison()  # poison no consumer got to quarantine
        if count_unreached:
            decisions.unreachable(unreached)
        # a browse that shows fewer messages than the provider's browser shows at most (ActiveMQ's
        # maxBrowsePageSize) saw the whole queue, except messages on their way to a consumer (a
        # rolled-back get, another reader's)
        browse_limit = self._factory.provider.browse_limit
        if browse_limit is None or len(seen) < browse_limit:
            decisions.forget_gone(seen)
        return changed, bool(unreached)

    def _attempt(self, move_ctx: JMSContext, message: Message, move: Move) -> bool:
        """The get (already made) and the put, as one transaction (Q08: unchanged, all context)."""
        self._decisions.attempting(move)
        committing = False
        try:
            if move.target is not None:
                strip = HEADER_PROPERTIES if move.rule.action is Action.RETRY or not move.rule.header else ()
                add = dict(move.add)
                if duplicate_id_of(message) is not None:
                    # the put is a new message: under the dead letter's own id, so that the
                    # broker or a receiver does not take it for a resend of the message that
                    # was dead-lettered (it was, say, on the same queue before)
                    add[DUPLICATE_ID] = f"pyjms-dlq:{move.message_id}"
                # the copy's new id is never read: the shim need not send it back
                put_unchanged(
                    move_ctx,
                    move.target,
                    message,
                    strip=strip,
                    add=add,
                    producer=self._producer,
                    sent_headers=False,
                )
            committing = True
            move_ctx.commit()
        except JMSRuntimeException as e:
            with contextlib.suppress(JMSRuntimeException):  # a failed commit has rolled back already
                move_ctx.rollback()
            if committing:
                self._reconnect()
            self._quarantined_before = self._move_ctx.channel.quarantined_count()  # undone: not counted
            self._decisions.failed(move.message_id, move.index, move.rule, e, counted=True)
            return False
        self._count_quarantined()
        self._decisions.done(move)
        return True

    def _reconnect(self) -> None:
        """A new move connection: ActiveMQ withholds a message got in a transaction whose
        commit failed until the connection closes (pyjms.providers.activemq)."""
        with contextlib.suppress(JMSRuntimeException):
            self._move_ctx.close()
        self._move_ctx = self._new_move_ctx()
        self._quarantined_before = 0

    def _new_move_ctx(self) -> JMSContext:
        """A transacted context for moves; poison it gets goes back on the handler's DLQ, with
        a header naming what is malformed, for the rules (org.pyjms.shim.Poison)."""
        ctx = self._factory.create_context(SESSION_TRANSACTED)
        ctx.channel.set_dead_letter_queue(self._decisions.dlq.key, PUT_APPL_NAME)
        self._producer = ctx.create_producer()  # one for every put (forward sets all it sends with)
        return ctx


def _excluding(message_ids: list[str]) -> str | None:
    """A selector for every message but these (None: every message)."""
    if not message_ids:
        return None
    quoted = ",".join("'" + message_id.replace("'", "''") + "'" for message_id in message_ids)
    return f"NOT (JMSMessageID IN ({quoted}))"


@contextlib.contextmanager
def _attached() -> Iterator[None]:
    """A handler run on a thread of its own attaches it to the JVM as a daemon, and detaches."""
    if threading.current_thread() is threading.main_thread():
        yield
    else:
        with jvm.java_thread():
            yield


__all__ = ["DLQHandler", "HandlerStats", "DEFAULT_DLQ", "XQH_REMOTE_Q", "XQH_REMOTE_Q_MGR"]
