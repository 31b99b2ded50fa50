"""A transacted consumer for tests/faults/test_kills.py to SIGKILL: ``python -m
tests.faults.transacted_reader URL QUEUE``. It prints each message (its body, and whether it
was redelivered) as it takes it, and commits every 50: a line ``committed`` once a commit
returned. What it printed after the last ``committed`` line was not acknowledged, unless the
kill came after the broker had committed and before the line was written."""

from __future__ import annotations

import sys

import pyjms

BATCH = 50


def main(url: str, queue: str) -> None:
    with pyjms.ConnectionFactory(url).create_context(pyjms.SESSION_TRANSACTED) as ctx:
        consumer = ctx.create_consumer(ctx.create_queue(queue))
        taken = 0
        while (m := consumer.receive(5000)) is not None:
            sys.stdout.write(f"{m.get_text()} {int(m.get_jms_redelivered())}\n")
            sys.stdout.flush()
            taken += 1
            if taken % BATCH == 0:
                ctx.commit()
                sys.stdout.write("committed\n")
                sys.stdout.flush()
        ctx.commit()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
