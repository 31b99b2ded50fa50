"""Test support: fakes of the wire and of the objects pyjms's services are given, so client
logic is unit-tested without a JVM (as Qpid JMS tests its client against its MockProvider).

- channel: FakeChannel, an in-memory broker behind pyjms.bridge.channel.Channel's contract;
- board: QueueBoardFactory, a factory whose contexts only send and receive text on queues.
"""
