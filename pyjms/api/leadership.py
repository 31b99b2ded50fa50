"""Leader election through the broker: any number of instances of a pyjms service, one active.

The broker picks the leader; pyjms builds no lock of its own. Every candidate for a role opens
an exclusive consumer on ``PYJMS.LEADER.<role>`` (ActiveMQ's exclusive consumer, Artemis's
exclusive queue: pyjms brokers make every consumer of those queues exclusive, and
ProviderPlugin.exclusive_queue asks for it on the wire where the provider can), so the broker
dispatches every message of that queue to one candidate at a time. Each candidate puts a token
there, and the one that gets tokens holds them in a transaction it never commits: it leads
while its connection lives. When that connection ends (the process was killed, its host went
away, the broker dropped it), the broker rolls the transaction back and hands the tokens to the
next exclusive consumer, which then leads.

A new leader takes its tokens and puts one back in the same transaction, so however often
candidates start, one token (plus one per candidate started since) is all the queue holds.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable

from pyjms.api.constants import SESSION_TRANSACTED
from pyjms.api.consumer import JMSConsumer
from pyjms.api.context import JMSContext
from pyjms.api.destination import Queue
from pyjms.api.factory import ConnectionFactory
from pyjms.bridge import jvm
from pyjms.bridge.contract import LEADER_PREFIX
from pyjms.errors import JMSRuntimeException

__all__ = ["Leadership", "leader_queue"]

_log = logging.getLogger("pyjms.leadership")

#: how often the leader looks at its lock (a failed connection shows there as an error)
CHECK_EVERY_MS = 250
#: the longest pause before a candidate whose broker went away tries again
MOST_BACKOFF_S = 5.0


def leader_queue(role: str) -> Queue:
    """The queue the candidates for ``role`` hold their election on."""
    return Queue(LEADER_PREFIX + role)


class Leadership:
    """One candidate for ``role``: a thread that waits until the broker makes it the leader,
    calls ``on_elected``, watches its lock, and calls ``on_deposed`` when the lock is gone (then
    it stands again). ``stop()`` steps down: the next candidate leads at once.

    ``on_elected`` runs on the election thread and should start the service's work and return;
    ``on_deposed`` must stop that work before it returns, since another candidate leads by then.
    """

    def __init__(
        self,
        factory: ConnectionFactory,
        role: str,
        on_elected: Callable[[], None],
        on_deposed: Callable[[], None],
    ) -> None:
        # a killed candidate's connection must end within seconds for its lock to pass on
        self.factory = factory.provider.service_factory(factory)
        self.role = role
        self.queue = leader_queue(role)
        self.candidate = f"{role}-{uuid.uuid4().hex[:12]}"
        self._on_elected = on_elected
        self._on_deposed = on_deposed
        self._stop = threading.Event()
        self._leading = threading.Event()
        self._thread: threading.Thread | None = None
        #: how many times this candidate was elected
        self.terms = 0

    @property
    def leading(self) -> bool:
        return self._leading.is_set()

    def wait_until_leading(self, timeout: float | None = None) -> bool:
        return self._leading.wait(timeout)

    def start(self) -> Leadership:
        self._thread = threading.Thread(target=self._run, name=f"pyjms-leader-{self.role}", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 10) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    # ------------------------------------------------------------------ the election thread

    def _run(self) -> None:
        backoff = 0.25
        with jvm.java_thread():
            while not self._stop.is_set():
                try:
                    with self.factory.create_context(SESSION_TRANSACTED) as ctx:
                        backoff = 0.25
                        self._stand(ctx)
                except Exception as e:  # any: an election thread that died would stand no more, silently
                    if self._stop.is_set() or jvm.shutting_down():
                        break
                    _log.warning(
                        "%s: the election on %s failed (%s); standing again", self.candidate, self.queue, e
                    )
                self._stop.wait(backoff)
                backoff = min(backoff * 2, MOST_BACKOFF_S)

    def _stand(self, ctx: JMSContext) -> None:
        """Stands in one connection: waits for a token, then leads until the lock fails or stop."""
        queue = Queue(ctx.provider.exclusive_queue(self.queue.name))
        consumer = ctx.create_consumer(queue)
        # the token is put in a session of its own: this one's transaction stays open
        with self.factory.create_context() as put:
            put.create_producer().set_delivery_mode(1).send(queue, self.candidate)
        while not self._stop.is_set():
            if consumer.receive(CHECK_EVERY_MS) is not None:
                break
        else:
            return
        try:
            self._lead(ctx, consumer, queue)
        finally:
            self._depose()  # the work stops before the lock goes (closing ctx hands it on)

    def _lead(self, ctx: JMSContext, consumer: JMSConsumer, queue: Queue) -> None:
        # elected: take what else is there and put one token back, in one transaction, so the
        # queue holds one token again; this consumer stays the exclusive one throughout
        while consumer.receive_no_wait() is not None:
            pass
        ctx.create_producer().set_delivery_mode(1).send(queue, self.candidate)
        ctx.commit()
        if consumer.receive(5000) is None:
            raise JMSRuntimeException(f"{self.queue}: the token put back did not come back to its leader")
        self.terms += 1
        self._leading.set()
        _log.info("%s leads %s (term %d)", self.candidate, self.role, self.terms)
        self._on_elected()
        # lead while the lock holds: the tokens of candidates started later come here too and
        # stay in the open transaction; an error here means the connection (and the lock) is gone
        while not self._stop.wait(CHECK_EVERY_MS / 1000):
            consumer.receive_no_wait()

    def _depose(self) -> None:
        if self._leading.is_set():
            self._leading.clear()
            _log.info("%s no longer leads %s", self.candidate, self.role)
            self._on_deposed()
