"""The delay processor's mover: what happens to one due message, inside a thread's transaction.

A due message is put to its target (D03, D15: the target as it is now), or discarded with an
expiration report if it expired while staged (D18), or, if its target refuses it,
dead-lettered or discarded with an exception report (D20). The sorter and the deliverer each
have their own Mover, bound to their own transacted context.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from pyjms.api.access import WriteCheck
from pyjms.api.bulk import RoutedBatch
from pyjms.api.context import JMSContext
from pyjms.api.destination import Destination, Queue, TemporaryQueue, TemporaryTopic
from pyjms.api.expiry import now_ms
from pyjms.api.message import Message
from pyjms.api.property_types import T_INT, T_LONG, T_STRING
from pyjms.api.quietlog import QuietLog
from pyjms.bridge import contract
from pyjms.delay import staging
from pyjms.dlq import header as dlh
from pyjms.errors import (
    InvalidDestinationRuntimeException,
    JMSRuntimeException,
    JMSSecurityRuntimeException,
    mq_error,
)
from pyjms.reasons import MQRC
from pyjms.rules.delivery import check_target_accepts

_log = logging.getLogger("pyjms.delay")

#: report options, as IBM MQ's JMS classes name them (message properties)
REPORT_EXPIRATION = "JMS_IBM_Report_Expiration"
REPORT_EXCEPTION = "JMS_IBM_Report_Exception"
REPORT_DISCARD = "JMS_IBM_Report_Discard_Msg"
FEEDBACK = "JMS_IBM_Feedback"
MQFB_EXPIRATION = 258
DEFAULT_DEAD_LETTER_QUEUE = contract.DEAD_LETTER_QUEUE
#: the PutApplName of what the processor dead-letters
PUT_APPL_NAME = "pyjms delay processor"
#: a staged or slot message this processor took more times than this (each failed attempt
#: rolled back) goes to the dead-letter queue with MQRC_BACKOUT_THRESHOLD_REACHED instead of
#: looping (org.pyjms.shim.Poison.quarantineStaged). Counted from the delivery it first took the
#: message at: what a killed processor held comes to its successor counted up, through no fault
#: of its own, and many takeovers must not dead-letter it
MOST_ATTEMPTS = 6
#: ... and one delivered more times than this in all, through however many processors (one that
#: kills the process that takes it): org.pyjms.shim.Poison.MOST_DELIVERIES
MOST_DELIVERIES = 50
#: who staged a message: the broker stamps it (None where it authenticates nobody)
USER_ID = "JMSXUserID"


def staged_by(m: Message) -> str | None:
    """Who staged m (None: the broker stamped no user). On the staging queue, the user the broker
    stamped; on a slot queue, where the broker stamped the processor, the one its filer kept
    (staging.STAGED_USER: only the processor writes slot queues on a broker with users)."""
    where = m.get_jms_destination()
    if where is not None and where.name.startswith(contract.SLOT_PREFIX):
        user = m.get_object_property(staging.STAGED_USER) if m.property_exists(staging.STAGED_USER) else None
        return user if isinstance(user, str) and user else None
    return m.get_string_property(USER_ID)


@dataclass(frozen=True)
class Checks:
    """Where the processor may write for the user who staged a message (pyjms.api.access).

    ``target``: the message's target, None where the processor leaves that to the broker
    (checked when the message was staged, D11); ``reply_to``: reports to its reply-to.
    ``allow(user, target_key)`` tells the shim that a pair passed, so its next messages move
    without Python (PlainTargets.allow)."""

    target: WriteCheck | None
    reply_to: WriteCheck
    allow: Callable[[str | None, str], None]


@dataclass
class ProcessorStats:
    staged: int = 0  # taken off the staging queue
    delivered: int = 0
    expired: int = 0
    failed: int = 0  # could not be put to the target
    early: int = 0  # delivered before their delivery time: must stay 0
    lateness_ms: list[int] = field(default_factory=list)  # per delivery, when recording


class Mover:
    """Puts due messages to their targets, or expires or dead-letters them, within one
    transacted context; the caller commits (after flush)."""

    def __init__(
        self,
        ctx: JMSContext,
        stats: ProcessorStats,
        dead_letter_queue: str,
        record_lateness: bool,
        checks: Checks,
        log: QuietLog,
    ) -> None:
        self.ctx = ctx
        self._put = _Putter(ctx)
        self._stats = stats
        self._dead_letter_queue = Queue(dead_letter_queue)
        self._record_lateness = record_lateness
        self._checks = checks
        self._log = log
        # the shim quarantines poison on this session (org.pyjms.shim.Poison): to the same queue
        ctx.channel.set_dead_letter_queue(self._dead_letter_queue.key, PUT_APPL_NAME)

    def deliver(self, m: Message) -> None:
        """Puts a due message to its target, or expires it."""
        now = now_ms()
        due = m.get_long_property(staging.DELIVERY_TIME)
        if now < due:
            self._stats.early += 1
        expiration = (
            m.get_long_property(staging.STAGED_EXPIRATION)
            if m.property_exists(staging.STAGED_EXPIRATION)
            else 0
        )
        if expiration and now >= expiration:
            self._expire(m)
            return
        try:
            target = staging.staged_target(m)
        except JMSRuntimeException as e:  # the shim quarantines these first (Poison.stagedProblem)
            # a malformed staging header: MQRC_FORMAT_ERROR, as the shim's quarantine says
            bad = InvalidDestinationRuntimeException(e.message, reason=contract.QUARANTINE_REASON)
            self.fail(m, m.get_jms_destination() or Queue(staging.STAGING_QUEUE), bad)
            return
        # a temporary destination may be gone (its connection closed): its put is sent at once,
        # alone, so that a refusal is this message's, not its batch's
        temporary = isinstance(target, (TemporaryQueue, TemporaryTopic))
        if temporary:
            self._put.flush()
        try:
            self._check_user(m, target)
            # the target as it is now (D15: resolved again at delivery), so a refused put is
            # known before the commit
            self._check_exists(target)
            if not temporary:  # a temporary destination has no attributes (nobody defines them)
                check_target_accepts(target.key, self.ctx.provider.target_attributes(self.ctx, target))
            self._put.deliver(target, m, expiration, now)
            if temporary:
                self._put_now(target)
        except JMSRuntimeException as e:
            self.fail(m, target, e)
            return
        self._stats.delivered += 1
        if self._record_lateness:
            self._stats.lateness_ms.append(now - due)

    def _put_now(self, target: Destination) -> None:
        """Sends a temporary destination's put alone: one that is gone (its connection closed)
        refuses it, MQRC_UNKNOWN_OBJECT_NAME as for any object that does not exist."""
        try:
            self._put.flush()
        except JMSRuntimeException as e:
            if e.reason is not None:
                raise
            raise mq_error(
                InvalidDestinationRuntimeException,
                MQRC.UNKNOWN_OBJECT_NAME,
                f"{target.key} cannot be put to (a temporary destination whose connection closed?): {e.message}",
                destination=target.key,
            ) from e

    def _check_user(self, m: Message, target: Destination) -> None:
        """MQRC_NOT_AUTHORIZED unless the user who staged m may write to its target (the
        target's key as a whole: a key that merely contains a permitted name is another)."""
        check = self._checks.target
        if check is None:
            return
        user = staged_by(m)
        if not check(user, target):
            raise mq_error(
                JMSSecurityRuntimeException,
                MQRC.NOT_AUTHORIZED,
                f"user {user!r}, who staged the message, is not authorized to write to {target.key}",
                user=user,
                destination=target.key,
            )
        self._checks.allow(user, target.key)

    def _check_exists(self, target: Destination) -> None:
        """Strict mode (a factory with create_destinations=False): MQRC_UNKNOWN_OBJECT_NAME for a
        target the broker says it does not have (never made, or deleted since it was staged)."""
        if self.ctx.factory.create_destinations or isinstance(target, (TemporaryQueue, TemporaryTopic)):
            return
        if self.ctx.provider.destination_exists(self.ctx, target) is False:
            raise mq_error(
                InvalidDestinationRuntimeException,
                MQRC.UNKNOWN_OBJECT_NAME,
                f"{target.key} does not exist on the broker",
                destination=target.key,
            )

    def _report(self, m: Message, reply_to: Destination, feedback: int) -> None:
        """A report goes to the reply-to only if the user who staged m may write there."""
        user = staged_by(m)
        if self._checks.reply_to(user, reply_to):
            self._put.report(reply_to, m, feedback)
        else:
            self._log.line(
                _log,
                logging.WARNING,
                "no report for delayed message %s: user %r, who staged it, may not write to its reply-to %s",
                m.get_jms_message_id(),
                user,
                reply_to.key,
            )

    def _expire(self, m: Message) -> None:
        """D18: discard, with an expiration report for the original message if it asked for one."""
        self._stats.expired += 1
        reply_to = m.get_jms_reply_to()
        if m.property_exists(REPORT_EXPIRATION) and reply_to is not None:
            self._report(m, reply_to, MQFB_EXPIRATION)

    def fail(self, m: Message, target: Destination, error: JMSRuntimeException) -> None:
        """D20: discard if the message asked for it, else the dead-letter queue (and an exception report)."""
        self._stats.failed += 1
        self._log.line(
            _log,
            logging.WARNING,
            "delayed message %s could not be put to %s: %s",
            m.get_jms_message_id(),
            target,
            error,
        )
        if m.property_exists(REPORT_DISCARD):
            return
        self._put.dead_letter(self._dead_letter_queue, m, target, error)
        reply_to = m.get_jms_reply_to()
        if m.property_exists(REPORT_EXCEPTION) and reply_to is not None:
            self._report(m, reply_to, error.reason or 0)

    def flush(self) -> None:
        """Sends what is batched (the caller commits next)."""
        self._put.flush()


class _Putter:
    """Moves messages unchanged (body, properties, headers) within one transacted context."""

    BATCH = 500

    def __init__(self, ctx: JMSContext) -> None:
        self.ctx = ctx
        self._pending = RoutedBatch(ctx)

    def deliver(self, target: Destination, m: Message, expiration: int, now: int) -> None:
        """To the target: without the staging header, with the sender's correlation id back,
        and with the exact expiration receivers enforce (the TTL lets the broker expire it too).
        Batched: a put the provider refuses in a transaction only fails at commit anyway."""
        own = m.get_string_property(staging.ORIGINAL_CORRELATION_ID)
        extra = {staging.EXPIRATION: (T_LONG, expiration)} if expiration else None
        record = m.encode(correlation_id=own, drop_properties=staging.STAGING_HEADER, add_properties=extra)
        self._add_record(target, m, expiration - now if expiration else 0, record)

    def dead_letter(
        self, dlq: Destination, m: Message, target: Destination, error: JMSRuntimeException
    ) -> None:
        extra = {
            **dlh.DeadLetterHeader.for_failure(
                target, error, message=m, put_appl_name=PUT_APPL_NAME
            ).typed_properties(),
            contract.DLQ_DETAIL: (T_STRING, str(error)),
        }
        own = m.get_string_property(staging.ORIGINAL_CORRELATION_ID)
        record = m.encode(correlation_id=own, drop_properties=staging.STAGING_HEADER, add_properties=extra)
        self._add_record(dlq, m, 0, record)

    def report(self, reply_to: Destination, m: Message, feedback: int) -> None:
        """A report for the original message: its id as correlation id, unlimited lifetime (E15)."""
        record = m.encode(
            correlation_id=m.get_jms_message_id(),
            reply_to=None,
            drop_properties=staging.STAGING_HEADER
            + staging.ORIGINAL_MESSAGE
            + (REPORT_EXPIRATION, REPORT_EXCEPTION),
            add_properties={FEEDBACK: (T_INT, feedback)},
        )
        self._add_record(reply_to, m, 0, record)

    def _add_record(self, destination: Destination, m: Message, ttl: int, record: bytes) -> None:
        if (
            self._pending.add(destination, record, m.get_jms_delivery_mode(), m.get_jms_priority(), ttl)
            >= self.BATCH
        ):
            self.flush()

    def flush(self) -> None:
        self._pending.send()
