"""How a context names destinations on its channel: each destination checked once (a Queue or
Topic of this API; in strict mode, one the broker has) and its key made a Java String once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyjms.api.destination import Destination, TemporaryQueue, TemporaryTopic
from pyjms.bridge.channel import Channel
from pyjms.bridge.java_types import JavaString
from pyjms.errors import InvalidDestinationRuntimeException
from pyjms.reasons import MQRC

#: destination keys kept as Java Strings at most (a sender to ever new destinations starts
#: again rather than grow without end)
MOST_WIRE_KEYS = 10_000
#: the queues pyjms's own services (admin, marks, control) answer on: never checked in strict mode
SERVICE_PREFIX = "PYJMS."


class WireKeys:
    """The destination keys of one session. ``exists``: in strict mode, whether the broker has
    a destination (True, False, or None when it cannot tell); None: any destination is made by use."""

    def __init__(self, channel: Channel, exists: Callable[[Destination], bool | None] | None) -> None:
        self._channel = channel
        self._exists = exists
        self._existing: set[str] = set()  # strict mode: destinations the broker said it has
        self._keys: dict[str, JavaString] = {}

    def key(self, destination: Any) -> JavaString:
        if not isinstance(destination, Destination):
            raise InvalidDestinationRuntimeException(
                f"destination must be a Queue or Topic from this API, got {destination!r}"
            )
        if self._exists is not None and destination.key not in self._existing:
            self._require_existing(destination, self._exists)
        k = self._keys.get(destination.key)
        if k is None:
            if len(self._keys) >= MOST_WIRE_KEYS:
                self._keys.clear()
            k = self._keys[destination.key] = self._channel.java_string(destination.key)
        return k

    def _require_existing(
        self, destination: Destination, exists: Callable[[Destination], bool | None]
    ) -> None:
        """Strict mode: 2085 for a destination the broker says it does not have."""
        if isinstance(destination, (TemporaryQueue, TemporaryTopic)) or destination.name.startswith(
            SERVICE_PREFIX
        ):
            return  # made by this connection, or one of pyjms's own services' queues
        if exists(destination) is False:
            raise InvalidDestinationRuntimeException(
                f"{destination} does not exist on the broker, and this factory does not create destinations "
                f"(create_destinations=False)",
                reason=MQRC.UNKNOWN_OBJECT_NAME,
                values={"destination": destination.key},
            )
        self._existing.add(destination.key)  # known, or the broker cannot tell
