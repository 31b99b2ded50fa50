"""Send policies: the extension point producers send through.

A send policy sees each producer send before it reaches the wire, and may check it, change
it, or carry it out another way. Features plug in here instead of being written into the
producer: pyjms.rules checks IBM MQ's rules for delayed messages, pyjms.delay applies the
delay mechanism the factory resolved (a client's native delay, the broker's scheduler, or
IBM MQ's staging queue). Policies wrap, as Qpid JMS's ProviderWrapper does: each gets the
send and the next step (``proceed``) and returns what the send produced.

Each ConnectionFactory has its own chain, made at first need from the policy makers
installed with :func:`install_send_policy` (in the order they name), plus any added with
``ConnectionFactory.add_send_policy``. A producer asks each policy whether it ``applies`` to
its options when they change; a send no policy applies to goes straight to the wire (the
common case, kept as fast as before). For a send the policies apply to, every policy's
``check_send`` runs first, in chain order, then the chain of ``send``.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyjms.api.message import Message
from pyjms.api.message.record import KEEP
from pyjms.errors import JMSRuntimeException

if TYPE_CHECKING:
    from pyjms.api.context import JMSContext
    from pyjms.api.destination import Destination
    from pyjms.api.factory import ConnectionFactory


@dataclass(frozen=True)
class ProducerOptions:
    """The send options of a producer that policies judge when they are set."""

    delivery_mode: int
    priority: int
    time_to_live: int
    delivery_delay: int


@dataclass
class SendResult:
    """What a send did: how many messages it sent and, for one message whose sender asked for
    them, the headers the message got (message id, timestamp, expiration...)."""

    count: int
    headers: Mapping[str, Any] | None = None


#: an async send's completion: (the headers the message got, or None; the error, or None)
Completion = Callable[[Mapping[str, Any] | None, JMSRuntimeException | None], None]


@dataclass
class OutgoingSend:
    """One producer send on its way to the wire: one message, or a send_batch's many, to one
    destination with one set of options. Policies change it with :meth:`replace`."""

    context: JMSContext
    destination: Destination
    messages: list[Message]
    delivery_mode: int
    priority: int
    time_to_live: int
    delivery_delay: int
    #: send flags (pyjms.bridge.contract.SEND_*): disabled ids and timestamps, delay mechanism
    flags: int = 0
    #: the producer's properties, which override same-named ones of the messages (JMS 2.0)
    properties: Mapping[str, tuple[int, Any]] = field(default_factory=dict)
    #: the producer's header overrides: correlation_id, jms_type, reply_to (those it set)
    headers: Mapping[str, Any] = field(default_factory=dict)
    #: the sender wants the headers the provider assigns (a single send of a message)
    describe: bool = False
    #: set for an async send: the wire send happens on the context's sender thread, and this
    #: hears of its outcome
    completion: Completion | None = None
    _records: list[bytes] | None = field(default=None, init=False, repr=False, compare=False)

    def replace(self, **changes: Any) -> OutgoingSend:
        """A changed copy (its records are encoded again if what they hold changed)."""
        changed = dataclasses.replace(self, **changes)
        if not changes.keys() & {"messages", "properties", "headers"}:
            changed._records = self._records
        return changed

    def records(self) -> list[bytes]:
        """The messages' records as they go out (encoded once)."""
        if self._records is None:
            self._records = [self.encode(m) for m in self.messages]
        return self._records

    def encode(self, message: Message) -> bytes:
        """The record of one of the messages as it goes out: the producer's header overrides
        and properties applied."""
        h = self.headers
        return message.encode(
            correlation_id=h.get("correlation_id", KEEP),
            jms_type=h.get("jms_type", KEEP),
            reply_to=h.get("reply_to", KEEP),
            add_properties=self.properties,
        )

    def property_values(self, message: Message) -> dict[str, Any]:
        """A message's property values as it goes out (its own, then the producer's)."""
        values = message.properties
        values.update((k, v) for k, (_, v) in self.properties.items())
        return values


Proceed = Callable[[OutgoingSend], SendResult]


class SendPolicy:
    """A step in a factory's send chain. The defaults let every send through unchanged."""

    def applies(self, options: ProducerOptions) -> bool:
        """Whether sends with these options go through this policy (asked when a producer's
        options change; a cheap, I/O-free test)."""
        return True

    def check_options(self, options: ProducerOptions, context: JMSContext) -> None:
        """Refuses options when a producer sets them (set_delivery_delay, set_time_to_live).
        Must not ask the broker: setters make no round trip."""

    def check_send(self, send: OutgoingSend) -> None:
        """Refuses a send before any policy carries it out; may ask the broker."""

    def send(self, send: OutgoingSend, proceed: Proceed) -> SendResult:
        """Carries the send out, usually by handing it (changed or not) to ``proceed``."""
        return proceed(send)


#: makers of the policies every factory's chain starts with: (order, maker)
_makers: list[tuple[int, Callable[[ConnectionFactory], SendPolicy]]] = []
_makers_lock = threading.Lock()


def install_send_policy(make: Callable[[ConnectionFactory], SendPolicy], *, order: int) -> None:
    """Every ConnectionFactory's chain gets ``make(factory)``, made once per factory at first
    need. Chains run in ``order`` (lowest first, the outermost), whatever the order features
    are imported in. Features call this when imported; installing a maker twice installs it
    once."""
    with _makers_lock:
        if all(m is not make for _, m in _makers):
            _makers.append((order, make))
            _makers.sort(key=lambda entry: entry[0])


def uninstall_send_policy(make: Callable[[ConnectionFactory], SendPolicy]) -> None:
    """Factories whose chain is made from now on no longer get ``make(factory)``; chains made
    already keep their policy (a feature that can be turned off makes it pass sends on)."""
    with _makers_lock:
        _makers[:] = [(order, m) for order, m in _makers if m is not make]


def installed_policies(factory: ConnectionFactory) -> list[SendPolicy]:
    """A new factory's chain: one policy from each installed maker, in order."""
    with _makers_lock:
        makers = [m for _, m in _makers]
    return [make(factory) for make in makers]
