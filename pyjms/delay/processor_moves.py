"""The delay processor's mover: what happens to one due message, inside a thread's transaction.

A due message is put to its target (D03, D15: the target as it is now), or discarded with an
expiration report if it expired while staged (D18), or, if its target refuses it,
dead-lettered or discarded with an exception report (D20). The sorter and the deliverer each
have their own Mover, bound to their own transacted context.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from pyjms.api.context import JMSContext
from pyjms.api.destination import Destination, Queue
from pyjms.api.expiry import now_ms
from pyjms.api.message import Message
from pyjms.bridge import codec as C
from pyjms.bridge import contract
from pyjms.delay import staging
from pyjms.dlq import header as dlh
from pyjms.errors import JMSRuntimeException
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
        self, ctx: JMSContext, stats: ProcessorStats, dead_letter_queue: str, record_lateness: bool
    ) -> None:
        self.ctx = ctx
        self._put = _Putter(ctx)
        self._stats = stats
        self._dead_letter_queue = Queue(dead_letter_queue)
        self._record_lateness = record_lateness
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
        target = staging.staged_target(m)
        try:
            # the target as it is now (D15: resolved again at delivery), so a refused put is
            # known before the commit
            check_target_accepts(target.key, self.ctx.provider.target_attributes(self.ctx, target))
            self._put.deliver(target, m, expiration, now)
        except JMSRuntimeException as e:
            self.fail(m, target, e)
            return
        self._stats.delivered += 1
        if self._record_lateness:
            self._stats.lateness_ms.append(now - due)

    def _expire(self, m: Message) -> None:
        """D18: discard, with an expiration report for the original message if it asked for one."""
        self._stats.expired += 1
        reply_to = m.get_jms_reply_to()
        if m.property_exists(REPORT_EXPIRATION) and reply_to is not None:
            self._put.report(reply_to, m, MQFB_EXPIRATION)

    def fail(self, m: Message, target: Destination, error: JMSRuntimeException) -> None:
        """D20: discard if the message asked for it, else the dead-letter queue (and an exception report)."""
        self._stats.failed += 1
        _log.warning("delayed message %s could not be put to %s: %s", m.get_jms_message_id(), target, error)
        if m.property_exists(REPORT_DISCARD):
            return
        self._put.dead_letter(self._dead_letter_queue, m, target, error)
        reply_to = m.get_jms_reply_to()
        if m.property_exists(REPORT_EXCEPTION) and reply_to is not None:
            self._put.report(reply_to, m, error.reason or 0)

    def flush(self) -> None:
        """Sends what is batched (the caller commits next)."""
        self._put.flush()


class _Putter:
    """Moves messages unchanged (body, properties, headers) within one transacted context."""

    BATCH = 500

    def __init__(self, ctx: JMSContext) -> None:
        self.ctx = ctx
        self._pending: list[bytes] = []

    def deliver(self, target: Destination, m: Message, expiration: int, now: int) -> None:
        """To the target: without the staging header, with the sender's correlation id back,
        and with the exact expiration receivers enforce (the TTL lets the broker expire it too).
        Batched: a put the provider refuses in a transaction only fails at commit anyway."""
        own = m.get_string_property(staging.ORIGINAL_CORRELATION_ID)
        extra = {staging.EXPIRATION: (C.T_LONG, expiration)} if expiration else None
        record = m.encode(correlation_id=own, drop_properties=staging.STAGING_HEADER, add_properties=extra)
        self._add_record(target, m, expiration - now if expiration else 0, record)

    def dead_letter(
        self, dlq: Destination, m: Message, target: Destination, error: JMSRuntimeException
    ) -> None:
        extra = dlh.DeadLetterHeader.for_failure(
            target, error, message=m, put_appl_name=PUT_APPL_NAME
        ).typed_properties()
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
            add_properties={FEEDBACK: (C.T_INT, feedback)},
        )
        self._add_record(reply_to, m, 0, record)

    def _add_record(self, destination: Destination, m: Message, ttl: int, record: bytes) -> None:
        self._pending.append(
            C.pack_routed(destination.key, m.get_jms_delivery_mode(), m.get_jms_priority(), ttl, 0, record)
        )
        if len(self._pending) >= self.BATCH:
            self.flush()

    def flush(self) -> None:
        if not self._pending:
            return
        batch, self._pending = self._pending, []
        self.ctx.send_routed(batch)
