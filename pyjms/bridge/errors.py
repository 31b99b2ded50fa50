"""Translates Java exceptions into the pyjms error tree: no JPype object reaches users."""

from __future__ import annotations

import re
from typing import cast

from pyjms import errors as E
from pyjms.bridge import jvm
from pyjms.bridge.java_types import JavaClass, JavaContractClass, JavaJMSException, JavaThrowable
from pyjms.bridge.urls import without_internal_options
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


def _class_names(jexc: JavaThrowable) -> list[str]:
    names = []
    cls: JavaClass | None = jexc.getClass()
    while cls is not None:
        simple = str(cls.getSimpleName())
        names.append(
            simple[:-16] + "Exception"
            if simple.endswith("RuntimeException") and simple != "RuntimeException"
            else simple
        )
        cls = cls.getSuperclass()
    return names


def _describe(jexc: JavaThrowable) -> str:
    """The exception's message, with its causes' messages where they add something."""
    parts: list[str] = []
    seen = 0
    e: JavaThrowable | None = jexc
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


def _contract() -> JavaContractClass:
    """The shim's Contract class (the JVM is running: a Java exception exists)."""
    return cast(JavaContractClass, jvm.shim().jclass("org.pyjms.shim.Contract"))


# IBM MQ's reasons for a connection, from the Java causes (class names, then messages):
# the broker cannot be reached (MQRC_Q_MGR_NOT_AVAILABLE) or the connection broke under use
# (MQRC_CONNECTION_BROKEN); checked in this order, so a refused reconnect is "not available"
_UNREACHABLE_CLASSES = {
    "ConnectException",
    "UnknownHostException",
    "NoRouteToHostException",
    "PortUnreachableException",
    "ActiveMQConnectionTimedOutException",
}
_UNREACHABLE_TEXT = re.compile(
    r"Connection refused|Failed to create session factory|AMQ219007|AMQ219013|"
    r"Cannot connect to server",
    re.IGNORECASE,
)
_BROKEN_CLASSES = {
    "EOFException",
    "ConnectionFailedException",
    "ActiveMQNotConnectedException",
    "ActiveMQDisconnectedException",
    "ConnectionClosedException",
    "TransportDisposedIOException",
    # Qpid JMS: a call on (or waiting on) a connection whose transport failed
    "JmsConnectionFailedException",
    "ProviderFailedException",
}
_BROKEN_TEXT = re.compile(
    r"Connection reset|Broken pipe|Transport disposed|connection (?:was |has been )?(?:closed|lost|dropped)|"
    r"Channel disconnected|AMQ219016|remote peer closed|remotely closed",
    re.IGNORECASE,
)


def _causes(jexc: JavaThrowable) -> list[tuple[list[str], str]]:
    """The exception and its causes (at most 8): each one's class names and message."""
    out: list[tuple[list[str], str]] = []
    e: JavaThrowable | None = jexc
    while e is not None and len(out) < 8:
        msg = e.getMessage()
        out.append((_class_names(e), str(msg) if msg is not None else ""))
        e = e.getCause()
    return out


def connection_reason(jexc: JavaThrowable) -> int | None:
    """MQRC_Q_MGR_NOT_AVAILABLE or MQRC_CONNECTION_BROKEN when the Java exception says so."""
    causes = _causes(jexc)
    for names, text in causes:
        if _UNREACHABLE_CLASSES.intersection(names) or _UNREACHABLE_TEXT.search(text):
            return MQRC.Q_MGR_NOT_AVAILABLE
    for names, text in causes:
        if _BROKEN_CLASSES.intersection(names) or _BROKEN_TEXT.search(text):
            return MQRC.CONNECTION_BROKEN
    return None


def translate(jexc: JavaThrowable, context: str = "") -> E.JMSRuntimeException:
    """A pyjms error for a Java exception (jpype.JException)."""
    cls: type[E.JMSRuntimeException] = E.JMSRuntimeException
    for name in _class_names(jexc):
        if name in _BY_NAME:
            cls = _BY_NAME[name]
            break
    error_code = None
    try:
        code = cast(JavaJMSException, jexc).getErrorCode()  # JMS exceptions only
        error_code = str(code) if code is not None else None
    except AttributeError:
        pass
    message = _describe(jexc)
    if context:
        message = f"{context}: {message}"
    reason: int | None = MQRC.FUNCTION_NOT_SUPPORTED if cls is E.NotSupportedRuntimeException else None
    contract = _contract()
    refused = int(contract.reasonOf(jexc))
    if refused:
        reason = refused
        cls = _CLASS_FOR_REASON.get(reason, cls)
        message = str(contract.withoutReason(message)).strip()
    if reason is None and cls is E.JMSSecurityRuntimeException:
        reason = MQRC.NOT_AUTHORIZED  # IBM MQ: authentication and authorisation alike
    if reason is None and cls in (E.JMSRuntimeException, E.IllegalStateRuntimeException):
        reason = connection_reason(jexc)
    return cls(without_internal_options(message), error_code=error_code, reason=reason)
