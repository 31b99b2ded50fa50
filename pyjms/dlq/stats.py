"""The DLQ handler's totals (pyjms.dlq.handler.DLQHandler.stats), by what became of each
dead letter."""

from __future__ import annotations

from dataclasses import dataclass

from pyjms.dlq.rules import Action


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


__all__ = ["HandlerStats"]
