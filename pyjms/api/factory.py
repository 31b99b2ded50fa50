"""ConnectionFactory: how an application names its provider and broker, and makes
JMSContexts (pyjms.api.context) from it.

A factory does no I/O when it is made: the provider's Java connection factory is made at the
first context, and the URL's provider plug-in (pyjms.api.provider) is chosen from the URL or
the factory class.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from pyjms.api.constants import AUTO_ACKNOWLEDGE, DELIVERY_DELAY_CHOICES
from pyjms.api.context import JMSContext
from pyjms.api.policy import SendPolicy, installed_policies
from pyjms.api.provider import EMBEDDED, ProviderPlugin, default_provider, default_url_for, provider_for
from pyjms.bridge import jvm, urls
from pyjms.bridge.channel import Channel
from pyjms.bridge.classpath import DEFAULT_PROVIDER
from pyjms.bridge.contract import STAGING_QUEUE
from pyjms.bridge.errors import translate
from pyjms.bridge.java_types import JavaConnectionFactory, JavaProvider
from pyjms.errors import InvalidArgumentRuntimeException


class ConnectionFactory:
    """Connects to a provider by URL (ActiveMQ: vm://, tcp://, failover:(...)) or factory class.

    With no URL it uses ``PYJMS_URL``, or else the default provider's broker (an embedded
    ActiveMQ broker in this process, started when the URL is first needed), and logs a
    warning that it did: ``PYJMS_URL=embedded`` or :meth:`embedded` choose that broker on
    purpose, silently. Any other Jakarta
    Messaging provider works through ``factory_class`` (its jars on ``classpath`` or
    ``PYJMS_CLASSPATH``) with bean ``properties``. ``delivery_delay`` picks how delayed
    messages are held (pyjms.delay); ``auto`` probes the provider once, at the factory's first
    delayed send. Making a factory talks to no broker.

    ``provider`` names the client for the URL ("activemq", "artemis", "amqp"): Apache Artemis
    and ActiveMQ both write tcp://host:port, so an Artemis URL needs provider="artemis" or the
    form artemis+tcp://host:port (pyjms.bridge.urls; plain tcp:// is ActiveMQ's).
    """

    def __init__(
        self,
        url: str | None = None,
        user: str | None = None,
        password: str | None = None,
        *,
        client_id: str | None = None,
        factory_class: str | None = None,
        properties: Mapping[str, Any] | None = None,
        classpath: Sequence[str] = (),
        delivery_delay: str = "auto",
        staging_queue: str = STAGING_QUEUE,
        provider: str | None = None,
        create_destinations: bool = True,
    ) -> None:
        if url is not None and not isinstance(url, str):
            raise InvalidArgumentRuntimeException(f"url must be a str, got {url!r}")
        if provider is not None and factory_class is not None:
            raise InvalidArgumentRuntimeException(
                f"provider={provider!r} and factory_class={factory_class!r}: give one, not both"
            )
        if factory_class is None and (url is not None or provider is not None):
            urls.choose(url or "", provider)  # a URL no provider understands fails here, not at first use
        #: the provider named for the URL ("activemq", "artemis", "amqp"), or None: the URL says
        self.provider_name_hint = provider
        self._url = url
        self.user = user
        self.password = password
        self.client_id = client_id
        self.factory_class = factory_class
        self.properties = {k: str(v) for k, v in (properties or {}).items()}
        self.classpath = tuple(classpath)
        if delivery_delay not in DELIVERY_DELAY_CHOICES:
            raise InvalidArgumentRuntimeException(
                f"delivery_delay {delivery_delay!r} is not one of {', '.join(DELIVERY_DELAY_CHOICES)}",
                values={"delivery_delay": delivery_delay},
            )
        #: "auto" (probe the provider once, at the first delayed send), "native", "scheduler",
        #: "staging" or "none" (pyjms.delay)
        self.delivery_delay = delivery_delay
        #: where the staging mechanism puts delayed messages for the delay processor
        self.staging_queue = staging_queue
        #: False: a queue or topic the broker does not have is refused (MQRC_UNKNOWN_OBJECT_NAME
        #: 2085, as IBM MQ does) instead of being created by its first use, on brokers that can
        #: tell (ProviderPlugin.destination_exists); True (JMS's usual): made on demand
        self.create_destinations = bool(create_destinations)
        self._plugin: ProviderPlugin | None = None
        self._policies: list[SendPolicy] | None = None
        self._provider: JavaProvider | None = None
        self._jfactory: JavaConnectionFactory | None = None
        self._lock = threading.Lock()
        self._embedded = False  # the default provider's in-process broker, chosen on purpose

    @classmethod
    def embedded(
        cls, user: str | None = None, password: str | None = None, **options: Any
    ) -> ConnectionFactory:
        """A factory for the default provider's broker inside this process (ActiveMQ's,
        non-persistent: its messages end with the process), chosen on purpose: whatever
        PYJMS_URL says, and without the warning a factory with no URL logs. ``options``: as
        the constructor's."""
        factory = cls(None, user, password, **options)
        factory._embedded = True
        return factory

    def derive(
        self, *, url: str | None = None, properties: Mapping[str, Any] | None = None
    ) -> ConnectionFactory:
        """A new factory like this one (credentials, client id, provider, delay settings) for
        the same broker, with another URL (e.g. client options added) or other properties."""
        return ConnectionFactory(
            self.url if url is None else url,
            self.user,
            self.password,
            client_id=self.client_id,
            factory_class=self.factory_class,
            properties=self.properties if properties is None else properties,
            classpath=self.classpath,
            delivery_delay=self.delivery_delay,
            staging_queue=self.staging_queue,
            provider=self.provider_name_hint,
            create_destinations=self.create_destinations,
        )

    @property
    def url(self) -> str:
        """The provider URL: as given, else PYJMS_URL, else the default provider's broker's
        (which may start it)."""
        if self._url is None and self.factory_class is None:
            # a named provider's plug-in gives the broker (only ActiveMQ's starts one)
            plugin = self.provider if self.provider_name_hint is not None else default_provider()
            configured = None if self._embedded else os.environ.get("PYJMS_URL")
            if configured and configured != EMBEDDED:
                self._url = configured
            else:
                self._url = default_url_for(plugin, chosen=self._embedded or configured == EMBEDDED)
        return self._url or ""

    @property
    def provider(self) -> ProviderPlugin:
        """The plug-in for this factory's provider, chosen by URL or factory class (no I/O)."""
        if self._plugin is None:
            url = self._url
            if url is None and not self._embedded and os.environ.get("PYJMS_URL") != EMBEDDED:
                url = os.environ.get("PYJMS_URL") or None
            name = self.provider_name_hint
            if self.factory_class is None and url is not None:
                name = urls.choose(url, name)[0]  # as the client is chosen (_java)
            self._plugin = provider_for(url, self.factory_class, name)
        return self._plugin

    def send_policies(self) -> tuple[SendPolicy, ...]:
        """This factory's send policy chain (pyjms.api.policy), made at first need."""
        with self._lock:
            if self._policies is None:
                self._policies = installed_policies(self)
            return tuple(self._policies)

    def add_send_policy(self, policy: SendPolicy) -> ConnectionFactory:
        """Adds a policy at the end of the chain, for producers made from now on."""
        if not isinstance(policy, SendPolicy):
            raise InvalidArgumentRuntimeException(
                f"a send policy must be a pyjms.api.policy.SendPolicy, got {policy!r}"
            )
        self.send_policies()
        with self._lock:
            assert self._policies is not None
            self._policies.append(policy)
        return self

    def _java(self) -> tuple[JavaProvider, JavaConnectionFactory]:
        with self._lock:
            if self._jfactory is None:
                if self.factory_class:
                    name, client_url = None, self.url
                else:
                    name, client_url = urls.choose(self.url, self.provider_name_hint)
                s = jvm.start(self.classpath, providers=(name or DEFAULT_PROVIDER,))
                props = s.HashMap()
                for k, v in self.properties.items():
                    props.put(k, v)
                try:
                    if name is None:
                        provider = s.Providers.forFactoryClass(self.factory_class)
                    else:
                        provider = s.Providers.forName(name)
                    self._jfactory = provider.factory(client_url, props)
                    self._provider = provider
                except s.JException as e:
                    raise translate(
                        e, f"cannot make a connection factory for {self.url or self.factory_class!r}"
                    ) from None
            assert self._provider is not None and self._jfactory is not None
            return self._provider, self._jfactory

    def create_context(self, session_mode: int = AUTO_ACKNOWLEDGE) -> JMSContext:
        """A new connection with one session (JMSContext)."""
        return JMSContext.open_for(self, session_mode)

    def open_wire_channel(self, session_mode: int, what: str) -> Channel:
        """A new connection with one session, through the provider's own JMS client in the
        JVM: what ProviderPlugin.open_channel does unless a plug-in says otherwise."""
        provider, jfactory = self._java()
        return Channel.open(provider, jfactory, self.user, self.password, self.client_id, session_mode, what)

    def __repr__(self) -> str:
        return f"ConnectionFactory({self._url or self.factory_class!r})"
