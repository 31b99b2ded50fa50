"""Consumer observers: the extension point on the receiving side, as send policies are on the
sending side.

An observer hears of the messages each consumer's receive call returns (``receive``,
``receive_no_wait``, ``receive_body``, ``receive_batch``, iteration, ``receive_by_token(s)``),
and wraps each delivery to a message listener. pyjms.otel uses one to make OpenTelemetry's
"receive" and "process" spans; the client itself knows nothing of what an observer does.

Observers are process-wide: :func:`add_consumer_observer` installs one for every consumer, made
before or after, and :func:`remove_consumer_observer` takes it away. With none installed a
receive costs one test of an empty tuple.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pyjms.api.message import Message

if TYPE_CHECKING:
    from pyjms.api.consumer import JMSConsumer

_log = logging.getLogger("pyjms")

Listener = Callable[[Message], None]


class ConsumerObserver:
    """Sees what consumers take. The defaults do nothing (and run the listener)."""

    def received(self, consumer: JMSConsumer, messages: Sequence[Message], started_ns: int) -> None:
        """A receive call on ``consumer`` returned ``messages`` (one, or a batch's many), in
        the caller's thread; ``started_ns`` is ``time.time_ns()`` when the call began. Not
        called for a receive that returned nothing. An exception here is logged, never
        raised: the messages are taken already."""

    def deliver(self, consumer: JMSConsumer, message: Message, listener: Listener) -> None:
        """Carries out one delivery to ``consumer``'s message listener, on the context's
        dispatch thread, by calling ``listener(message)`` (the next observer's delivery, or
        the listener itself). What it raises is the listener's failure: the message is
        redelivered as JMS says."""
        listener(message)


_observers: tuple[ConsumerObserver, ...] = ()
_lock = threading.Lock()


def add_consumer_observer(observer: ConsumerObserver) -> None:
    """Every consumer tells ``observer`` from now on (adding one twice adds it once)."""
    global _observers
    if not isinstance(observer, ConsumerObserver):
        raise TypeError(
            f"a consumer observer must be a pyjms.api.observers.ConsumerObserver, got {observer!r}"
        )
    with _lock:
        if all(o is not observer for o in _observers):
            _observers = (*_observers, observer)


def remove_consumer_observer(observer: ConsumerObserver) -> None:
    """Consumers stop telling ``observer`` (one not installed is ignored)."""
    global _observers
    with _lock:
        _observers = tuple(o for o in _observers if o is not observer)


def consumer_observers() -> tuple[ConsumerObserver, ...]:
    """The observers installed now, in the order they were added."""
    return _observers


def tell_received(consumer: JMSConsumer, messages: Sequence[Message], started_ns: int) -> None:
    """Tells every observer of a receive that returned ``messages`` (none: nobody is told)."""
    if not messages:
        return
    for observer in _observers:
        try:
            observer.received(consumer, messages, started_ns)
        except Exception:  # the message is taken: an observer's failure must not lose it
            _log.exception("consumer observer %r failed", observer)


def deliver(consumer: JMSConsumer, message: Message, listener: Listener) -> None:
    """Runs one listener delivery through every observer, the first added outermost."""
    observers = _observers
    if not observers:
        listener(message)
        return

    def step(i: int, m: Message) -> None:
        if i == len(observers):
            listener(m)
        else:
            observers[i].deliver(consumer, m, lambda passed: step(i + 1, passed))

    step(0, message)
