"""Translates Java exceptions into the pyjms error tree: no JPype object reaches users."""

from __future__ import annotations

from typing import Any

from pyjms import errors as E
from pyjms.bridge import jvm
from pyjms.reasons import MQRC

# simple class name (either the checked JMS exception or its runtime twin) -> pyjms class
_BY_NAME: dict[str, type[E.JMSRuntimeException]] = {
    "InvalidSelectorException": E.InvalidSelectorRuntimeException,
    "InvalidDestinationException": E.InvalidDestinationRuntimeException,
    "IllegalStateException": E.IllegalStateRuntimeException,
    "JMSSecurityException": E.JMSSecurityRuntimeException,
    "MessageFormatException": E.MessageFormatRuntimeException,
    "MessageNotWriteableException": E.MessageNotWriteableRuntimeException,
    "ResourceAllocationException": E.ResourceAllocationRuntimeException,
    "TransactionRolledBackException": E.TransactionRolledBackRuntimeException,
    "TransactionInProgressException": E.TransactionInProgressRuntimeException,
    "InvalidClientIDException": E.InvalidClientIDRuntimeException,
    "UnsupportedOperationException": E.NotSupportedRuntimeException,
    "IllegalArgumentException": E.InvalidArgumentRuntimeException,
}


def _class_names(jexc: Any) -> list[str]:
    names = []
    cls = jexc.getClass()
    while cls is not None:
        simple = str(cls.getSimpleName())
        names.append(simple[:-16] + "Exception" if simple.endswith("RuntimeException") and simple != "RuntimeException" else simple)
        cls = cls.getSuperclass()
    return names


def _describe(jexc: Any) -> str:
    """The exception's message, with its causes' messages where they add something."""
    parts: list[str] = []
    seen = 0
    e = jexc
    while e is not None and seen < 5:
        msg = e.getMessage()
        text = str(msg) if msg is not None else str(e.getClass().getSimpleName())
        if not any(text in p for p in parts):
            parts.append(text)
        e = e.getCause()
        seen += 1
    return ": ".join(parts)


# a pyjms broker's refusal carries IBM MQ's reason; the shim reads it (org.pyjms.shim.Contract)
_CLASS_FOR_REASON: dict[int, type[E.JMSRuntimeException]] = {
    MQRC.Q_FULL: E.ResourceAllocationRuntimeException,
    MQRC.NOT_AUTHORIZED: E.JMSSecurityRuntimeException,
}


def _contract(jexc: Any) -> Any:
    """The shim's Contract class (the JVM is running: a Java exception exists)."""
    return jvm.shim().jclass("org.pyjms.shim.Contract")


def translate(jexc: Any, context: str = "") -> E.JMSRuntimeException:
    """A pyjms error for a Java exception (jpype.JException)."""
    cls: type[E.JMSRuntimeException] = E.JMSRuntimeException
    for name in _class_names(jexc):
        if name in _BY_NAME:
            cls = _BY_NAME[name]
            break
    error_code = None
    try:
        code = jexc.getErrorCode()
        error_code = str(code) if code is not None else None
    except AttributeError:
        pass
    message = _describe(jexc)
    if context:
        message = f"{context}: {message}"
    reason: int | None = MQRC.FUNCTION_NOT_SUPPORTED if cls is E.NotSupportedRuntimeException else None
    refused = int(_contract(jexc).reasonOf(jexc))
    if refused:
        reason = refused
        cls = _CLASS_FOR_REASON.get(reason, cls)
        message = str(_contract(jexc).withoutReason(message)).strip()
    return cls(message, error_code=error_code, reason=reason)
