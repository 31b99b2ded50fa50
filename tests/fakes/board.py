"""QueueBoardFactory: the smallest ConnectionFactory a pyjms service can be given in a unit
test. Its contexts send text to, and receive it from, named queues held in a dict; nothing else
(a service that needs more belongs on tests/fakes/channel.py's FakeChannel)."""

from __future__ import annotations

from collections import defaultdict, deque
from typing import Any

from pyjms import Queue, TextMessage


class QueueBoardFactory:
    """A factory whose contexts share one board of queues of text messages."""

    def __init__(self) -> None:
        self.queues: defaultdict[str, deque[str]] = defaultdict(deque)
        self.contexts_opened = 0

    def create_context(self, *args: Any, **kwargs: Any) -> _BoardContext:
        self.contexts_opened += 1
        return _BoardContext(self)

    def texts(self, queue: str) -> list[str]:
        """What waits on a queue, oldest first."""
        return list(self.queues[queue])


class _BoardContext:
    def __init__(self, board: QueueBoardFactory) -> None:
        self.board = board

    def __enter__(self) -> _BoardContext:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def create_consumer(self, queue: Queue, *args: Any) -> _BoardConsumer:
        return _BoardConsumer(self.board.queues[queue.get_queue_name()])

    def create_producer(self) -> _BoardProducer:
        return _BoardProducer(self.board)


class _BoardConsumer:
    def __init__(self, waiting: deque[str]) -> None:
        self.waiting = waiting

    def receive(self, timeout_ms: int = 0) -> TextMessage | None:
        return TextMessage(self.waiting.popleft()) if self.waiting else None


class _BoardProducer:
    def __init__(self, board: QueueBoardFactory) -> None:
        self.board = board

    def set_delivery_mode(self, mode: int) -> _BoardProducer:
        return self

    def send(self, queue: Queue, text: str) -> _BoardProducer:
        self.board.queues[queue.get_queue_name()].append(text)
        return self
