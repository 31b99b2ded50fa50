"""Test support: a fake of the wire, so client logic is unit-tested without a JVM (as Qpid JMS
tests its client against its MockProvider). channel: FakeChannel, an in-memory broker behind
pyjms.bridge.channel.Channel's contract."""
