"""Test support: a fake of the wire, so client logic is unit-tested without a JVM (as Qpid JMS
tests its client against its MockProvider).

- channel: FakeBroker and FakeChannel, an in-memory broker behind the contract of
  pyjms.bridge.channel.Channel, speaking the shim's record formats (pyjms.bridge.codec);
- provider: FakeProvider, the plug-in (ProviderPlugin.open_channel) that gives real
  ConnectionFactory and JMSContext objects a fake channel: ``fake_factory(broker)``.

tests/unit/conftest.py makes fixtures of them (``clock``, ``broker``, ``factory``).
"""
