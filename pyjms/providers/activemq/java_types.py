"""Protocols of the Java classes pyjms's ActiveMQ support calls: the shim's embedded broker
(java/.../shim/activemq) and the few ActiveMQ broker classes it reads statistics from. As
pyjms.bridge.java_types, each is cast once, where the class is looked up."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

from pyjms.bridge.java_types import JavaString, JavaStringArg, JavaStringArray

# ---------------------------------------------------------------------------- ActiveMQ's broker


class JavaCountStatistic(Protocol):
    def getCount(self) -> int: ...


class JavaDestinationStatistics(Protocol):
    def getMessages(self) -> JavaCountStatistic: ...

    def getConsumers(self) -> JavaCountStatistic: ...

    def getEnqueues(self) -> JavaCountStatistic: ...

    def getDequeues(self) -> JavaCountStatistic: ...


class JavaActiveMQDestination(Protocol):
    """org.apache.activemq.command.ActiveMQDestination (a queue or topic by name)."""

    def isTemporary(self) -> bool: ...

    def getPhysicalName(self) -> JavaString: ...

    def getQualifiedName(self) -> JavaString: ...


class JavaActiveMQDestinationClass(Protocol):
    """ActiveMQQueue or ActiveMQTopic: a destination from its name."""

    def __call__(self, name: JavaStringArg, /) -> JavaActiveMQDestination: ...


class JavaRegion(Protocol):
    """org.apache.activemq.broker.region.Destination: a queue or topic on the broker."""

    def getActiveMQDestination(self) -> JavaActiveMQDestination: ...

    def getDestinationStatistics(self) -> JavaDestinationStatistics: ...


class JavaDestinationMap(Protocol):
    """The broker's Map<ActiveMQDestination, Destination>."""

    def get(self, destination: JavaActiveMQDestination, /) -> JavaRegion | None: ...

    def values(self) -> Iterable[JavaRegion]: ...


class JavaRegionBroker(Protocol):
    def getDestinationMap(self) -> JavaDestinationMap: ...


class JavaBrokerService(Protocol):
    """org.apache.activemq.broker.BrokerService."""

    def getRegionBroker(self) -> JavaRegionBroker: ...


# ---------------------------------------------------------------------------- the shim's


class JavaLimits(Protocol):
    """org.pyjms.shim.activemq.DestinationAttributes.Limits (read by the shim only)."""


class JavaLimitsClass(Protocol):
    def __call__(self, put_enabled: bool, max_message_length: int, max_depth: int, /) -> JavaLimits: ...


class JavaDestinationAttributes(Protocol):
    """org.pyjms.shim.activemq.DestinationAttributes: the limits the broker enforces."""

    def define(self, queue: JavaStringArg, limits: JavaLimits | None, /) -> None: ...


class JavaEmbeddedBroker(Protocol):
    """org.pyjms.shim.activemq.EmbeddedBroker."""

    def attributes(self) -> JavaDestinationAttributes: ...

    def connectUris(self) -> JavaStringArray: ...

    def service(self) -> JavaBrokerService: ...

    def subscribersOf(self, topic: JavaStringArg, /) -> JavaStringArray: ...

    def durableSelector(
        self, topic: JavaStringArg, client_id: JavaStringArg, name: JavaStringArg, /
    ) -> JavaString | None: ...

    def mayWrite(self, user: JavaStringArg | None, kind: JavaStringArg, name: JavaStringArg, /) -> bool: ...

    def removeDestination(self, kind: JavaStringArg, name: JavaStringArg, /) -> None: ...

    def stop(self) -> None: ...


class JavaEmbeddedBrokerClass(Protocol):
    def start(
        self,
        name: JavaStringArg,
        data_dir: JavaStringArg | None,
        connectors: list[str],
        users: list[list[str]] | None,
        rules: list[list[str]] | None,
        key_store: JavaStringArg | None,
        key_store_password: JavaStringArg | None,
        standing_by: Callable[[], None] | None,
        /,
    ) -> JavaEmbeddedBroker: ...


class JavaActiveMQMessage(Protocol):
    """org.apache.activemq.command.ActiveMQMessage, as a dead-letter browse reads it."""

    def getOriginalDestination(self) -> object | None: ...

    def getBrokerInTime(self) -> int: ...

    def getJMSMessageID(self) -> JavaString: ...
