"""A provider plug-in for the fake broker: real ConnectionFactory and JMSContext objects whose
channel is tests/fakes/channel.py's FakeChannel, so producers, consumers, transactions and the
features built on them run in unit tests without a JVM.

``fake_factory(broker)`` gives a factory for one FakeBroker. The plug-in serves factories of
the class FAKE_FACTORY_CLASS only, so registering it changes nothing for other factories.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import pytest

from pyjms import ConnectionFactory, JMSContext
from pyjms.api.provider import ProviderPlugin, register_provider
from pyjms.bridge import jvm
from tests.fakes.channel import FakeBroker, FakeChannel

#: the factory class that names the fake broker (no Java class: nothing is loaded)
FAKE_FACTORY_CLASS = "tests.fakes.FakeConnectionFactory"


class FakeProvider(ProviderPlugin):
    """Serves the fake brokers, each by its factory's URL (fake://<n>)."""

    name = "the fake broker"

    def __init__(self) -> None:
        self.brokers: dict[str, FakeBroker] = {}

    def serves(self, url: str | None, factory_class: str | None) -> bool:
        return factory_class == FAKE_FACTORY_CLASS

    def broker_of(self, factory: ConnectionFactory) -> FakeBroker:
        return self.brokers[factory.url]

    def open_channel(self, factory: ConnectionFactory, session_mode: int, what: str) -> FakeChannel:  # type: ignore[override]
        """A new connection with one session on the factory's fake broker."""
        return self.broker_of(factory).open_channel(session_mode, factory.client_id)

    def detects_duplicates(self, ctx: JMSContext) -> bool:
        return False  # as ActiveMQ Classic: pyjms's receivers drop duplicates


PROVIDER = FakeProvider()
register_provider(PROVIDER)


def fake_factory(broker: FakeBroker, **options: Any) -> ConnectionFactory:
    """A ConnectionFactory whose contexts talk to ``broker``."""
    url = f"fake://{id(broker)}"
    PROVIDER.brokers[url] = broker
    return ConnectionFactory(url, factory_class=FAKE_FACTORY_CLASS, **options)


@contextmanager
def threads_without_jvm(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """While it lasts, the threads pyjms runs for a context (listener dispatch, async sends,
    leadership) attach to no JVM: there is none."""
    monkeypatch.setattr(jvm, "java_thread", nullcontext)
    yield
