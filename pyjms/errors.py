"""The one error tree of pyjms, mirroring Jakarta Messaging's runtime exceptions.

Every error is a :class:`JMSRuntimeException` and carries ``error_code`` (a provider or pyjms
code, may be None) and, where IBM MQ defines a reason for the failure, ``reason`` (the MQRC
number) and ``reason_name`` (``MQRC_...``). Java exceptions are translated into this tree at
the bridge (pyjms.bridge.errors) and never reach users as JPype objects.
"""

from __future__ import annotations

from typing import Any

from pyjms.reasons import MQRC
from pyjms.reasons import reason_name as _reason_name


class JMSRuntimeException(Exception):
    """Base of every pyjms error (jakarta.jms.JMSRuntimeException)."""

    def __init__(
        self,
        message: str,
        *,
        error_code: str | None = None,
        reason: int | None = None,
        values: dict[str, Any] | None = None,
    ) -> None:
        self.message = message
        self.error_code = error_code
        self.reason = int(reason) if reason is not None else None
        self.reason_name = _reason_name(self.reason) if self.reason is not None else None
        #: the values that broke the rule, by name (e.g. {"time_to_live": 10, "delivery_delay": 20})
        self.values = dict(values or {})
        text = message
        if self.reason is not None:
            text = f"{message} [{self.reason_name} ({self.reason})]"
        super().__init__(text)


class IllegalStateRuntimeException(JMSRuntimeException):
    """An operation at the wrong time: closed context, receive on a listener session..."""


class InvalidClientIDRuntimeException(JMSRuntimeException):
    """The client id is invalid or already in use."""


class InvalidDestinationRuntimeException(JMSRuntimeException):
    """The destination does not exist, is of the wrong kind, or is misnamed."""


class InvalidSelectorRuntimeException(JMSRuntimeException):
    """The message selector's syntax is invalid."""


class JMSSecurityRuntimeException(JMSRuntimeException):
    """Authentication or authorisation failed."""


class MessageFormatRuntimeException(JMSRuntimeException, TypeError):
    """A value or body of the wrong type for the operation."""


class MessageNotWriteableRuntimeException(JMSRuntimeException):
    """A received message's body or properties are read-only."""


class ResourceAllocationRuntimeException(JMSRuntimeException):
    """The provider could not allocate a resource (e.g. a queue is full)."""


class TransactionInProgressRuntimeException(JMSRuntimeException):
    """The operation is not allowed while a transaction is in progress."""


class TransactionRolledBackRuntimeException(JMSRuntimeException):
    """A commit failed and the transaction was rolled back: nothing of it happened."""


class DuplicateRejectedRuntimeException(TransactionRolledBackRuntimeException):
    """The broker rolled the transaction back because a message in it carries a duplicate id
    (Message.set_duplicate_id) the broker has already taken: those messages were sent before,
    in a transaction that committed. Resending a whole batch after an in-doubt commit gets this
    error exactly when the first commit did happen (Apache Artemis, over core and AMQP)."""


class TransactionInDoubtRuntimeException(JMSRuntimeException):
    """A commit whose outcome is unknown: the connection failed during it, so the transaction
    may have been committed or rolled back (IBM MQ's MQRC_CALL_INTERRUPTED, 2549). Resending
    its messages can duplicate them unless they carry a duplicate-detection id."""


class InvalidArgumentRuntimeException(JMSRuntimeException, ValueError):
    """A value outside what JMS or IBM MQ allows (priority 10, negative TTL, ...)."""


class NotSupportedRuntimeException(JMSRuntimeException):
    """The feature is not available on this provider (often MQRC_FUNCTION_NOT_SUPPORTED)."""


class SetupError(JMSRuntimeException):
    """pyjms cannot start: no JDK, a missing provider jar, a shim that will not build."""


def mq_error(
    cls: type[JMSRuntimeException], reason: MQRC, message: str, **values: Any
) -> JMSRuntimeException:
    """An error of ``cls`` for an IBM MQ rule, naming the values that broke it."""
    return cls(message, reason=reason, values=values)


__all__ = [
    "JMSRuntimeException",
    "IllegalStateRuntimeException",
    "InvalidClientIDRuntimeException",
    "InvalidDestinationRuntimeException",
    "InvalidSelectorRuntimeException",
    "JMSSecurityRuntimeException",
    "MessageFormatRuntimeException",
    "MessageNotWriteableRuntimeException",
    "ResourceAllocationRuntimeException",
    "TransactionInProgressRuntimeException",
    "TransactionRolledBackRuntimeException",
    "TransactionInDoubtRuntimeException",
    "DuplicateRejectedRuntimeException",
    "InvalidArgumentRuntimeException",
    "NotSupportedRuntimeException",
    "SetupError",
    "mq_error",
]
