"""Provider plug-ins: what the client and the features ask of a provider, and who answers.

The JMS client knows no provider. Where providers differ in ways pyjms must handle (a
default broker when no URL is given, the selectors topic subscribers need on a broker that
stages delayed publications, which delay mechanisms are worth probing, destination
attributes, ...), the client and the features ask the :class:`ProviderPlugin` that serves
the connection factory. Providers subclass it and register an instance with
:func:`register_provider` (pyjms.providers.activemq does, when the package is imported);
a factory no plug-in serves gets the generic answers of this base class.

Every method has a default that fits any Jakarta Messaging provider; a plug-in overrides
only its provider's quirks. Methods that may ask the broker say so.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pyjms.api.constants import SESSION_TRANSACTED
from pyjms.bridge.errors import ConnectionFailures, register_connection_failures
from pyjms.bridge.java_types import JavaConnection, JavaProvider
from pyjms.errors import JMSRuntimeException, SetupError

if TYPE_CHECKING:
    from pyjms.api.context import JMSContext
    from pyjms.api.destination import Destination, Topic
    from pyjms.api.factory import ConnectionFactory
    from pyjms.api.message import Message
    from pyjms.bridge.channel import Channel


_log = logging.getLogger("pyjms")

#: ``PYJMS_URL=embedded``: the default provider's in-process broker, chosen on purpose (as
#: ``ConnectionFactory.embedded()`` chooses it): no warning
EMBEDDED = "embedded"


class ContextAnswer:
    """A yes or no the provider's shim gives about a context's broker, asked once per context
    (the broker does not change under a connection)."""

    def __init__(self, question: Callable[[JavaProvider, JavaConnection], bool], what: str) -> None:
        self._question = question
        self._what = what
        self._lock = threading.Lock()
        self._answers: weakref.WeakKeyDictionary[JMSContext, bool] = weakref.WeakKeyDictionary()

    def __call__(self, ctx: JMSContext) -> bool:
        with self._lock:
            known = self._answers.get(ctx)
        if known is None:
            known = bool(ctx.channel.ask_provider(self._question, self._what))
            with self._lock:
                self._answers[ctx] = known
        return known


class ProviderPlugin:
    """A provider's quirks. The defaults are those of a plain Jakarta Messaging provider."""

    #: shown in messages
    name = "Jakarta Messaging"
    #: the name pyjms.bridge.urls gives the provider ("activemq", "artemis", "amqp"), if any:
    #: a factory whose URL or ``provider=`` names it gets this plug-in
    provider_name: str | None = None
    #: how old the destination attributes a plug-in answers with may be, in seconds (features
    #: that watch attributes, such as the delay processor, re-read them at this pace)
    attributes_max_age_s = 1.0
    #: the queue the provider dead-letters messages to, if it has one by default (the DLQ
    #: handler processes it when told no other)
    dead_letter_queue: str | None = None
    #: the most messages a queue browser shows of a queue, or None where a browser shows all of
    #: it: a browse that shows fewer saw the whole queue (the DLQ handler forgets what it
    #: remembers of a message only after such browses)
    browse_limit: int | None = None
    #: the length of the delay processor's time slots on this provider, in ms (None: the
    #: processor's own default): each slot is a queue, and brokers differ in what a queue costs
    delay_slot_ms: int | None = None
    #: how the provider's client says a connection failed (its exception classes and texts):
    #: registering the plug-in hands them to the error translation (pyjms.bridge.errors), which
    #: knows only the JDK's own
    connection_failures = ConnectionFailures()
    #: whether the broker counts what a consumer has not acknowledged against what it may send
    #: it (ActiveMQ Classic's prefetch, which its client only widens by half a prefetch at a
    #: time as it consumes). pyjms.aio then acknowledges a batch as soon as it reaches its
    #: caller, with a wake-up of the context's worker, not before the next take
    #: (pyjms.aio.handover)
    dispatches_on_acknowledgement = False
    #: what default_url gives when it is a broker inside this process that keeps nothing
    #: (e.g. "an in-process, non-persistent ActiveMQ broker"), or None: a factory that chose
    #: no broker, where it gets one of these, logs a warning saying so (default_url_for)
    in_process_default: str | None = None
    _detects_duplicates = ContextAnswer(
        lambda provider, connection: provider.peerDetectsDuplicates(connection),
        "ask whether the broker detects duplicates",
    )

    def open_channel(self, factory: ConnectionFactory, session_mode: int, what: str) -> Channel:
        """A new connection with one session for a context of ``factory`` (``what``: the text
        of the error if it fails). The default goes through the provider's JMS client in the
        JVM; a plug-in may give another implementation of the channel's contract (the tests'
        in-memory fake, tests/fakes)."""
        return factory.open_wire_channel(session_mode, what)

    def serves(self, url: str | None, factory_class: str | None) -> bool:
        """Whether this plug-in serves factories with this URL or factory class (no I/O)."""
        return False

    def default_url(self) -> str:
        """The URL to use when a factory names none (the registered default plug-in is
        asked, once per factory, when the URL is first needed; it may start a broker)."""
        raise SetupError(
            f"no URL was given and {self.name} has no default broker: pass a URL or set PYJMS_URL"
        )

    def topic_consumer_selector(self, ctx: JMSContext, topic: Topic, selector: str | None) -> str | None:
        """The selector a plain topic consumer is made with on the wire (the user's by default)."""
        return selector

    def durable_consumer_selector(
        self, ctx: JMSContext, topic: Topic, name: str, client_id: str, selector: str | None
    ) -> str | None:
        """The selector a durable subscription is opened with on the wire. May ask the broker
        about an existing subscription: it is called from create_durable_consumer only."""
        return selector

    def shared_consumer_selector(
        self, ctx: JMSContext, topic: Topic, name: str, durable: bool, selector: str | None
    ) -> str | None:
        """The selector a shared subscription's consumer is made with on the wire (the user's by
        default); every consumer of one subscription gets the same."""
        return selector

    def delay_mechanisms(self, ctx: JMSContext) -> tuple[str, ...]:
        """The delay mechanisms worth trying on this provider, best first (pyjms.delay probes
        them in this order: native, scheduler, staging)."""
        return ("native", "scheduler", "staging")

    def service_factory(self, factory: ConnectionFactory) -> ConnectionFactory:
        """The factory a long-running pyjms service (a leader candidate, the delay processor,
        the mark service) connects with: one whose connections the broker drops within seconds
        of the process dying, so that what it held (its leadership, its open transactions)
        passes on at once: by default the factory with the provider's service_properties."""
        extra = self.service_properties()
        if factory.factory_class is not None or extra.items() <= factory.properties.items():
            return factory  # nothing to add, or added already
        return factory.derive(properties={**factory.properties, **extra})

    def synchronous_acks(self, factory: ConnectionFactory) -> ConnectionFactory:
        """A factory whose acknowledgements have reached the broker when acknowledge() returns,
        for a consumer that promises to lose nothing and repeat at most one message when its
        process dies (``pyjms receive``). By default the factory itself."""
        return factory

    def exclusive_queue(self, name: str) -> str:
        """The name to consume ``name`` by so that the broker dispatches all of its messages to
        one consumer at a time, failing over to another when that one goes (pyjms.api.leadership).
        By default the name itself: the broker must make that queue's consumers exclusive, as
        pyjms brokers do for PYJMS.LEADER.* queues."""
        return name

    def service_properties(self) -> dict[str, str]:
        """Connection properties for a pyjms service's own connections (service_factory), so that the broker lets go of a service whose process died at once:
        its consumers leave, its leadership (pyjms.api.leadership) passes. None by default."""
        return {}

    def target_attributes(self, ctx: JMSContext, destination: Destination) -> Any:
        """The IBM MQ attributes the broker defines for a destination (pyjms.rules.attributes),
        or None where it defines none or cannot say. May ask the broker (at most once per
        ``attributes_max_age_s`` per destination and context)."""
        return None

    def destination_exists(self, ctx: JMSContext, destination: Destination) -> bool | None:
        """Whether the broker has a queue or topic now (for ConnectionFactory's
        create_destinations=False), or None where it cannot tell."""
        return None

    def delay_publishes_when_due(self, ctx: JMSContext, mechanism: str) -> bool:
        """Whether a publication delayed by ``mechanism`` (native or scheduler) is matched to the
        topic's subscribers when it is due, by a broker scheduler that publishes it then, instead
        of at send as IBM MQ does (D16, D21): pyjms then sends one delayed copy per subscriber
        address (:meth:`subscriber_addresses`)."""
        return False

    def subscriber_addresses(self, ctx: JMSContext, topic: Topic) -> list[str] | None:
        """The addresses of a topic's subscribers now, to stage a delayed publication one copy
        per subscriber (IBM MQ, D16); None to stage one copy matched at delivery. May ask
        the broker."""
        return None

    def duplicate_dead_letter(self, message: Message) -> str | None:
        """Why a message on a dead-letter queue is a copy of one already delivered, which a DLQ
        handler drops instead of applying its rules; None for a real dead letter."""
        return None

    def commit_in_doubt(self, error: JMSRuntimeException) -> bool:
        """Whether a commit the provider reported as rolled back, or as refused on a closed
        session, may in fact have been committed. ActiveMQ's failover transport says "in doubt
        ... Forcing rollback" after a reconnect. Artemis's core client, when a connection failure
        unblocks a commit waiting for its answer, rolls back to report "outcome unknown", and
        that rollback meets the session its failure handling has just closed ("AMQ219019:
        Session is closed"), possibly before the client tells its exception listener. A closed
        session's commit on a connection known lost before it is never in doubt (JMSContext.commit)."""
        return False

    def commit_rejected_duplicate(self, error: JMSRuntimeException) -> bool:
        """Whether a failed commit was refused because a message in it carries a duplicate id
        the broker has already taken (a rollback whose outcome is known: those messages were
        committed before)."""
        return False

    def detects_duplicates(self, ctx: JMSContext) -> bool:
        """Whether ctx's broker drops messages whose duplicate id (Message.set_duplicate_id) it
        has taken; where it does not, pyjms's receivers drop them (pyjms.api.duplicates). Asks
        the shim once per context."""
        return self._detects_duplicates(ctx)

    def transaction_begun(self, ctx: JMSContext) -> bool:
        """SESSION_TRANSACTED: whether ctx's current transaction has work in it (a send or a
        receive since the last commit or rollback); True where the provider cannot tell. A get
        by token through a dispatcher's kept consumer (pyjms.browse.kept) needs a transaction
        with nothing in it, which it can roll back if the broker sends it a message not asked for."""
        return True

    def bulk_read_context(self, factory: ConnectionFactory) -> JMSContext:
        """A context for a read that consumes many messages and removes them all at once, at
        its end (the Spark consume read), in the session mode the provider does that faster:
        SESSION_TRANSACTED (the read ends with commit) or CLIENT_ACKNOWLEDGE (with acknowledge).
        Either way nothing read is removed before that end, and everything read goes back to
        the queue if the context closes first. The default is a transaction."""
        return factory.create_context(SESSION_TRANSACTED)

    def without_redelivery_limit(self, factory: ConnectionFactory) -> ConnectionFactory:
        """A factory like ``factory`` whose rolled-back gets never make the provider treat a
        message as poison (components that keep their own retry counts use it)."""
        return factory

    def dead_letter_details(self, ctx: JMSContext, queue: str) -> Mapping[str, Any]:
        """By JMSMessageID, what the provider recorded outside the properties about the
        entries it dead-lettered itself on ``queue`` (pyjms.dlq.DeadLetterDetails)."""
        return {}

    def dead_lettered_by_broker(self, message: Message) -> bool:
        """Whether a message on a dead-letter queue is an entry the broker dead-lettered itself
        (which dead_letter_header maps), as what the broker adds to it shows. None by default."""
        return False

    def dead_letter_header(
        self,
        message: Message,
        *,
        queue_manager: str,
        original_destination: str | None,
        dead_lettered_ms: int | None,
    ) -> Any:
        """The dead-letter header (pyjms.dlq.DeadLetterHeader) of an entry the broker
        dead-lettered itself, mapped from what the broker added to it and from its
        dead_letter_details (``original_destination``, a destination key, and
        ``dead_lettered_ms``); ``queue_manager`` names the broker. None for any other message:
        by default every message."""
        return None


_GENERIC = ProviderPlugin()
_plugins: list[ProviderPlugin] = []
_default: ProviderPlugin | None = None
_lock = threading.Lock()


def register_provider(plugin: ProviderPlugin, *, default: bool = False) -> None:
    """Makes ``plugin`` serve the factories it says it serves (later registrations are asked
    first), and the error translation know its client's connection failures. ``default``: it
    also gives the broker of factories with no URL."""
    global _default
    register_connection_failures(plugin.connection_failures)
    with _lock:
        _plugins.insert(0, plugin)
        if default:
            _default = plugin


def provider_for(
    url: str | None, factory_class: str | None, provider_name: str | None = None
) -> ProviderPlugin:
    """The plug-in for a factory's provider name (pyjms.bridge.urls), URL or class; with none
    of them, the default plug-in."""
    with _lock:
        if provider_name is not None:
            for plugin in _plugins:
                if plugin.provider_name == provider_name:
                    return plugin
        if url is None and factory_class is None and provider_name is None and _default is not None:
            return _default
        for plugin in _plugins:
            if plugin.serves(url, factory_class):
                return plugin
    return _GENERIC


_warned_default = False


def default_url_for(plugin: ProviderPlugin, *, chosen: bool) -> str:
    """``plugin``'s default URL for a factory that names no URL. Unless the broker was
    ``chosen`` on purpose (PYJMS_URL=embedded, ConnectionFactory.embedded()), getting an
    in-process broker that keeps nothing logs one warning per process (logger "pyjms"): an
    application whose PYJMS_URL went missing would otherwise run on and lose its messages at
    exit."""
    global _warned_default
    url = plugin.default_url()
    if plugin.in_process_default is not None and not chosen:
        with _lock:
            warn, _warned_default = not _warned_default, True
        if warn:
            _log.warning(
                "no URL was given and PYJMS_URL is not set: pyjms started %s (%s), whose messages "
                "are lost when this process ends. Set PYJMS_URL to your broker (e.g. "
                "tcp://host:61616), or choose this broker on purpose with PYJMS_URL=%s or "
                "ConnectionFactory.embedded() (then pyjms says nothing)",
                plugin.in_process_default,
                url,
                EMBEDDED,
            )
    return url


def default_provider() -> ProviderPlugin:
    """The plug-in that gives factories with no URL their broker."""
    with _lock:
        return _default if _default is not None else _GENERIC
