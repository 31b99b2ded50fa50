"""The dead-letter queue handler: IBM MQ's runmqdlq over JMS (spec 004, checklist Q01-Q11).

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
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from pyjms.api.constants import SESSION_TRANSACTED
from pyjms.api.destination import Destination, Queue, from_key
from pyjms.api.duplicates import DuplicateWindow, duplicate_id_of
from pyjms.api.message import Message, ObjectMessage, StreamMessage
from pyjms.bridge import codec as C
from pyjms.bridge import jvm
from pyjms.bridge.contract import DUPLICATE_ID, XQH_REMOTE_Q, XQH_REMOTE_Q_MGR
from pyjms.dlq.forward import handler_factory, put_unchanged
from pyjms.dlq.header import (
    HEADER_PROPERTIES,
    REASON,
    DeadLetterDetails,
    DeadLetterHeader,
    message_fields,
)
from pyjms.dlq.rules import Action, Rule, RulesTable
from pyjms.errors import (
    InvalidArgumentRuntimeException,
    InvalidDestinationRuntimeException,
    JMSRuntimeException,
    NotSupportedRuntimeException,
)

if TYPE_CHECKING:
    from pyjms.api.context import ConnectionFactory, JMSContext
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
# Passes in a row a message may stay out of reach before the handler warns.
_UNREACHABLE_WARNING = 3
# When messages were out of reach, the next pass comes this soon (or after poll_interval_s,
# if sooner): another handler holding them is likely done with them by then.
_UNREACHED_RECHECK_S = 0.1
# A browse that returns fewer messages than the provider's browse limit (ActiveMQ's
# maxBrowsePageSize; ProviderPlugin.browse_limit) saw the whole queue, except messages on their
# way to a consumer (a rolled-back get, another reader's). What the handler remembers about a
# message goes when that many such browses in a row miss it.
_MISSED_BROWSES = 3
# At most this many targets are kept by name (a DestQ may name any queue).
_TARGETS_KEPT = 1000


@dataclass
class HandlerStats:
    """Totals since the handler started. ``processed`` counts messages whose handling ended
    here: discarded, forwarded, retried to their destination, or left by IGNORE."""

    discarded: int = 0
    forwarded: int = 0
    retried: int = 0
    ignored: int = 0
    failed_attempts: int = 0
    without_header: int = 0
    passes: int = 0
    #: poison: messages whose JMS_PYJMS_* properties are malformed, put back on the DLQ as a
    #: copy without the malformed property and with a dead-letter header naming it (reason
    #: MQRC_FORMAT_ERROR), which the rules then handle as any other dead letter
    quarantined: int = 0
    #: copies of messages delivered already (ActiveMQ's failover consumer dead-letters the
    #: duplicates it suppresses), dropped whatever the rules say; counted in ``discarded`` too
    duplicates: int = 0
    #: resent copies of dead letters (the same duplicate id as one seen before on the DLQ,
    #: another message id: pyjms.api.duplicates) removed without being put anywhere
    resends_dropped: int = 0

    @property
    def processed(self) -> int:
        return self.discarded + self.forwarded + self.retried + self.ignored

    @property
    def errors(self) -> int:
        """Failed attempts plus messages without a dead-letter header."""
        return self.failed_attempts + self.without_header

    def by_action(self) -> dict[str, int]:
        return {
            Action.DISCARD.value: self.discarded,
            Action.FWD.value: self.forwarded,
            Action.RETRY.value: self.retried,
            Action.IGNORE.value: self.ignored,
        }

    def summary(self) -> str:
        actions = ", ".join(f"{name} {count}" for name, count in self.by_action().items())
        poison = f", quarantined {self.quarantined}" if self.quarantined else ""
        duplicates = f", duplicates dropped {self.duplicates}" if self.duplicates else ""
        return (
            f"processed {self.processed} ({actions}), errors {self.errors} "
            f"(failed attempts {self.failed_attempts}, without header {self.without_header}){poison}{duplicates}"
        )


@dataclass
class _Tracked:
    """What the handler remembers about one message while it stays on the DLQ."""

    attempts: dict[int, int] = field(default_factory=dict)  # rule index -> attempts (Q02)
    due: float = 0.0  # monotonic time before which no new attempt is made
    left: bool = False  # IGNORE applied: it stays until the handler restarts (Q04)
    unreachable: int = 0  # passes in a row it was planned but could not be got
    missed: int = 0  # complete browses in a row that did not show it


@dataclass(frozen=True)
class _Move:
    """A decided attempt: rule ``index`` of the table applied to one message."""

    message_id: str
    index: int
    rule: Rule
    header: DeadLetterHeader
    target: Destination | None  # None for DISCARD
    add: Mapping[str, str]  # transmission-header properties for a remote queue manager


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
        self._progress = progress
        self._stop = threading.Event()
        self._tracked: dict[str, _Tracked] = {}
        # the duplicate ids of the dead letters browsed, to recognise a resent copy of one
        self._duplicates = DuplicateWindow()
        self._details: dict[str, DeadLetterDetails] = {}
        # ActiveMQ-dead-lettered entries a read of the details did not cover (read no more)
        self._details_missing: set[str] = set()
        # the quarantine count of the move session at its last commit or rollback
        self._quarantined_before = 0
        # the last drain got a message to leave: the next pass browses for others first
        self._got_one_to_leave = False
        self._without_header: set[str] = set()
        self._reported_at: float | None = None
        # the local targets met so far, by name: each keeps its key as a Java string, which
        # would otherwise be made again for every put
        self._targets: dict[str, Destination] = {}
        self._move_ctx: JMSContext  # made by run()
        self._producer: JMSProducer  # the move context's

    @functools.cached_property
    def _dlq(self) -> Queue:
        return Queue(self.queue)

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
            next_retry = self._next_retry()
            unreached = self._unreached()
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
            for tracked in self._tracked.values():
                tracked.unreachable = 0
        if not again and not self.stopping:
            left, unreached = self._look(browse_ctx, dlq, count_unreached=not drained)
            changed |= left
            # a consumer that got some, then waited in vain, was slow to be sent more (or
            # another handler holds the rest): a new one at once
            again = drained and unreached
        self._report_without_header()
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
        held, next_due = self._held(now)
        channel = self._move_ctx.channel
        what = f"receive from {dlq}"
        receiver = channel.prefetching_consumer(
            channel.java_string(dlq.key), _excluding(held), _PREFETCH, f"create_consumer({dlq})"
        )
        changed = False
        wait_ms = min(_FIRST_WAIT_MS, max(1, int(self.poll_interval_s * 1000)))  # polls no slower
        try:
            while not self.stopping:
                if next_due is not None:
                    to_due_ms = int((next_due - time.monotonic()) * 1000)
                    if to_due_ms <= 0:
                        return changed, True  # let the message whose retry is due in
                    wait_ms = min(wait_ms, to_due_ms)
                raw = receiver.receive(wait_ms, True, what)
                wait_ms = _NEXT_WAIT_MS
                if raw is None:
                    if next_due is not None and time.monotonic() >= next_due:
                        return changed, True
                    # what the receive skipped (poison quarantined, messages expired) goes for good
                    self._commit_skipped()
                    return changed, False
                changed = True
                if not self._handle(browse_ctx, Message.from_record(C.IncomingRecord(raw, 0))):
                    self._got_one_to_leave = True
                    return True, True
            return changed, False
        finally:
            with contextlib.suppress(JMSRuntimeException):
                receiver.close(f"close consumer on {dlq}")

    def _handle(self, browse_ctx: JMSContext, message: Message) -> bool:
        """Decides and carries out what becomes of a message got in the move transaction; True
        if that transaction was committed, False if it was rolled back (the message stays)."""
        message_id = message.get_jms_message_id() or ""
        duplicate_id = duplicate_id_of(message)
        if duplicate_id is not None and self._duplicates.is_resend(self.queue, duplicate_id, message_id):
            # a resent copy of a dead letter the rules handle (or handled): retried or
            # forwarded, it would arrive twice
            if not self._commit_get("a resent copy of a dead letter"):
                return False
            self.stats.resends_dropped += 1
            _log.info("%s on %s: a resent copy of a dead letter, removed", message_id, self.queue)
            return True
        tracked = self._tracked.get(message_id)
        if tracked is not None and (tracked.left or tracked.due > time.monotonic()):
            return self._leave_got()  # left since this consumer was made (by a browse)
        if self._details_unread(message):
            return self._leave_got()  # the next pass's browse reads them, then it is got again
        header = self._header(browse_ctx, message)
        if header is None:
            if message_id not in self._without_header:
                self._without_header.add(message_id)
                self.stats.without_header += 1
            return self._leave_got()
        if browse_ctx.provider.duplicate_dead_letter(message) is not None:
            # a copy of a message delivered already: no rule applies
            if not self._commit_get("a copy of a message delivered already"):
                return False
            self.stats.duplicates += 1
            self.stats.discarded += 1
            _log.info("%s on %s: a copy of a message delivered already, removed", message_id, self.queue)
            return True
        move = self._decide(message, header, tracked or _Tracked())
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

    def _held(self, now: float) -> tuple[list[str], float | None]:
        """The ids the handler leaves on the DLQ for now, and when the first retry comes due."""
        held = list(self._without_header)
        next_due: float | None = None
        for message_id, tracked in self._tracked.items():
            if tracked.left:
                held.append(message_id)
            elif tracked.due > now:
                held.append(message_id)
                next_due = tracked.due if next_due is None else min(next_due, tracked.due)
        return held, next_due

    # ------------------------------------------------------------------ looking

    def _look(self, browse_ctx: JMSContext, dlq: Queue, *, count_unreached: bool) -> tuple[bool, bool]:
        """Browses the DLQ: finds messages to leave before a get would (no header, IGNORE, an
        attempt that fails before any put) and forgets messages gone. (Any message newly left?,
        any the handler neither left nor got?); with count_unreached, after a consumer that
        got nothing, those count as out of reach for a pass."""
        now = time.monotonic()
        changed = False
        seen: set[str] = set()
        unreached: list[str] = []
        with browse_ctx.create_browser(dlq) as browser:
            for message in browser:
                if self.stopping:
                    return changed, False
                message_id = message.get_jms_message_id() or ""
                seen.add(message_id)
                if message_id in self._without_header:
                    continue
                tracked = self._tracked.get(message_id)
                if tracked is not None:
                    tracked.missed = 0
                    if tracked.left or tracked.due > now:
                        continue
                duplicate_id = duplicate_id_of(message)
                if duplicate_id is not None and self._duplicates.is_resend(
                    self.queue, duplicate_id, message_id
                ):
                    pass  # the drain removes it
                else:
                    header = self._header(browse_ctx, message)
                    if header is None:
                        self._without_header.add(message_id)
                        self.stats.without_header += 1
                        changed = True
                        continue
                    if browse_ctx.provider.duplicate_dead_letter(message) is None:
                        if self._decide(message, header, tracked or _Tracked()) is None:
                            changed = True  # IGNORE applied, or an attempt failed before any get
                            continue
                unreached.append(message_id)
            unreached += browser.skipped_poison()  # poison no consumer got to quarantine
        if count_unreached:
            self._unreachable(unreached)
        browse_limit = self._factory.provider.browse_limit
        if (
            browse_limit is None or len(seen) < browse_limit
        ):  # the whole queue was seen: forget messages gone from it
            self._without_header &= seen
            for message_id in self._tracked.keys() - seen:
                tracked = self._tracked[message_id]
                tracked.missed += 1
                if tracked.missed >= _MISSED_BROWSES:
                    del self._tracked[message_id]
                    self._details.pop(message_id, None)
        return changed, bool(unreached)

    def _details_unread(self, message: Message) -> bool:
        """Whether the message is an entry the provider dead-lettered whose details (ActiveMQ's
        original destination) have not been read yet."""
        if message.property_exists(REASON) or not self._factory.provider.dead_lettered_by_broker(message):
            return False
        message_id = message.get_jms_message_id() or ""
        return message_id not in self._details and message_id not in self._details_missing

    def _header(self, browse_ctx: JMSContext, message: Message) -> DeadLetterHeader | None:
        """The message's dead-letter header; None for none. Called on a browsed message, it
        reads the provider's details of a dead-lettered entry first, if need be: a read shows
        only messages on the queue, not one a consumer holds."""
        message_id = message.get_jms_message_id() or ""
        if self._details_unread(message):
            # read again for each new one (each read covers the first 1,000 such entries)
            self._details.update(browse_ctx.provider.dead_letter_details(browse_ctx, self.queue))
            if message_id not in self._details:
                self._details_missing.add(message_id)
        details = self._details.get(message_id)
        try:
            return DeadLetterHeader.from_message(
                message,
                queue_manager=self.queue_manager,
                original_destination=details.original_destination if details else None,
                dead_lettered_ms=details.dead_lettered_ms if details else None,
                provider=self._factory.provider,
            )
        except JMSRuntimeException as e:  # a malformed header counts as none (Q05)
            _log.debug("%s", e)
            return None

    def _decide(self, message: Message, header: DeadLetterHeader, tracked: _Tracked) -> _Move | None:
        """The move to attempt; None when IGNORE applies or the attempt failed already (a
        target that cannot be named, a body pyjms cannot put unchanged)."""
        message_id = message.get_jms_message_id() or ""
        fields = message_fields(message, header, self.queue_manager)
        try:
            found = self.table.first_match(fields)
            while found is not None and tracked.attempts.get(found[0], 0) >= found[1].retry:
                found = self.table.first_match(fields, found[0] + 1)  # that rule is used up (Q03)
        except JMSRuntimeException as e:  # e.g. JMS_IBM_Feedback that is not a number
            self._leave(message_id, tracked, header, f"its fields cannot be matched: {e}")
            return None
        if found is None:
            self._leave(message_id, tracked, header, "no rule matches, or every matching rule failed")
            return None
        if found[1].action is Action.IGNORE:
            self._leave(message_id, tracked, header, f"the rule on line {found[1].line} says IGNORE")
            return None
        index, rule = found
        self._tracked[message_id] = tracked
        try:
            target, add = self._target(rule, header, fields, message)
        except JMSRuntimeException as e:
            self._failed(message_id, index, rule, e)
            return None
        return _Move(message_id, index, rule, header, target, add)

    def _target(
        self, rule: Rule, header: DeadLetterHeader, fields: Mapping[str, object], message: Message
    ) -> tuple[Destination | None, dict[str, str]]:
        if rule.action is Action.DISCARD:
            return None, {}
        if isinstance(message, (ObjectMessage, StreamMessage)):
            raise NotSupportedRuntimeException(
                f"pyjms cannot put a {type(message).__name__} unchanged (it never decodes the body)"
            )
        if rule.action is Action.RETRY:
            queue, queue_manager = header.dest_q, header.dest_q_mgr
            if not queue:
                raise InvalidDestinationRuntimeException("the dead-letter header names no destination queue")
        else:
            queue, queue_manager = rule.forward_target(fields)
        if queue_manager in ("", self.queue_manager):
            target = self._targets.get(queue)
            if target is None:
                target = _destination(queue)
                if len(self._targets) >= _TARGETS_KEPT:
                    self._targets.clear()
                self._targets[queue] = target
            if target == self._dlq:  # it would come round again, for ever
                raise InvalidDestinationRuntimeException(
                    f"the target of the rule on line {rule.line} is the dead-letter queue itself",
                    values={"queue": queue, "line": rule.line},
                )
            return target, {}
        transmission_queue = self.transmission_queues.get(queue_manager, queue_manager)
        return Queue(transmission_queue), {XQH_REMOTE_Q: queue, XQH_REMOTE_Q_MGR: queue_manager}

    def _leave(self, message_id: str, tracked: _Tracked, header: DeadLetterHeader, why: str) -> None:
        tracked.left = True
        self._tracked[message_id] = tracked
        self.stats.ignored += 1
        _log.info("%s stays on %s (%s): %s", message_id, self.queue, header.reason_name, why)

    def _attempt(self, move_ctx: JMSContext, message: Message, move: _Move) -> bool:
        """The get (already made) and the put, as one transaction (Q08: unchanged, all context)."""
        tracked = self._tracked.setdefault(move.message_id, _Tracked())
        tracked.attempts[move.index] = tracked.attempts.get(move.index, 0) + 1  # every attempt counts (Q02)
        tracked.unreachable = 0
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
            self._failed(move.message_id, move.index, move.rule, e, counted=True)
            return False
        self._count_quarantined()
        self._done(move)
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
        ctx.channel.set_dead_letter_queue(self._dlq.key, PUT_APPL_NAME)
        self._producer = ctx.create_producer()  # one for every put (forward sets all it sends with)
        return ctx

    def _done(self, move: _Move) -> None:
        self._tracked.pop(move.message_id, None)
        self._details.pop(move.message_id, None)
        action = move.rule.action
        if action is Action.DISCARD:
            self.stats.discarded += 1
        elif action is Action.FWD:
            self.stats.forwarded += 1
        else:
            self.stats.retried += 1
        if not _log.isEnabledFor(logging.INFO):
            return  # the reason's name is looked up among hundreds: only for a log that is kept
        where = f" to {move.target}" if move.target is not None else ""
        _log.info(
            "%s: %s%s (rule on line %d, %s)",
            move.message_id,
            action.value,
            where,
            move.rule.line,
            move.header.reason_name,
        )

    def _failed(
        self, message_id: str, index: int, rule: Rule, error: JMSRuntimeException, counted: bool = False
    ) -> None:
        tracked = self._tracked.setdefault(message_id, _Tracked())
        if not counted:
            tracked.attempts[index] = tracked.attempts.get(index, 0) + 1
        attempts = tracked.attempts[index]
        self.stats.failed_attempts += 1
        exhausted = attempts >= rule.retry
        # a used-up rule hands the message to the next matching rule at once (Q03)
        tracked.due = time.monotonic() + (0.0 if exhausted else self.retry_interval_s)
        _log.warning(
            "%s: %s by the rule on line %d failed (attempt %d of %d%s): %s",
            message_id,
            rule.action.value,
            rule.line,
            attempts,
            rule.retry,
            "; trying the next matching rule" if exhausted else f"; again in {self.retry_interval_s:g} s",
            error,
        )

    def _unreachable(self, message_ids: list[str]) -> None:
        """Messages the handler did not leave were on the DLQ, yet its consumer got nothing."""
        given_up = []
        for message_id in message_ids:
            tracked = self._tracked.setdefault(message_id, _Tracked())
            tracked.unreachable += 1
            if tracked.unreachable == _UNREACHABLE_WARNING:
                given_up.append(message_id)
        if given_up:
            _log.warning(
                "%d message(s) on %s could not be got for %d passes (%s%s): another reader holds "
                "them, or they are behind more messages than the broker pages in for a selector "
                "(ActiveMQ maxPageSize, 200) and the messages the handler leaves keep them there",
                len(given_up),
                self.queue,
                _UNREACHABLE_WARNING,
                ", ".join(given_up[:3]),
                ", ..." if len(given_up) > 3 else "",
            )

    # ------------------------------------------------------------------ bookkeeping

    def _unreached(self) -> bool:
        """Whether a message the last browse showed was neither left nor got (yet): another
        handler may hold it, or the broker be slow to dispatch it, so it is not given up
        before a few more passes."""
        return any(0 < t.unreachable < _UNREACHABLE_WARNING and not t.missed for t in self._tracked.values())

    def _next_retry(self) -> float | None:
        """When the earliest pending retry is due; None if no retry is pending."""
        due = [t.due for t in self._tracked.values() if not t.left and t.attempts]
        return min(due) if due else None

    def _report_without_header(self) -> None:
        """Messages without a header are reported periodically and left (Q05)."""
        now = time.monotonic()
        if not self._without_header:
            return
        if self._reported_at is not None and now - self._reported_at < self.report_interval_s:
            return
        self._reported_at = now
        ids = sorted(self._without_header)
        shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
        _log.error(
            "%d message(s) on %s have no dead-letter header and stay there: %s", len(ids), self.queue, shown
        )


def _destination(name: str) -> Destination:
    """A target named by a header or rule: a queue name, or a destination key (topic://T)."""
    return from_key(name) if "://" in name else Queue(name)


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
