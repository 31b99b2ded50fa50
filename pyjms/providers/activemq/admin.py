"""Destination attributes in IBM MQ's terms (pyjms.rules.attributes), defined on a pyjms broker.

The broker refuses ordinary puts that break a queue's limits (put inhibited 2051, too big
2030, full 2053: activemq.DestinationAttributes in the shim); pyjms.rules applies the
delay-specific rules (D05, D22, D23) at send time using these attributes, which the ActiveMQ
plug-in reads (ActiveMQPlugin.target_attributes, through an AttributeCache per context).

Attributes live in the broker's process and are reached over the wire: an admin service
answers JSON requests on the queue PYJMS.ADMIN, so ``pyjms admin --url`` works against a
standalone broker too. A destination with no attributes has no limits.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import asdict
from typing import Any, Protocol, cast

from pyjms.api.access import AdminCheck, WriteCheck, admins, anyone, anyone_admin, temporary_only
from pyjms.api.context import JMSContext
from pyjms.api.destination import Destination, Queue, Topic, from_key
from pyjms.api.factory import ConnectionFactory
from pyjms.api.requests import ServiceClient, ServiceUnavailable, brief, serve
from pyjms.bridge import jvm
from pyjms.bridge.contract import ADMIN_QUEUE
from pyjms.errors import (
    IllegalStateRuntimeException,
    InvalidArgumentRuntimeException,
    InvalidDestinationRuntimeException,
    JMSRuntimeException,
    JMSSecurityRuntimeException,
)
from pyjms.reasons import MQRC
from pyjms.rules.attributes import Attributes, QueueAttributes, TopicAttributes, from_values

__all__ = ["Admin", "AdminService", "AttributeCache", "QueueAttributes", "TopicAttributes", "ADMIN_QUEUE"]


class AdministeredBroker(Protocol):
    """What the admin service asks of the broker it runs in (an ActiveMQ or Artemis one)."""

    def enforce_limits(self, queue: str, attributes: Attributes | None) -> None: ...

    def queue_depth(self, name: str) -> int: ...

    def destinations(self) -> list[dict[str, Any]]: ...

    def subscribers_of(self, topic: str) -> list[str]: ...

    def has_destination(self, key: str) -> bool: ...

    def durable_selector(self, topic: str, client_id: str, name: str) -> str | None: ...

    def remove_destination(self, key: str) -> None: ...


#: the longest name (a destination key, a client id, a subscription name) a request may carry
MAX_NAME = 1024
#: rights answers a BrokerWriteCheck keeps at most
_MOST_ANSWERS = 10_000
_log = logging.getLogger("pyjms.broker")
#: each attribute a define may set, and the type its value must have
_ATTRIBUTE_TYPES: dict[str, dict[str, type]] = {
    "queue": {
        "max_depth": int,
        "max_msg_length": int,
        "put_enabled": bool,
        "clustered": bool,
        "default_bind": str,
        "depth": int,  # the current depth, as describe reads it: sent back, never set
    },
    "topic": {"persistent_delivery": str, "nonpersistent_delivery": str},
}


class AdminService:
    """Runs in the broker's process: keeps the attributes and answers PYJMS.ADMIN requests."""

    def __init__(
        self,
        broker: AdministeredBroker,
        administrator: str | None = None,
        *,
        is_admin: AdminCheck | None = None,
        may_write: WriteCheck = temporary_only,
        is_service: AdminCheck | None = None,
    ) -> None:
        """``is_admin``: who may define and delete (the broker stamps each request's
        JMSXUserID); ``may_write``: where the service may answer a user (pyjms.api.access), and
        what it answers a "may-write" question with; ``is_service``: who may ask it about
        another user's rights (pyjms's services beside the broker; by default the admins).
        ``administrator`` (the older form): the one user who may define and delete, None for
        anyone; ``is_admin`` wins when both are given."""
        self.broker = broker
        if is_admin is None:
            is_admin = anyone_admin if administrator is None else admins((administrator,))
        self.is_admin = is_admin
        self.is_service = is_service or is_admin
        self.may_write = may_write
        self._defined: dict[str, Attributes] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def define(self, destination: Destination, attributes: Attributes | None) -> None:
        with self._lock:
            if attributes is None:
                self._defined.pop(destination.key, None)
            else:
                self._defined[destination.key] = attributes
        if isinstance(destination, Queue):
            self.broker.enforce_limits(destination.name, attributes)

    def remove(self, destination: Destination) -> None:
        """Removes an empty, unused queue or topic from the broker, with its attributes, as IBM
        MQ's DELETE QLOCAL or DELETE TOPIC: one that holds messages is refused with
        MQRC_Q_NOT_EMPTY (2055), one with a consumer or subscription with MQRC_OBJECT_IN_USE
        (2042), one the broker does not have with MQRC_UNKNOWN_OBJECT_NAME (2085)."""
        row = next((d for d in self.broker.destinations() if d["destination"] == destination.key), None)
        if row is None:
            raise InvalidDestinationRuntimeException(
                f"{destination} does not exist", reason=MQRC.UNKNOWN_OBJECT_NAME
            )
        if row["depth"]:
            raise IllegalStateRuntimeException(
                f"{destination} holds {row['depth']} message(s): only an empty one is removed",
                reason=MQRC.Q_NOT_EMPTY,
            )
        if row["consumers"] or (
            isinstance(destination, Topic) and self.broker.subscribers_of(destination.name)
        ):
            raise IllegalStateRuntimeException(
                f"{destination} has consumers or subscriptions: it is in use",
                reason=MQRC.OBJECT_IN_USE,
            )
        self.broker.remove_destination(destination.key)
        self.define(destination, None)

    def describe(self, destination: Destination) -> Attributes | None:
        with self._lock:
            a = self._defined.get(destination.key)
        if isinstance(a, QueueAttributes):
            return QueueAttributes(**{**asdict(a), "depth": self.broker.queue_depth(destination.name)})
        return a

    def handle(self, request: dict[str, Any], sender: str | None = None) -> dict[str, Any]:
        """One request (pyjms.api.requests): every field is checked before it is used."""
        op = request["op"]  # serve checked it is a text
        if op == "destinations":  # `pyjms queues`: read-only, for every user
            return {"ok": True, "destinations": self.broker.destinations()}
        if op not in (
            "subscribers",
            "exists",
            "durable-selector",
            "define",
            "delete",
            "remove",
            "describe",
            "may-write",
        ):
            raise InvalidArgumentRuntimeException(f"unknown admin operation {op[:64]!r}")
        dest = _destination(request.get("destination"))
        if op in ("subscribers", "durable-selector") and not isinstance(dest, Topic):
            raise InvalidArgumentRuntimeException(f"admin operation {op!r} needs a topic, not {dest}")
        if op == "may-write":  # a delay processor beside the broker: may its stager write there?
            user = request.get("user")
            if (user is not None and not isinstance(user, str)) or (
                isinstance(user, str) and len(user) > MAX_NAME
            ):
                raise InvalidArgumentRuntimeException(
                    f"admin request field 'user' must be a text of at most {MAX_NAME} characters, or null, "
                    f"got {brief(user)}",
                    reason=MQRC.FORMAT_ERROR,
                )
            if user != sender and not self.is_service(sender):
                raise JMSSecurityRuntimeException(
                    f"user {sender!r} may not ask what user {user!r} may write: only pyjms's services "
                    "may (MQRC_NOT_AUTHORIZED)",
                    reason=MQRC.NOT_AUTHORIZED,
                )
            # "checks": whether the broker has rules to check at all (one without users has none)
            return {
                "ok": True,
                "may_write": bool(self.may_write(user, dest)),
                "checks": self.may_write is not anyone,
            }
        if op == "subscribers":  # D16: who a delayed publication is staged for
            return {"ok": True, "subscribers": self.broker.subscribers_of(dest.name)}
        if op == "exists":  # strict mode (create_destinations=False): made by use, or defined
            with self._lock:
                defined = dest.key in self._defined
            return {"ok": True, "exists": defined or self.broker.has_destination(dest.key)}
        if op == "durable-selector":  # D16: a durable subscription keeps its address
            client_id = _name(request.get("client_id"), "client_id")
            name = _name(request.get("name"), "name")
            return {"ok": True, "selector": self.broker.durable_selector(dest.name, client_id, name)}
        if op in ("define", "delete", "remove") and not self.is_admin(sender):
            raise JMSSecurityRuntimeException(
                f"user {sender!r} may not {op} {dest}: only the broker's administrator may (MQRC_NOT_AUTHORIZED)",
                reason=MQRC.NOT_AUTHORIZED,
            )
        if op == "remove":
            self.remove(dest)
            return {"ok": True, "attributes": None}
        if op == "define":
            self.define(dest, _attributes(dest, request.get("kind"), request.get("attributes")))
        elif op == "delete":
            self.define(dest, None)
        a = self.describe(dest)
        return {"ok": True, "attributes": None if a is None else asdict(a)}

    def start(self, factory: ConnectionFactory) -> AdminService:
        def run() -> None:
            with jvm.java_thread():
                serve(factory, Queue(ADMIN_QUEUE), self.handle, self._stop, may_write=self.may_write)

        self._thread = threading.Thread(target=run, name="pyjms-admin", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)


def _name(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_NAME:
        raise InvalidArgumentRuntimeException(
            f"admin request field {field!r} must be a text of 1..{MAX_NAME} characters, got {brief(value)}",
            reason=MQRC.FORMAT_ERROR,
        )
    return value


def _destination(key: Any) -> Queue | Topic:
    """The queue or topic a request's "destination" names (queue://NAME or topic://NAME)."""
    dest = from_key(_name(key, "destination"))
    if type(dest) not in (Queue, Topic):  # a temporary destination has no attributes
        raise InvalidArgumentRuntimeException(
            f"admin request destination {brief(key)} must be queue://NAME or topic://NAME",
            reason=MQRC.FORMAT_ERROR,
        )
    return cast("Queue | Topic", dest)


def _attributes(dest: Queue | Topic, kind: Any, values: Any) -> Attributes:
    """The attributes a define sets: each known field of the right type, for the right kind."""
    want = "queue" if isinstance(dest, Queue) else "topic"
    if kind != want:
        raise InvalidArgumentRuntimeException(
            f"define {dest}: kind must be {want!r}, got {brief(kind)}", reason=MQRC.FORMAT_ERROR
        )
    if not isinstance(values, dict):
        raise InvalidArgumentRuntimeException(
            f"define {dest}: attributes must be a JSON object, got {brief(values)}", reason=MQRC.FORMAT_ERROR
        )
    types = _ATTRIBUTE_TYPES[want]
    for field, value in values.items():
        t = types.get(field)
        if t is None or type(value) is not t:  # type(): a bool is no int here, nor an int a bool
            raise InvalidArgumentRuntimeException(
                f"define {dest}: attribute {brief(field)} = {brief(value)} is not one of "
                f"{', '.join(f'{n} ({t.__name__})' for n, t in types.items())}",
                reason=MQRC.FORMAT_ERROR,
            )
    return from_values(want, values)


class Admin:
    """Defines and reads destination attributes on a pyjms broker, over the wire."""

    def __init__(self, factory: ConnectionFactory, timeout_ms: int = 5000) -> None:
        self.factory = factory
        self.timeout_ms = timeout_ms

    def _request(self, op: str, destination: Destination, **extra: Any) -> Attributes | None:
        with self.factory.create_context() as ctx:
            return request(ctx, op, destination, self.timeout_ms, **extra)

    def define_queue(self, queue: Queue | str, **attributes: Any) -> QueueAttributes:
        q = queue if isinstance(queue, Queue) else Queue(queue)
        a = QueueAttributes(**attributes)
        return self._request("define", q, kind="queue", attributes=asdict(a))  # type: ignore[return-value]

    def define_topic(self, topic: Topic | str, **attributes: Any) -> TopicAttributes:
        t = topic if isinstance(topic, Topic) else Topic(topic)
        a = TopicAttributes(**attributes)
        return self._request("define", t, kind="topic", attributes=asdict(a))  # type: ignore[return-value]

    def describe(self, destination: Destination) -> Attributes | None:
        return self._request("describe", destination)

    def delete(self, destination: Destination) -> None:
        """Removes the destination's attributes (its limits); the destination stays."""
        self._request("delete", destination)

    def remove(self, destination: Destination) -> None:
        """Removes an empty, unused destination from the broker, with its attributes (IBM MQ's
        DELETE QLOCAL or DELETE TOPIC; 2055 if it holds messages, 2042 if it is in use)."""
        self._request("remove", destination)

    def destinations(self) -> list[dict[str, Any]]:
        """Every queue and topic on the broker: destination (queue://NAME), depth, consumers,
        enqueued and dequeued counts."""
        with self.factory.create_context() as ctx:
            return list(_ask(ctx, "destinations", Queue(ADMIN_QUEUE), self.timeout_ms)["destinations"])

    def may_write(self, user: str | None, destination: Destination) -> bool:
        """Whether the broker's access rules let ``user`` write to ``destination`` (asked by
        pyjms's services beside the broker, or by ``user`` itself; others get 2035)."""
        with self.factory.create_context() as ctx:
            return bool(_ask(ctx, "may-write", destination, self.timeout_ms, user=user)["may_write"])


class BrokerWriteCheck:
    """A WriteCheck (pyjms.api.access) answered by a pyjms broker's admin service, for a
    service that runs beside the broker (a standalone delay processor): the broker's own
    rules decide, as they would for a service in the broker's process. Answers are kept for
    ``keep_s`` seconds (a staged message's target is asked once, not per message); a broker
    that does not answer refuses (nothing is written for a user whose rights are unknown)."""

    def __init__(self, factory: ConnectionFactory, keep_s: float = 5.0, timeout_ms: int = 5000) -> None:
        self._admin = Admin(factory, timeout_ms)
        self._keep_s = keep_s
        self._answers: dict[tuple[str | None, str], tuple[bool, float]] = {}
        self._lock = threading.Lock()

    def __call__(self, user: str | None, destination: Destination) -> bool:
        key = (user, destination.key)
        now = time.monotonic()
        with self._lock:
            known = self._answers.get(key)
        if known is not None and now - known[1] < self._keep_s:
            return known[0]
        try:
            answer = self._admin.may_write(user, destination)
        except JMSRuntimeException as e:
            _log.warning("cannot ask the broker whether %r may write %s: %s; refused", user, destination, e)
            return False
        with self._lock:
            if len(self._answers) >= _MOST_ANSWERS:
                self._answers.clear()
            self._answers[key] = (answer, now)
        return answer

    def answers(self, timeout_ms: int = 2000) -> bool:
        """Whether the broker answers rights questions and has rules to check (a pyjms broker
        with users, where this service's user is in group services)."""
        try:
            with self._admin.factory.create_context() as ctx:
                answer = _ask(ctx, "may-write", Queue(ADMIN_QUEUE), timeout_ms, user=None)
        except JMSRuntimeException:
            return False
        return bool(answer.get("checks"))


def request(
    ctx: JMSContext, op: str, destination: Destination, timeout_ms: int, **extra: Any
) -> Attributes | None:
    """One admin request/reply on ctx; raises if no pyjms broker answers."""
    a = _ask(ctx, op, destination, timeout_ms, **extra).get("attributes")
    if a is None:
        return None
    return from_values("queue" if isinstance(destination, Queue) else "topic", a)


def exists(ctx: JMSContext, destination: Destination, timeout_ms: int) -> bool:
    """Whether the broker has the destination, or attributes defined for it."""
    return bool(_ask(ctx, "exists", destination, timeout_ms)["exists"])


def subscribers(ctx: JMSContext, topic: Topic, timeout_ms: int) -> list[str]:
    """The addresses of a topic's subscribers now (pyjms.providers.activemq.subscriptions)."""
    return [str(a) for a in _ask(ctx, "subscribers", topic, timeout_ms)["subscribers"]]


def durable_selector(ctx: JMSContext, topic: Topic, client_id: str, name: str, timeout_ms: int) -> str | None:
    """The selector of a durable subscription now, or None if there is none."""
    selector = _ask(ctx, "durable-selector", topic, timeout_ms, client_id=client_id, name=name)["selector"]
    return None if selector is None else str(selector)


def _ask(ctx: JMSContext, op: str, destination: Destination, timeout_ms: int, **extra: Any) -> dict[str, Any]:
    with ServiceClient(
        ctx,
        Queue(ADMIN_QUEUE),
        timeout_ms=timeout_ms,
        serves="a pyjms broker's admin service (destination attributes need a pyjms broker)",
    ) as admin:
        return admin.call(op, destination=destination.key, **extra)


class AttributeCache:
    """Per context: attributes of targets, read at most once a second each (delayed sends)."""

    TTL_S = 1.0
    #: how long an admin request may take. A loaded machine answered in more than the 500 ms
    #: this once was, and the silence was taken for "no pyjms broker": every IBM MQ rule was
    #: then skipped for the context's life (D23 passed a delayed ALLDUR publish)
    TIMEOUT_MS = 5000

    def __init__(self) -> None:
        self._cache: dict[str, tuple[float, Attributes | None]] = {}
        self._unavailable = False

    def get(
        self, ctx: JMSContext, destination: Destination, *, service_known: bool = False
    ) -> Attributes | None:
        """``service_known``: the broker is known to run the admin service, so its silence is
        an error, not a sign that there are no attributes to check."""
        if self._unavailable:
            return None
        now = time.monotonic()
        hit = self._cache.get(destination.key)
        if hit is not None and now - hit[0] < self.TTL_S:
            return hit[1]
        try:
            a = request(ctx, "describe", destination, self.TIMEOUT_MS)
        except ServiceUnavailable:
            if service_known:
                raise  # rules that cannot be checked are not skipped
            self._unavailable = True  # not a pyjms broker: no attributes, no such checks
            return None
        self._cache[destination.key] = (now, a)
        return a
