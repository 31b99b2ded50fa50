"""A candidate for a role in a process of its own, for kill tests and the takeover bench:
``python -m tests.faults.leader_candidate URL ROLE [PROVIDER]`` prints ``elected`` and
``deposed`` lines (flushed) as the broker makes it the leader and takes that away."""

from __future__ import annotations

import sys
import threading

import pyjms
from pyjms.api.leadership import Leadership


def main(url: str, role: str, provider: str | None = None) -> None:
    factory = pyjms.ConnectionFactory(url, provider=provider)
    done = threading.Event()
    candidate = Leadership(
        factory,
        role,
        on_elected=lambda: print("elected", flush=True),
        on_deposed=lambda: print("deposed", flush=True),
    ).start()
    print("standing", flush=True)
    try:
        done.wait()  # until killed
    finally:
        candidate.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
