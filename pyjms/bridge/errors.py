"""Translates Java exceptions into the pyjms error tree: no JPype object reaches users."""

from __future__ import annotations

import functools
import re
import threading
from dataclasses import dataclass
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


@dataclass(frozen=True)
class ConnectionFailures:
    """How a client's exceptions say that a connection failed: the simple class names (a
    runtime twin's read as its checked name) and the message texts (regular expressions,
    matched anywhere, ignoring case) that mean the broker cannot be reached, and those that
    mean the connection broke under use.

    The bridge knows only the JDK's own (:data:`JDK_FAILURES`). Each provider plug-in declares
    its client's (pyjms.api.provider.ProviderPlugin.connection_failures), and registering the
    plug-in registers them here (:func:`register_connection_failures`)."""

    unreachable_classes: frozenset[str] = frozenset()
    unreachable_texts: tuple[str, ...] = ()
    broken_classes: frozenset[str] = frozenset()
    broken_texts: tuple[str, ...] = ()

    def __or__(self, other: ConnectionFailures) -> ConnectionFailures:
        return ConnectionFailures(
            self.unreachable_classes | other.unreachable_classes,
            _union(self.unreachable_texts, other.unreachable_texts),
            self.broken_classes | other.broken_classes,
            _union(self.broken_texts, other.broken_texts),
        )

    def reason(self, causes: list[tuple[list[str], str]]) -> int | None:
        """IBM MQ's reason for a connection when an exception among ``causes`` (each one's
        class names and message) says so: the broker cannot be reached
        (MQRC_Q_MGR_NOT_AVAILABLE) or the connection broke under use (MQRC_CONNECTION_BROKEN),
        checked in this order, so that a refused reconnect is "not available"; else None."""
        unreachable_text = _any_of(self.unreachable_texts)
        for names, text in causes:
            if self.unreachable_classes.intersection(names) or unreachable_text.search(text):
                return MQRC.Q_MGR_NOT_AVAILABLE
        broken_text = _any_of(self.broken_texts)
        for names, text in causes:
            if self.broken_classes.intersection(names) or broken_text.search(text):
                return MQRC.CONNECTION_BROKEN
        return None


def _union(first: tuple[str, ...], second: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(first + second))


@functools.lru_cache(maxsize=64)
def _any_of(texts: tuple[str, ...]) -> re.Pattern[str]:
    """One expression for any of the texts (one that never matches for none)."""
    return re.compile("|".join(texts) if texts else r"(?!)", re.IGNORECASE)


#: what the JDK's own exceptions say, whatever the client: its sockets refused, unknown hosts
#: and routes, and a stream or connection that broke
JDK_FAILURES = ConnectionFailures(
    unreachable_classes=frozenset(
        {"ConnectException", "UnknownHostException", "NoRouteToHostException", "PortUnreachableException"}
    ),
    unreachable_texts=("Connection refused",),
    broken_classes=frozenset({"EOFException"}),
    broken_texts=(
        "Connection reset",
        "Broken pipe",
        "connection (?:was |has been )?(?:closed|lost|dropped)",
        "remote peer closed",
    ),
)

# the JDK's, and those of every provider plug-in registered (pyjms.api.provider)
_connection_failures = JDK_FAILURES
_registration = threading.Lock()


def register_connection_failures(failures: ConnectionFailures) -> None:
    """Makes :func:`translate` read a provider client's connection failures as ``failures``
    says (pyjms.api.provider.register_provider calls it with each plug-in's)."""
    global _connection_failures
    with _registration:
        _connection_failures = _connection_failures | failures


def connection_failures() -> ConnectionFailures:
    """The connection failures :func:`translate` knows: the JDK's and the registered ones."""
    return _connection_failures


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
    return _connection_failures.reason(_causes(jexc))


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
