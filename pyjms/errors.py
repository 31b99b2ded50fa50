"""The one error tree of pyjms, mirroring Jakarta Messaging's runtime exceptions.

Every error is a :class:`JMSRuntimeException` and carries ``error_code`` (a provider or pyjms
code, may be None) and, where IBM MQ defines a reason for the failure, ``reason`` (the MQRC
number) and ``reason_name`` (``MQRC_...``). Java exceptions are translated into this tree at
the bridge (pyjms.bridge.errors) and never reach users as JPype objects.
"""

from __future__ import annotations

import threading
from typing import Any, Self, cast

from pyjms.reasons import MQRC
from pyjms.reasons import reason_name as _reason_name


class JMSRuntimeException(Exception):
    """Base of every pyjms error (jakarta.jms.JMSRuntimeException).

    An error whose ``reason`` is MQRC_CONNECTION_BROKEN (2009) or MQRC_Q_MGR_NOT_AVAILABLE
    (2059) is made as a :class:`ConnectionBrokenRuntimeException` or a
    :class:`BrokerUnavailableRuntimeException` (both Python's ``ConnectionError``) that is also
    of the class it was made as: ``IllegalStateRuntimeException(..., reason=2009)`` is an
    IllegalStateRuntimeException and a ConnectionBrokenRuntimeException. Whoever raises a
    connection failure, a retry loop catches it by kind.
    """

    #: the reason an error of this class carries when it is made with none
    default_reason: int | None = None

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        reason = kwargs.get("reason")
        if reason is None:
            reason = cls.default_reason
        target: type[Self] = _connection_class(cls, int(reason)) if reason is not None else cls
        # a built-in class's new makes it: OSError's for a ConnectionError (it lays out more)
        builtin = (
            OSError
            if issubclass(target, OSError)
            else next(c for c in target.__mro__ if c.__module__ == "builtins")
        )
        return builtin.__new__(target, *args)

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
        if reason is None:
            reason = self.default_reason
        self.reason = int(reason) if reason is not None else None
        self.reason_name = _reason_name(self.reason) if self.reason is not None else None
        #: the values that broke the rule, by name (e.g. {"time_to_live": 10, "delivery_delay": 20})
        self.values = dict(values or {})
        text = message
        if self.reason is not None:
            text = f"{message} [{self.reason_name} ({self.reason})]"
        super().__init__(text)
        self.args = (text,)  # OSError's init (a ConnectionError's) keeps what new was given


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
    """pyjms cannot start: no JDK, a missing provider jar, a shim that will not build. A retry
    does not cure it: the installation or the configuration must change (docs/errors.md)."""


class ConnectionBrokenRuntimeException(JMSRuntimeException, ConnectionError):
    """The connection to the broker broke under use (MQRC_CONNECTION_BROKEN, 2009). Also
    Python's ConnectionError: a new connection, later, may succeed. An error that a class
    of its own describes better (a closed producer is an IllegalStateRuntimeException) is of
    both classes."""

    default_reason = MQRC.CONNECTION_BROKEN


class BrokerUnavailableRuntimeException(JMSRuntimeException, ConnectionError):
    """The broker cannot be reached: refused, unknown host, no route, a reconnect that failed
    (MQRC_Q_MGR_NOT_AVAILABLE, 2059). Also Python's ConnectionError: the broker may be back
    later."""

    default_reason = MQRC.Q_MGR_NOT_AVAILABLE


#: the class every error with a connection reason is also of
_CONNECTION_KINDS: dict[int, type[JMSRuntimeException]] = {
    MQRC.CONNECTION_BROKEN: ConnectionBrokenRuntimeException,
    MQRC.Q_MGR_NOT_AVAILABLE: BrokerUnavailableRuntimeException,
}
_variants: dict[tuple[type[JMSRuntimeException], int], type[JMSRuntimeException]] = {}
_variants_lock = threading.Lock()


def _connection_class(cls: type[JMSRuntimeException], reason: int) -> Any:
    """``cls`` for an error with ``reason``: itself, unless the reason is a connection's and
    ``cls`` is not a connection error yet; then the class that is both (made once per class,
    named after both, e.g. IllegalStateRuntimeException + ConnectionBrokenRuntimeException is
    ``IllegalStateConnectionBrokenRuntimeException``)."""
    kind = _CONNECTION_KINDS.get(reason)
    if kind is None or issubclass(cls, (ConnectionError, SetupError)):
        return cls  # a set-up error is never one a retry may cure
    if cls is JMSRuntimeException:
        return kind
    with _variants_lock:
        variant = _variants.get((cls, reason))
        if variant is None:
            stem = cls.__name__.removesuffix("RuntimeException").removesuffix("Exception")
            name = f"{stem}{kind.__name__}"
            variant = _variants[(cls, reason)] = cast(
                "type[JMSRuntimeException]",
                type(name, (cls, kind), {"__module__": cls.__module__, "__doc__": cls.__doc__}),
            )
            if cls.__module__ == __name__:
                globals()[name] = variant  # importable by name: such errors pickle
        return variant


# made at import, so that such errors unpickle in any process (a Spark worker's, say)
for _cls in (
    IllegalStateRuntimeException,
    InvalidClientIDRuntimeException,
    InvalidDestinationRuntimeException,
    InvalidSelectorRuntimeException,
    JMSSecurityRuntimeException,
    MessageFormatRuntimeException,
    MessageNotWriteableRuntimeException,
    ResourceAllocationRuntimeException,
    TransactionInProgressRuntimeException,
    TransactionRolledBackRuntimeException,
    DuplicateRejectedRuntimeException,
    TransactionInDoubtRuntimeException,
    InvalidArgumentRuntimeException,
    NotSupportedRuntimeException,
):
    for _reason in _CONNECTION_KINDS:
        _connection_class(_cls, _reason)
del _cls, _reason


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
    "ConnectionBrokenRuntimeException",
    "BrokerUnavailableRuntimeException",
    "mq_error",
]
