"""Ports for brokers that a test starts on a port it chose (a failover pair, whose clients must
know both ports before the second serves; a broker SIGKILLed and started again where it was).

Not ``bind(("127.0.0.1", 0))``: that hands out a port of the kernel's ephemeral range, the range
it also takes the source ports of outgoing connections from, and the suite opens thousands of
them. One of them took a pair's second port in the seconds between its choice and the second
broker's bind (CI, ``BindException: Address already in use``). So the ports come from below that
range, and each pytest-xdist worker draws from a slice of its own, so that two workers never
hand out the same port.
"""

from __future__ import annotations

import itertools
import os
import random
import socket
from pathlib import Path

#: where the kernel's ephemeral range starts when it cannot be read (Linux's default)
LINUX_EPHEMERAL_START = 32768
#: how far below the ephemeral range the ports come from
SPAN = 12_000


def _ephemeral_start() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return LINUX_EPHEMERAL_START


def _worker_slice() -> range:
    """This worker's ports: its share of the ``SPAN`` ports below the ephemeral range."""
    top = _ephemeral_start()
    bottom = max(1024, top - SPAN)
    workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1))
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    index = int(worker) % workers if worker.isdigit() else 0
    size = (top - bottom) // workers
    return range(bottom + index * size, bottom + (index + 1) * size)


_candidates: itertools.cycle[int] | None = None


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now, outside the ephemeral range, and not one
    this process handed out lately (it goes round its slice before it hands one out again)."""
    global _candidates
    if _candidates is None:
        ports = list(_worker_slice())
        start = random.randrange(len(ports))  # another run's brokers may still hold the first ones
        _candidates = itertools.cycle(ports[start:] + ports[:start])
    for _ in range(SPAN):
        port = next(_candidates)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port below the ephemeral range on 127.0.0.1")
