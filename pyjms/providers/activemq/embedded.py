"""A real ActiveMQ broker inside this process's JVM (or as a standalone process, see cli).

Non-persistent by default, KahaDB when given a data directory, scheduler support on, every
connector (OpenWire, STOMP, AMQP 1.0) bound to 127.0.0.1, every topic virtualized for shared
subscriptions. It runs pyjms's services as IBM MQ runs them with the queue manager: the admin
service (destination attributes), the mark service (cooperative browsing) and the delay
processor.
"""

from __future__ import annotations

import itertools
import os
import secrets
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from pyjms.api.access import AdminCheck, WriteCheck, anyone, anyone_admin
from pyjms.api.destination import Destination
from pyjms.api.factory import ConnectionFactory
from pyjms.bridge import jvm
from pyjms.bridge.contract import (
    ADMIN_QUEUE,
    CONTROL_PREFIX,
    MARK_QUEUE,
)
from pyjms.bridge.errors import translate
from pyjms.browse.options import DEFAULT_MSG_MARK_BROWSE_INTERVAL_MS, check_interval, check_lease
from pyjms.browse.service import MarkService
from pyjms.delay.processor import DelayProcessor
from pyjms.errors import InvalidArgumentRuntimeException
from pyjms.providers.activemq.admin import AdministeredBroker, AdminService
from pyjms.providers.activemq.java_types import (
    JavaActiveMQDestinationClass,
    JavaBrokerService,
    JavaEmbeddedBroker,
    JavaEmbeddedBrokerClass,
    JavaLimits,
    JavaLimitsClass,
)
from pyjms.rules.attributes import Attributes, QueueAttributes

_counter = itertools.count(1)
#: every queue of pyjms's own services starts so (pyjms.bridge.contract)
SERVICES_PREFIX = "PYJMS."
#: how many messages an AMQP producer may send before the broker grants it more (the AMQP
#: connector's transport.producerCredit; ActiveMQ's default is 1,000). With 1,000, Qpid JMS's
#: non-persistent sends of 100-byte messages waited for credit: 25,738 and 27,420 msg/s against
#: 42,125 and 43,423 with 10,000 (docs/amqp.md). The broker renews a producer's credit only
#: as it takes in what was sent, so a broker whose memory is full still holds producers back.
AMQP_PRODUCER_CREDIT = 10_000
SYSTEM_USER = "pyjms-system"
SYSTEM_GROUP = "pyjms-admins"
#: users in this group administer pyjms's services: define and delete destination attributes,
#: change service settings (is_admin); what they may read and write is up to the access rules
ADMINS_GROUP = "admins"
#: users in this group may run pyjms's services beside the broker (a standalone
#: ``pyjms delay-processor`` or ``mark-service``): read pyjms's own queues, take part in their
#: leader election, and write wherever a delayed message may go
SERVICES_GROUP = "services"


@dataclass(frozen=True)
class AccessRule:
    """Who may read, write and administer (create) destinations matching an ActiveMQ pattern."""

    pattern: str
    read: Sequence[str] = ()
    write: Sequence[str] = ()
    admin: Sequence[str] = ()
    kind: str = "queue"  # or "topic"


class JavaWriteRights(Protocol):
    """The Java broker's answer to "may this user write there?" (both embedded brokers)."""

    def mayWrite(self, user: str | None, kind: str, name: str, /) -> bool: ...


class JavaRemovingBroker(JavaWriteRights, Protocol):
    """A Java broker that also removes destinations (both embedded brokers)."""

    def removeDestination(self, kind: str, name: str, /) -> None: ...


class BrokerRights:
    """Who may do what on an embedded broker, from its own users and access rules: the
    WriteCheck and AdminCheck (pyjms.api.access) the broker gives the services it runs."""

    _users: Mapping[str, tuple[str, Sequence[str]]] | None
    _broker: JavaWriteRights

    @property
    def authenticates(self) -> bool:
        """Whether clients must sign in (the broker was given users)."""
        return self._users is not None

    def may_write(self, user: str | None, destination: Destination) -> bool:
        """Whether the broker's own access rules let ``user`` write to ``destination``, as the
        broker decides a send (temporary destinations: every user it knows); True on a broker
        without users, where anyone may, and for pyjms's system user."""
        if self._users is None or user == SYSTEM_USER:
            return True
        return bool(self._broker.mayWrite(user, destination.scheme, destination.name))

    def is_admin(self, user: str | None) -> bool:
        """Whether ``user`` administers pyjms's services (is_administrator)."""
        return is_administrator(self._users, user)

    def is_service(self, user: str | None) -> bool:
        """Whether ``user`` runs pyjms's services beside the broker (SERVICES_GROUP), or
        administers them: it may ask what another user may write."""
        if is_administrator(self._users, user):
            return True
        assert self._users is not None  # is_administrator answers True without users
        return user is not None and user in self._users and SERVICES_GROUP in self._users[user][1]

    @property
    def write_check(self) -> WriteCheck:
        """may_write for the services this broker runs; ``anyone`` on a broker without users,
        which tells a service there is nothing to check."""
        return self.may_write if self.authenticates else anyone

    @property
    def admin_check(self) -> AdminCheck:
        """is_admin for the services this broker runs; ``anyone_admin`` without users."""
        return self.is_admin if self.authenticates else anyone_admin


class BrokerServices(BrokerRights):
    """What both embedded brokers share: their rights (BrokerRights), and pyjms's services,
    which they run as IBM MQ runs them with the queue manager: the admin service (destination
    attributes), the mark service (cooperative browsing) and the delay processor. Each acts for
    whoever asks, with that user's rights on this broker (docs/security.md)."""

    _system_user: tuple[str, str] | None
    _broker: JavaRemovingBroker
    admin: AdminService | None
    marks: MarkService | None
    delay_processor: DelayProcessor | None

    @property
    def vm_url(self) -> str:
        raise NotImplementedError

    def remove_destination(self, key: str) -> None:
        """Removes a queue or topic (queue://NAME or topic://NAME) from the broker (the admin
        service's remove, which first checks that it is empty and unused)."""
        kind, _, name = key.partition("://")
        try:
            self._broker.removeDestination(kind, name)
        except jvm.shim().JException as e:
            raise translate(e, f"removing {key}") from None

    def _local_factory(self) -> ConnectionFactory:
        """In-process connections, as pyjms's system user on a broker with users."""
        user, password = self._system_user or (None, None)
        return ConnectionFactory(self.vm_url, user, password)

    def _start_services(
        self, delay_processor: bool, mark_service: bool, mark_browse_interval: int, mark_lease_ms: int
    ) -> None:
        """Starts the services, each in the background so that they do not slow the start; each
        is made here, so that a stop() right after finds it. ``mark_service=False``: only mark
        services beside the broker (``pyjms mark-service``) stand for election."""
        # both brokers are AdministeredBrokers (pyjms.providers.activemq.admin)
        self.admin = AdminService(
            cast(AdministeredBroker, self),
            may_write=self.write_check,
            is_admin=self.admin_check,
            is_service=self.is_service,
        )
        self.admin.start(self._local_factory())  # starts its thread only
        self.marks = None
        if mark_service:
            self.marks = MarkService(
                self._local_factory(),
                mark_browse_interval,
                mark_lease_ms,
                may_write=self.write_check,
                is_admin=self.admin_check,
            )
            threading.Thread(target=self.marks.start, name="pyjms-marks-start", daemon=True).start()
        self.delay_processor = None
        if delay_processor:
            # it starts with the broker: nothing of another processor's can still be in flight
            self.delay_processor = DelayProcessor(
                self._local_factory(), fresh_broker=True, may_write=self.write_check
            )
            threading.Thread(
                target=self._start_delay_processor, name="pyjms-delay-start", daemon=True
            ).start()

    def _start_delay_processor(self) -> None:
        with jvm.java_thread():
            if self.delay_processor is not None:
                self.delay_processor.start()  # does nothing if stop() came first

    def _stop_services(self) -> None:
        for service in (self.delay_processor, self.admin, self.marks):
            if service is not None:
                service.stop()


_default: EmbeddedBroker | None = None
_default_lock = threading.Lock()


class EmbeddedBroker(BrokerServices):
    """An ActiveMQ BrokerService in this JVM. Clients in this process use ``vm_url``."""

    def __init__(
        self,
        *,
        port: int | None = None,
        stomp_port: int | None = None,
        amqp_port: int | None = None,
        data_dir: str | os.PathLike[str] | None = None,
        name: str | None = None,
        delay_processor: bool = True,
        mark_service: bool = True,
        users: Mapping[str, tuple[str, Sequence[str]]] | None = None,
        access: Sequence[AccessRule] = (),
        mark_browse_interval: int = DEFAULT_MSG_MARK_BROWSE_INTERVAL_MS,
        mark_lease_ms: int = 10_000,
        tls_keystore: str | os.PathLike[str] | None = None,
        tls_password: str | None = None,
        on_standby: Callable[[], None] | None = None,
    ) -> None:
        """``tls_keystore``: every connector speaks TLS only (ssl://, stomp+ssl://, amqp+ssl://),
        presenting this keystore's key (PKCS12 or JKS, its password ``tls_password``).

        ``on_standby``: ``data_dir`` is shared with another broker of a failover pair (ActiveMQ's
        shared file system master/slave): while that broker holds the store, this one calls
        ``on_standby`` once and waits here, and it starts (listens, runs its services) when it
        has taken the store over, within a second of that broker's death."""
        check_interval(mark_browse_interval)
        check_lease(mark_lease_ms)
        for label, p in (("port", port), ("stomp_port", stomp_port), ("amqp_port", amqp_port)):
            if p is not None and (isinstance(p, bool) or not isinstance(p, int) or not 0 <= p <= 65535):
                raise InvalidArgumentRuntimeException(f"{label} {p!r} is not a TCP port (0..65535)")
        if on_standby is not None and data_dir is None:
            raise InvalidArgumentRuntimeException(
                "on_standby: a broker of a failover pair shares a data_dir with the other; give one"
            )
        self.name = name or f"pyjms-{os.getpid()}-{next(_counter)}"
        self.data_dir = str(Path(data_dir).resolve()) if data_dir is not None else None
        keystore = None if tls_keystore is None else str(Path(tls_keystore).resolve())
        # with a keystore, no plain connector at all: a client that forgets TLS is refused
        tls = "" if keystore is None else "+ssl"
        connectors = []
        if port is not None:
            connectors.append(f"{'ssl' if tls else 'tcp'}://127.0.0.1:{port}")
        if stomp_port is not None:
            connectors.append(f"stomp{tls}://127.0.0.1:{stomp_port}")
        if amqp_port is not None:
            # AMQP 1.0 (Qpid JMS, any AMQP client). The jms transformer maps AMQP messages to
            # JMS ones, so OpenWire clients and pyjms's own services read what AMQP clients
            # send; ActiveMQ's default (native) would hand them the AMQP encoding as bytes.
            # A producer may send AMQP_PRODUCER_CREDIT messages before the broker grants more.
            connectors.append(
                f"amqp{tls}://127.0.0.1:{amqp_port}?transport.transformer=jms"
                f"&transport.producerCredit={AMQP_PRODUCER_CREDIT}"
            )
        s = jvm.start()
        Broker = cast(JavaEmbeddedBrokerClass, s.jclass("org.pyjms.shim.activemq.EmbeddedBroker"))
        self._system_user: tuple[str, str] | None = None
        self._users = users
        user_rows = rule_rows = None
        if users is not None:
            # pyjms's own services (delay processor, admin) sign in as a system user
            self._system_user = (SYSTEM_USER, secrets.token_hex(16))
            user_rows, rule_rows = security_rows(users, access, self._system_user)
        try:
            self._broker: JavaEmbeddedBroker = Broker.start(
                self.name, self.data_dir, connectors, user_rows, rule_rows, keystore, tls_password, on_standby
            )
        except s.JException as e:
            raise translate(e, f"cannot start broker {self.name}") from None
        self._stopped = False
        #: the URLs other processes reach this broker by, as ConnectionFactory takes them
        #: (Qpid JMS writes AMQP over TLS amqps://, where ActiveMQ's connector is amqp+ssl://)
        self.connect_uris: list[str] = [
            str(u).replace("amqp+ssl://", "amqps://", 1) for u in self._broker.connectUris()
        ]
        jvm.on_shutdown(self, self.stop, first=True)
        self._start_services(delay_processor, mark_service, mark_browse_interval, mark_lease_ms)

    @property
    def stopped(self) -> bool:
        """Whether stop() was called."""
        return self._stopped

    @property
    def vm_url(self) -> str:
        """In-process URL; create=false so a stopped broker is an error, not a new broker."""
        return f"vm://{self.name}?create=false"

    @property
    def tcp_url(self) -> str | None:
        for u in self.connect_uris:
            if u.startswith("tcp://"):
                return u
        return None

    @property
    def ssl_url(self) -> str | None:
        """OpenWire over TLS (ssl://127.0.0.1:P), on a broker started with a keystore."""
        return next((u for u in self.connect_uris if u.startswith("ssl://")), None)

    @property
    def stomp_url(self) -> str | None:
        for u in self.connect_uris:
            if u.startswith("stomp://"):
                return u
        return None

    @property
    def amqp_url(self) -> str | None:
        """The AMQP 1.0 connector's URL (amqp://127.0.0.1:PORT, amqps:// with TLS), as
        ConnectionFactory takes it."""
        return next((u for u in self.connect_uris if u.startswith(("amqp://", "amqps://"))), None)

    def service(self) -> JavaBrokerService:
        """The Java BrokerService, for pyjms components that administer the broker."""
        return self._broker.service()

    def subscribers_of(self, topic: str) -> list[str]:
        """The addresses of a topic's subscribers now (pyjms.providers.activemq.subscriptions)."""
        try:
            return [str(a) for a in self._broker.subscribersOf(topic)]
        except jvm.shim().JException as e:
            raise translate(e, f"subscribers of topic {topic}") from None

    def durable_selector(self, topic: str, client_id: str, name: str) -> str | None:
        """The selector of a durable subscription now, or None if it does not exist."""
        try:
            selector = self._broker.durableSelector(topic, client_id, name)
        except jvm.shim().JException as e:
            raise translate(e, f"durable subscription {client_id}:{name} on {topic}") from None
        return None if selector is None else str(selector)

    def enforce_limits(self, queue: str, attributes: Attributes | None) -> None:
        """Makes the broker refuse puts that break a queue's limits (None: no limits)."""
        self._broker.attributes().define(queue, queue_limits(attributes))

    def queue_depth(self, name: str) -> int:
        """Messages on a queue now (0 if it does not exist)."""
        s = jvm.shim()
        ActiveMQQueue = cast(
            JavaActiveMQDestinationClass, s.jclass("org.apache.activemq.command.ActiveMQQueue")
        )
        region = self._broker.service().getRegionBroker().getDestinationMap().get(ActiveMQQueue(name))
        return 0 if region is None else int(region.getDestinationStatistics().getMessages().getCount())

    def destinations(self) -> list[dict[str, Any]]:
        """Every queue and topic on the broker now (not temporary or advisory ones), with its
        depth, consumers, and the messages put to and taken from it, sorted by kind and name."""
        found = []
        for d in self._broker.service().getRegionBroker().getDestinationMap().values():
            dest = d.getActiveMQDestination()
            if dest.isTemporary() or str(dest.getPhysicalName()).startswith("ActiveMQ.Advisory."):
                continue
            stats = d.getDestinationStatistics()
            found.append(
                {
                    "destination": str(dest.getQualifiedName()),
                    "depth": int(stats.getMessages().getCount()),
                    "consumers": int(stats.getConsumers().getCount()),
                    "enqueued": int(stats.getEnqueues().getCount()),
                    "dequeued": int(stats.getDequeues().getCount()),
                }
            )
        return sorted(found, key=lambda row: row["destination"])

    def has_destination(self, key: str) -> bool:
        """Whether the broker has the destination (queue://NAME or topic://NAME) now."""
        scheme, _, name = key.partition("://")
        s = jvm.shim()
        dest = cast(
            JavaActiveMQDestinationClass,
            s.jclass(
                "org.apache.activemq.command.ActiveMQTopic"
                if scheme == "topic"
                else "org.apache.activemq.command.ActiveMQQueue"
            ),
        )(name)
        return self._broker.service().getRegionBroker().getDestinationMap().get(dest) is not None

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        jvm.forget(self)
        self._stop_services()
        try:
            self._broker.stop()
        except Exception:  # stopping is best effort at shutdown
            pass

    def __enter__(self) -> EmbeddedBroker:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def is_administrator(users: Mapping[str, tuple[str, Sequence[str]]] | None, user: str | None) -> bool:
    """Whether ``user`` administers pyjms's services on a broker with these users: the system
    user and the members of ADMINS_GROUP; anyone on a broker without users (None)."""
    if users is None or user == SYSTEM_USER:
        return True
    return user is not None and user in users and ADMINS_GROUP in users[user][1]


def security_rows(
    users: Mapping[str, tuple[str, Sequence[str]]], access: Sequence[AccessRule], system_user: tuple[str, str]
) -> tuple[list[list[str]], list[list[str]]]:
    """The Java rows for users and access rules (either broker), with pyjms's own services'
    system user, who may do everything. Every signed-in user may stage a delayed message (D13:
    only the processor reads the staging queue), ping the processor, and ask the admin and mark
    services (a delayed send reads its target's attributes; browse with mark claims marks). Only
    the services read their queues: the system user's group, and SERVICES_GROUP, whose members
    may run a service beside the broker (a delay processor also writes wherever a delayed
    message goes, and to the dead-letter queue). The rest of PYJMS.* (slots, leader election,
    the mark service's epoch) is theirs alone. Which user may define or delete attributes is the admin
    service's question (is_administrator), not a destination's rule."""
    user_rows = [[u, pw, ",".join(groups)] for u, (pw, groups) in users.items()]
    user_rows.append([*system_user, SYSTEM_GROUP])
    everyone = ",".join(sorted({g for _, gs in users.values() for g in gs} | {SYSTEM_GROUP}))
    keepers = f"{SYSTEM_GROUP},{SERVICES_GROUP}"
    rule_rows = [[r.kind, r.pattern, ",".join(r.read), ",".join(r.write), ",".join(r.admin)] for r in access]
    rule_rows += [
        ["queue", ">", SYSTEM_GROUP, keepers, keepers],
        ["topic", ">", SYSTEM_GROUP, keepers, keepers],
        ["queue", "SYSTEM.DDELAY.>", keepers, everyone, everyone],
        ["queue", CONTROL_PREFIX + ">", keepers, everyone, everyone],
        ["queue", ADMIN_QUEUE, keepers, everyone, everyone],
        ["queue", MARK_QUEUE, keepers, everyone, everyone],
        # every queue of pyjms's own (slots, leader election, the mark service's epoch...) is
        # the services' alone, besides the request queues above that everyone writes
        ["queue", SERVICES_PREFIX + ">", keepers, keepers, keepers],
    ]
    return user_rows, rule_rows


def queue_limits(attributes: Attributes | None) -> JavaLimits | None:
    """The Java limits the broker enforces for a queue's attributes (None: no limits)."""
    if not isinstance(attributes, QueueAttributes):
        return None
    Limits = cast(JavaLimitsClass, jvm.shim().jclass("org.pyjms.shim.activemq.DestinationAttributes$Limits"))
    return Limits(bool(attributes.put_enabled), int(attributes.max_msg_length), int(attributes.max_depth))


def default_broker() -> EmbeddedBroker:
    """The process-wide embedded broker behind ConnectionFactory() with no URL."""
    global _default
    with _default_lock:
        if _default is None or _default.stopped:
            _default = EmbeddedBroker()
        return _default
