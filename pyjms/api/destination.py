"""Destinations: queues and topics, named by the key that crosses to the shim."""

from __future__ import annotations

from collections.abc import Callable
from typing import overload

from pyjms.errors import InvalidDestinationRuntimeException


class Destination:
    """A queue or topic. Equal destinations have equal kinds and names."""

    __slots__ = ("name", "key")
    scheme = ""

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name.strip():
            raise InvalidDestinationRuntimeException(
                f"a destination name must be a non-empty string, got {name!r}"
            )
        self.name = name
        #: how the shim names it, e.g. ``queue://ORDERS`` (made once: every send and hash uses it)
        self.key = f"{self.scheme}://{name}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Destination) and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def __str__(self) -> str:
        return self.key


class Queue(Destination):
    __slots__ = ()
    scheme = "queue"

    def get_queue_name(self) -> str:
        return self.name


class Topic(Destination):
    __slots__ = ()
    scheme = "topic"

    def get_topic_name(self) -> str:
        return self.name


class TemporaryQueue(Queue):
    """A queue that lives as long as the connection that made it."""

    __slots__ = ("_delete",)
    scheme = "temp-queue"

    def __init__(self, name: str, delete: Callable[[Destination], None] | None = None) -> None:
        """``delete``: how the context that made it deletes it (None: made elsewhere)."""
        super().__init__(name)
        self._delete = delete

    def delete(self) -> None:
        deleter = self._delete
        if deleter is None:
            raise InvalidDestinationRuntimeException(f"{self.key} was not created by this process")
        deleter(self)


class TemporaryTopic(Topic):
    __slots__ = ("_delete",)
    scheme = "temp-topic"

    def __init__(self, name: str, delete: Callable[[Destination], None] | None = None) -> None:
        super().__init__(name)
        self._delete = delete

    delete = TemporaryQueue.delete


_BY_SCHEME: dict[str, type[Destination]] = {
    c.scheme: c for c in (Queue, Topic, TemporaryQueue, TemporaryTopic)
}


@overload
def from_key(key: str) -> Destination: ...
@overload
def from_key(key: None) -> None: ...
@overload
def from_key(key: str | None) -> Destination | None: ...
def from_key(key: str | None) -> Destination | None:
    """The destination for a shim key such as ``queue://ORDERS``."""
    if key is None:
        return None
    scheme, sep, name = key.partition("://")
    cls = _BY_SCHEME.get(scheme)
    if not sep or cls is None:
        raise InvalidDestinationRuntimeException(f"not a destination key: {key!r}")
    return cls(name)


def unprefixed(name: str, kind: str) -> str:
    """NAME from ``kind://NAME`` (as users write destinations: JMSContext.create_queue and
    create_topic); the other kind's prefix is an error."""
    if isinstance(name, str) and "://" in name:
        scheme, _, rest = name.partition("://")
        if scheme == kind:
            return rest
        if scheme in ("queue", "topic"):
            raise InvalidDestinationRuntimeException(f"{name!r} names a {scheme}, not a {kind}")
    return name
