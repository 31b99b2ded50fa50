"""What the DLQ handler decides for each dead letter, and what it remembers to decide it.

pyjms.dlq.handler gets, browses and moves messages; this module holds no connection of its
own. For a message on the DLQ it reads the dead-letter header (Q05; for an entry the broker
dead-lettered itself, the provider plug-in maps it), finds the first rule of the table that
matches and whose retry count for that message is not used up (Q01-Q03), and names the move:
the rule, and the target the put goes to (RETRY: the header's DestQ; FWD: FWDQ with
``&DESTQ``/``&REPLYQ`` resolved; a target queue manager other than this one through its
transmission queue, with IBM's MQXQH fields as properties). A message it must leave (no
header, IGNORE, a failed attempt waiting for RETRYINT; Q04) it remembers, so that the
handler's consumer selects it no more; what it remembers of a message gone from the DLQ it
forgets. Retry counts live here, as in IBM's handler: a restarted handler starts them afresh.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyjms.api.destination import Destination, Queue, from_key
from pyjms.api.duplicates import DuplicateWindow, duplicate_id_of
from pyjms.api.message import Message, ObjectMessage, StreamMessage
from pyjms.api.provider import ProviderPlugin
from pyjms.bridge.contract import XQH_REMOTE_Q, XQH_REMOTE_Q_MGR
from pyjms.dlq.header import REASON, DeadLetterDetails, DeadLetterHeader, message_fields
from pyjms.dlq.rules import Action, Rule, RulesTable
from pyjms.dlq.stats import HandlerStats
from pyjms.errors import InvalidDestinationRuntimeException, JMSRuntimeException, NotSupportedRuntimeException

if TYPE_CHECKING:
    from pyjms.api.context import JMSContext

_log = logging.getLogger("pyjms.dlq")

#: Passes in a row a message may stay out of reach before the handler warns.
UNREACHABLE_WARNING = 3
# What the handler remembers about a message goes when this many browses in a row that saw
# the whole queue miss it.
_MISSED_BROWSES = 3
# At most this many targets are kept by name (a DestQ may name any queue).
_TARGETS_KEPT = 1000


@dataclass
class Tracked:
    """What the handler remembers about one message while it stays on the DLQ."""

    attempts: dict[int, int] = field(default_factory=dict)  # rule index -> attempts (Q02)
    due: float = 0.0  # monotonic time before which no new attempt is made
    left: bool = False  # IGNORE applied: it stays until the handler restarts (Q04)
    unreachable: int = 0  # passes in a row it was planned but could not be got
    missed: int = 0  # complete browses in a row that did not show it


@dataclass(frozen=True)
class Move:
    """A decided attempt: rule ``index`` of the table applied to one message."""

    message_id: str
    index: int
    rule: Rule
    header: DeadLetterHeader
    target: Destination | None  # None for DISCARD
    add: Mapping[str, str]  # transmission-header properties for a remote queue manager


class Decisions:
    """The handler's decisions on the messages of one DLQ, and its memory of them."""

    def __init__(
        self,
        table: RulesTable,
        queue: str,
        queue_manager: str,
        *,
        provider: ProviderPlugin,
        retry_interval_s: float,
        report_interval_s: float,
        transmission_queues: Mapping[str, str],
        stats: HandlerStats,
    ) -> None:
        self.table = table
        self.queue = queue
        self.queue_manager = queue_manager
        self.provider = provider
        self.retry_interval_s = retry_interval_s
        self.report_interval_s = report_interval_s
        self.transmission_queues = transmission_queues
        self.stats = stats
        #: by message id, the messages the handler remembers
        self.tracked: dict[str, Tracked] = {}
        #: the messages without a dead-letter header, which stay on the DLQ (Q05)
        self.without_header: set[str] = set()
        # the duplicate ids of the dead letters seen, to recognise a resent copy of one
        self._duplicates = DuplicateWindow()
        self._details: dict[str, DeadLetterDetails] = {}
        # provider-dead-lettered entries a read of the details did not cover (read no more)
        self._details_missing: set[str] = set()
        self._reported_at: float | None = None
        # the local targets met so far, by name: each keeps its key as a Java string, which
        # would otherwise be made again for every put
        self._targets: dict[str, Destination] = {}

    @functools.cached_property
    def dlq(self) -> Queue:
        return Queue(self.queue)

    # ------------------------------------------------------------------ reading a message

    def is_resend(self, message: Message) -> bool:
        """Whether the message is a resent copy of a dead letter seen before (the same duplicate
        id, another message id: pyjms.api.duplicates)."""
        duplicate_id = duplicate_id_of(message)
        return duplicate_id is not None and self._duplicates.is_resend(
            self.queue, duplicate_id, message.get_jms_message_id() or ""
        )

    def waiting(self, message_id: str, now: float) -> bool:
        """Whether the handler leaves the message for now: IGNORE applied, or a retry not due."""
        tracked = self.tracked.get(message_id)
        return tracked is not None and (tracked.left or tracked.due > now)

    def details_unread(self, message: Message) -> bool:
        """Whether the message is an entry the provider dead-lettered whose details (ActiveMQ's
        original destination) have not been read yet."""
        if message.property_exists(REASON) or not self.provider.dead_lettered_by_broker(message):
            return False
        message_id = message.get_jms_message_id() or ""
        return message_id not in self._details and message_id not in self._details_missing

    def header(self, browse_ctx: JMSContext, message: Message) -> DeadLetterHeader | None:
        """The message's dead-letter header; None for none. Called on a browsed message, it
        reads the provider's details of a dead-lettered entry first, if need be: a read shows
        only messages on the queue, not one a consumer holds."""
        message_id = message.get_jms_message_id() or ""
        if self.details_unread(message):
            # read again for each new one (each read covers the first 1,000 such entries)
            self._details.update(self.provider.dead_letter_details(browse_ctx, self.queue))
            if message_id not in self._details:
                self._details_missing.add(message_id)
        details = self._details.get(message_id)
        try:
            return DeadLetterHeader.from_message(
                message,
                queue_manager=self.queue_manager,
                original_destination=details.original_destination if details else None,
                dead_lettered_ms=details.dead_lettered_ms if details else None,
                provider=self.provider,
            )
        except JMSRuntimeException as e:  # a malformed header counts as none (Q05)
            _log.debug("%s", e)
            return None

    def headerless(self, message_id: str) -> None:
        """Remembers a message without a dead-letter header (it stays, and is reported)."""
        if message_id not in self.without_header:
            self.without_header.add(message_id)
            self.stats.without_header += 1

    # ------------------------------------------------------------------ deciding

    def decide(self, message: Message, header: DeadLetterHeader) -> Move | None:
        """The move to attempt; None when IGNORE applies or the attempt failed already (a
        target that cannot be named, a body pyjms cannot put unchanged)."""
        message_id = message.get_jms_message_id() or ""
        tracked = self.tracked.get(message_id) or Tracked()
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
        self.tracked[message_id] = tracked
        try:
            target, add = self._target(rule, header, fields, message)
        except JMSRuntimeException as e:
            self.failed(message_id, index, rule, e)
            return None
        return Move(message_id, index, rule, header, target, add)

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
            if target == self.dlq:  # it would come round again, for ever
                raise InvalidDestinationRuntimeException(
                    f"the target of the rule on line {rule.line} is the dead-letter queue itself",
                    values={"queue": queue, "line": rule.line},
                )
            return target, {}
        transmission_queue = self.transmission_queues.get(queue_manager, queue_manager)
        return Queue(transmission_queue), {XQH_REMOTE_Q: queue, XQH_REMOTE_Q_MGR: queue_manager}

    def _leave(self, message_id: str, tracked: Tracked, header: DeadLetterHeader, why: str) -> None:
        tracked.left = True
        self.tracked[message_id] = tracked
        self.stats.ignored += 1
        _log.info("%s stays on %s (%s): %s", message_id, self.queue, header.reason_name, why)

    # ------------------------------------------------------------------ outcomes

    def attempting(self, move: Move) -> None:
        """Counts an attempt of the move: every attempt counts (Q02)."""
        tracked = self.tracked.setdefault(move.message_id, Tracked())
        tracked.attempts[move.index] = tracked.attempts.get(move.index, 0) + 1
        tracked.unreachable = 0

    def done(self, move: Move) -> None:
        """The move was committed: the message is gone from the DLQ."""
        self.tracked.pop(move.message_id, None)
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

    def failed(
        self, message_id: str, index: int, rule: Rule, error: JMSRuntimeException, counted: bool = False
    ) -> None:
        """An attempt failed: the rule is tried again RETRYINT later, or, used up, hands the
        message to the next matching rule at once (Q03). ``counted``: attempting() counted it."""
        tracked = self.tracked.setdefault(message_id, Tracked())
        if not counted:
            tracked.attempts[index] = tracked.attempts.get(index, 0) + 1
        attempts = tracked.attempts[index]
        self.stats.failed_attempts += 1
        exhausted = attempts >= rule.retry
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

    # ------------------------------------------------------------------ reach

    def reached(self) -> None:
        """The consumer got messages: the others were not reached yet, not out of reach."""
        for tracked in self.tracked.values():
            tracked.unreachable = 0

    def unreachable(self, message_ids: list[str]) -> None:
        """Messages the handler did not leave were on the DLQ, yet its consumer got nothing."""
        given_up = []
        for message_id in message_ids:
            tracked = self.tracked.setdefault(message_id, Tracked())
            tracked.unreachable += 1
            if tracked.unreachable == UNREACHABLE_WARNING:
                given_up.append(message_id)
        if given_up:
            _log.warning(
                "%d message(s) on %s could not be got for %d passes (%s%s): another reader holds "
                "them, or they are behind more messages than the broker pages in for a selector "
                "(ActiveMQ maxPageSize, 200) and the messages the handler leaves keep them there",
                len(given_up),
                self.queue,
                UNREACHABLE_WARNING,
                ", ".join(given_up[:3]),
                ", ..." if len(given_up) > 3 else "",
            )

    def unreached(self) -> bool:
        """Whether a message the last browse showed was neither left nor got (yet): another
        handler may hold it, or the broker be slow to dispatch it, so it is not given up
        before a few more passes."""
        return any(0 < t.unreachable < UNREACHABLE_WARNING and not t.missed for t in self.tracked.values())

    def seen_in_browse(self, message_id: str) -> None:
        """A browse showed the message."""
        tracked = self.tracked.get(message_id)
        if tracked is not None:
            tracked.missed = 0

    def forget_gone(self, seen: set[str]) -> None:
        """After a browse that saw the whole queue: forgets messages gone from it (a message
        on its way to a consumer is missed by a browse too, so only after several)."""
        self.without_header &= seen
        for message_id in self.tracked.keys() - seen:
            tracked = self.tracked[message_id]
            tracked.missed += 1
            if tracked.missed >= _MISSED_BROWSES:
                del self.tracked[message_id]
                self._details.pop(message_id, None)

    # ------------------------------------------------------------------ bookkeeping

    def next_retry(self) -> float | None:
        """When the earliest pending retry is due; None if no retry is pending."""
        due = [t.due for t in self.tracked.values() if not t.left and t.attempts]
        return min(due) if due else None

    def held(self, now: float) -> tuple[list[str], float | None]:
        """The ids the handler leaves on the DLQ for now, and when the first retry comes due."""
        held = list(self.without_header)
        next_due: float | None = None
        for message_id, tracked in self.tracked.items():
            if tracked.left:
                held.append(message_id)
            elif tracked.due > now:
                held.append(message_id)
                next_due = tracked.due if next_due is None else min(next_due, tracked.due)
        return held, next_due

    def report_without_header(self) -> None:
        """Messages without a header are reported periodically and left (Q05)."""
        now = time.monotonic()
        if not self.without_header:
            return
        if self._reported_at is not None and now - self._reported_at < self.report_interval_s:
            return
        self._reported_at = now
        ids = sorted(self.without_header)
        shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
        _log.error(
            "%d message(s) on %s have no dead-letter header and stay there: %s", len(ids), self.queue, shown
        )


def _destination(name: str) -> Destination:
    """A target named by a header or rule: a queue name, or a destination key (topic://T)."""
    return from_key(name) if "://" in name else Queue(name)


__all__ = ["Decisions", "Move", "Tracked", "UNREACHABLE_WARNING"]
