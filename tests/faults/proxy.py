"""A TCP proxy between a client and a broker that can lose the broker's answers: the broker
does what it was asked, and the client never hears (the failure that makes a commit's outcome
unknown, made exactly when a test wants it)."""

from __future__ import annotations

import socket
import threading


class AnswerLosingProxy:
    """Listens on 127.0.0.1; each client connection gets its own connection to the broker."""

    def __init__(self, broker_port: int) -> None:
        self.broker_port = broker_port
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._server.getsockname()[1])
        self._lose = threading.Event()
        self._cut_after: float | None = None  # cut_after_next_request's delay, until it is armed
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def lose_answers(self) -> None:
        """From now on, nothing the broker sends reaches a client."""
        self._lose.set()

    def cut_after_next_request(self, delay_s: float) -> None:
        """Cuts every connection ``delay_s`` after a client next sends anything (the request whose
        answer is lost, a commit), however late that comes: a timer started before the call
        could cut a slow machine's connection before the request left."""
        with self._lock:
            self._cut_after = delay_s

    def cut(self) -> None:
        """Closes every connection (clients see their broker connection fail), and answers
        reach new connections again."""
        with self._lock:
            pairs, self._pairs = self._pairs, []
            self._cut_after = None
        for a, b in pairs:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
        self._lose.clear()

    def close(self) -> None:
        self.cut()
        self._server.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            broker = socket.create_connection(("127.0.0.1", self.broker_port))
            with self._lock:
                self._pairs.append((client, broker))
            threading.Thread(target=self._pump, args=(client, broker, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(broker, client, True), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, answers: bool) -> None:
        try:
            while data := source.recv(65536):
                if not (answers and self._lose.is_set()):
                    sink.sendall(data)
                if not answers:
                    self._arm_cut()
        except OSError:
            pass

    def _arm_cut(self) -> None:
        """A request went to the broker: starts cut_after_next_request's timer, once."""
        with self._lock:
            delay, self._cut_after = self._cut_after, None
        if delay is not None:
            threading.Timer(delay, self.cut).start()
