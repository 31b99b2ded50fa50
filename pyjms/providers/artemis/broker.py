"""A real Apache Artemis broker inside this process's JVM (or standalone: ``pyjms broker
--provider artemis``), with the same shape and services as the ActiveMQ one (pyjms.broker).

Non-persistent by default, journaled with a data directory. It listens in-vm (``vm://N``) and,
given a port, on 127.0.0.1 only, CORE and AMQP 1.0 on that one port. Messages delivered
``max-delivery-attempts`` times (Artemis's default, 10) go to the dead-letter queue ``DLQ``;
expired messages stay on their queue (counting towards its depth) until a get finds them, and are
then dropped, as IBM MQ discards them, unless an expiry queue is named.
"""

from __future__ import annotations

import itertools
import os
import secrets
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from pyjms.bridge import jvm
from pyjms.bridge.errors import translate
from pyjms.bridge.urls import ARTEMIS
from pyjms.browse.options import DEFAULT_MSG_MARK_BROWSE_INTERVAL_MS, check_interval, check_lease
from pyjms.errors import InvalidArgumentRuntimeException
from pyjms.providers.activemq.embedded import SYSTEM_USER, AccessRule, BrokerServices, security_rows
from pyjms.providers.artemis.java_types import JavaEmbeddedArtemis, JavaEmbeddedArtemisClass
from pyjms.rules.attributes import Attributes, QueueAttributes

_counter = itertools.count(1)
DEAD_LETTER_QUEUE = "DLQ"


class EmbeddedArtemisBroker(BrokerServices):
    """An Artemis server in this JVM. Clients in this process use ``vm_url``; others use the
    URLs in ``connect_uris`` (``artemis+tcp://127.0.0.1:P`` for the core protocol, which
    pyjms.bridge.urls tells apart from ActiveMQ's tcp://, and ``amqp://127.0.0.1:P``)."""

    provider = ARTEMIS

    def __init__(
        self,
        *,
        port: int | None = None,
        data_dir: str | os.PathLike[str] | None = None,
        name: str | None = None,
        users: Mapping[str, tuple[str, Sequence[str]]] | None = None,
        access: Sequence[AccessRule] = (),
        dead_letter_queue: str = DEAD_LETTER_QUEUE,
        expiry_queue: str | None = None,
        services: bool = True,
        delay_processor: bool = True,
        mark_service: bool = True,
        mark_browse_interval: int = DEFAULT_MSG_MARK_BROWSE_INTERVAL_MS,
        mark_lease_ms: int = 10_000,
        tls_keystore: str | os.PathLike[str] | None = None,
        tls_password: str | None = None,
        on_standby: Callable[[], None] | None = None,
    ) -> None:
        """``tls_keystore``: the TCP port speaks TLS only (CORE and AMQP), presenting this
        keystore's key (PKCS12, or JKS for a .jks file; its password ``tls_password``).

        ``on_standby``: ``data_dir`` is shared with another broker of a failover pair (Artemis's
        shared-store HA, each broker a primary): while that broker holds the store, this one
        calls ``on_standby`` once and waits here, and it starts (listens, runs its services) when
        it has taken the store over, within a second of that broker's death."""
        check_interval(mark_browse_interval)
        check_lease(mark_lease_ms)
        if port is not None and (
            isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535
        ):
            raise InvalidArgumentRuntimeException(
                f"port {port!r} is not a TCP port (0..65535)", values={"port": port}
            )
        for label, queue in (("dead_letter_queue", dead_letter_queue), ("expiry_queue", expiry_queue)):
            if queue is not None and (not isinstance(queue, str) or not queue.strip()):
                raise InvalidArgumentRuntimeException(
                    f"{label} {queue!r} must be a queue name", values={label: queue}
                )
        if on_standby is not None and data_dir is None:
            raise InvalidArgumentRuntimeException(
                "on_standby: a broker of a failover pair shares a data_dir with the other; give one"
            )
        self.name = name or f"pyjms-artemis-{os.getpid()}-{next(_counter)}"
        self.data_dir = str(Path(data_dir).resolve()) if data_dir is not None else None
        self.dead_letter_queue = dead_letter_queue
        self.expiry_queue = expiry_queue
        s = jvm.start(providers=(ARTEMIS,))
        Broker = cast(JavaEmbeddedArtemisClass, s.jclass("org.pyjms.shim.artemis.EmbeddedArtemis"))
        self._system_user: tuple[str, str] | None = None
        self._users = users
        keystore = None if tls_keystore is None else str(Path(tls_keystore).resolve())
        user_rows = rule_rows = None
        if users is not None:
            self._system_user = (SYSTEM_USER, secrets.token_hex(16))
            user_rows, rule_rows = security_rows(users, access, self._system_user)
        try:
            self._broker: JavaEmbeddedArtemis = Broker.start(
                self.name,
                self.data_dir,
                -1 if port is None else port,
                user_rows,
                rule_rows,
                dead_letter_queue,
                expiry_queue,
                keystore,
                tls_password,
                on_standby,
            )
        except s.JException as e:
            raise translate(e, f"cannot start Artemis broker {self.name}") from None
        self._stopped = False
        self._vm_url = str(self._broker.vmUrl())
        tcp_port = int(self._broker.tcpPort())
        #: the URLs other processes reach this broker by, exactly as ConnectionFactory takes them
        # over TLS: artemis+ssl:// (pyjms.bridge.urls gives Artemis's client tcp://…?sslEnabled=true)
        tcp, amqp = ("tcp", "amqp") if keystore is None else ("ssl", "amqps")
        self.connect_uris: list[str] = (
            [f"{ARTEMIS}+{tcp}://127.0.0.1:{tcp_port}", f"{amqp}://127.0.0.1:{tcp_port}"]
            if tcp_port >= 0
            else []
        )
        jvm.on_shutdown(self, self.stop, first=True)
        self.admin = self.marks = self.delay_processor = None
        if services:
            self._start_services(delay_processor, mark_service, mark_browse_interval, mark_lease_ms)

    @property
    def vm_url(self) -> str:
        """In-process URL (this JVM's Artemis in-VM acceptor)."""
        return self._vm_url

    @property
    def tcp_url(self) -> str | None:
        """The core protocol URL (artemis+tcp://127.0.0.1:P), or None without a TCP port."""
        return next((u for u in self.connect_uris if u.startswith(f"{ARTEMIS}+tcp://")), None)

    @property
    def ssl_url(self) -> str | None:
        """The core protocol over TLS (artemis+ssl://127.0.0.1:P), on a broker with a keystore."""
        return next((u for u in self.connect_uris if u.startswith(f"{ARTEMIS}+ssl://")), None)

    @property
    def amqp_url(self) -> str | None:
        return next((u for u in self.connect_uris if u.startswith(("amqp://", "amqps://"))), None)

    def queue_depth(self, name: str) -> int:
        """Messages on a queue now (0 if it does not exist)."""
        return int(self._broker.queueDepth(name))

    def queues_of(self, address: str) -> list[str]:
        """The queues bound to an address now: a topic's subscriptions (named for the shared and
        durable ones)."""
        return [str(q) for q in self._broker.queuesOf(address)]

    def enforce_limits(self, queue: str, attributes: Attributes | None) -> None:
        """Makes the broker refuse puts that break a queue's limits (None: no limits)."""
        if attributes is None:
            self._broker.limits().clear(queue)
        else:
            # the admin service's for a queue (a topic's for a queue fails here: a malformed request)
            limits = cast(QueueAttributes, attributes)
            self._broker.limits().define(
                queue, bool(limits.put_enabled), int(limits.max_msg_length), int(limits.max_depth)
            )

    def destinations(self) -> list[dict[str, Any]]:
        """Every queue and topic on the broker now (not temporary or internal ones), with its
        depth, consumers, and the messages put to and taken from it, sorted by kind and name (a
        topic's figures are its subscription queues' sums)."""
        found = []
        for row in self._broker.destinations():
            kind, name, depth, consumers, put, taken = str(row).split("\t")
            found.append(
                {
                    "destination": f"{kind}://{name}",
                    "depth": int(depth),
                    "consumers": int(consumers),
                    "enqueued": int(put),
                    "dequeued": int(taken),
                }
            )
        return sorted(found, key=lambda row: row["destination"])

    def has_destination(self, key: str) -> bool:
        """Whether the broker has the destination (queue://NAME or topic://NAME) now."""
        kind, _, name = key.partition("://")
        return bool(self._broker.hasDestination(kind, name))

    def subscribers_of(self, topic: str) -> list[str]:
        """The addresses of a topic's subscribers now (pyjms.providers.activemq.subscriptions):
        each subscription queue's filter carries its subscriber's address."""
        try:
            return [str(a) for a in self._broker.subscribersOf(topic)]
        except jvm.shim().JException as e:
            raise translate(e, f"subscribers of topic {topic}") from None

    def durable_selector(self, topic: str, client_id: str, name: str) -> str | None:
        """The selector of a durable subscription now (its queue's filter), or None."""
        try:
            selector = self._broker.durableSelector(topic, client_id, name)
        except jvm.shim().JException as e:
            raise translate(e, f"durable subscription {client_id}.{name} of topic {topic}") from None
        return None if selector is None else str(selector)

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

    def __enter__(self) -> EmbeddedArtemisBroker:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
