"""A failover pair of ``pyjms broker --shared-store`` processes over one data directory (ActiveMQ
Classic's shared file system master/slave, or Artemis's shared-store HA with ``--provider
artemis``): the first holds the store and serves, the second says it is standing by and takes
over when the first dies. Clients reach the pair by ``url``, a URL over both ports."""

from __future__ import annotations

from pathlib import Path

from tests.faults.processes import PyjmsProcess
from tests.ports import free_port

#: reconnects a client on the pair's URL tries after the live broker went away: quick, so that
#: it finds the one that took over at once
RECONNECT = "randomize=false&initialReconnectDelay=50&maxReconnectDelay=500"
#: the same for Artemis's client: it learns the standby from the serving broker (ha=true, the
#: pair's topology) and tries the broker that went away and then its standby, for ever
ARTEMIS_RECONNECT = (
    "ha=true&reconnectAttempts=-1&retryInterval=100&maxRetryInterval=500&blockOnAcknowledge=true"
)


def is_ready(line: str) -> bool:
    return "ready:" in line


def is_standing_by(line: str) -> bool:
    return "standing by" in line


class PairedBroker(PyjmsProcess):
    """One ``pyjms broker --shared-store`` of the pair, on a fixed port (its partner's clients
    must know where it will listen once it serves)."""

    def __init__(self, port: int, data_dir: Path, *extra: str, provider: str = "activemq") -> None:
        self.port = port
        super().__init__(
            "broker",
            "--port",
            str(port),
            "--data",
            str(data_dir),
            "--shared-store",
            "--name",
            f"pyjms-pair-{port}",
            "--provider",
            provider,
            *extra,
        )

    def ready_at(self, timeout: float, after: float = 0.0) -> float | None:
        """When it printed its ready line (it serves), waiting up to ``timeout``."""
        return self.wait_line(is_ready, timeout, after)


class BrokerPair:
    """Starts the first broker, waits until it serves, then the second, until it stands by.
    ``extra``: more ``pyjms broker`` options for both (``--no-delay-processor``...)."""

    def __init__(self, work_dir: Path, *extra: str, provider: str = "activemq") -> None:
        self.provider = provider
        first_port = free_port()
        second_port = free_port()
        while second_port == first_port:
            second_port = free_port()
        self.data_dir = work_dir / "store"
        self.first = PairedBroker(first_port, self.data_dir, *extra, provider=provider)
        self.second: PairedBroker | None = None
        try:
            if self.first.ready_at(120) is None:
                raise RuntimeError(
                    f"the first broker of the pair did not start: {self.first.stderr()[-3000:]}"
                )
            self.second = PairedBroker(second_port, self.data_dir, *extra, provider=provider)
            if self.second.wait_line(lambda line: is_standing_by(line) or is_ready(line), 120) is None:
                raise RuntimeError(f"the second broker did not stand by: {self.second.stderr()[-3000:]}")
        except BaseException:
            self.stop()
            raise

    @property
    def url(self) -> str:
        """``failover:(tcp://127.0.0.1:FIRST,tcp://127.0.0.1:SECOND)`` with quick reconnects (Artemis:
        ``artemis+(tcp://…,tcp://…)``)."""
        ports = [self.first.port, self.second.port if self.second is not None else self.first.port]
        brokers = ",".join(f"tcp://127.0.0.1:{p}" for p in ports)
        if self.provider == "artemis":
            return f"artemis+({brokers})?{ARTEMIS_RECONNECT}"
        return f"failover:({brokers})?{RECONNECT}"

    def stop(self) -> None:
        for broker in (self.second, self.first):
            if broker is not None:
                broker.stop()
