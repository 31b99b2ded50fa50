"""Cooperative dispatchers: N processes browse one queue with BROWSE_CO_OP, each message goes
to exactly one of them, and a consumer gets it by its token in a transaction.

    python examples/cooperative_dispatch.py                      # embedded broker, 3 dispatchers
    python examples/cooperative_dispatch.py --url tcp://127.0.0.1:61616 --dispatchers 4 --messages 2000

One process is started per dispatcher (``--dispatcher`` mode). Each prints a line per message
it handled, ``<dispatcher> <message id> <body>``, and the parent prints who handled what.
``--fail-every K`` makes each dispatcher's consumer back out every K-th get (of messages not
yet redelivered), to show the message coming back unmarked and being dispatched again.
``--batch K`` hands K tokens to the consumer at a time (one by-token consumer and one commit
for K messages).
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyjms
from pyjms.browse import BROWSE_CO_OP, NoMessageAvailable


def dispatcher(
    url: str, queue_name: str, name: str, idle_s: float, fail_every: int, selector: str | None, batch: int
) -> None:
    factory = pyjms.ConnectionFactory(url)
    with factory.create_context() as browse_ctx, factory.create_context(pyjms.SESSION_TRANSACTED) as work_ctx:
        queue = browse_ctx.create_queue(queue_name)
        browser = browse_ctx.create_marking_browser(queue, message_selector=selector, cooperative=True)
        consumer = work_ctx.create_consumer(queue)
        # every message this dispatcher returns goes to this consumer, in order: its gets go
        # through one consumer kept per claim, not one made per get
        browser.dispatch_to(consumer)
        print(f"ready {name} {os.getpid()}", flush=True)
        handled = gone = rounds = 0
        started = idle_since = time.monotonic()
        first_dispatch = last_handled = 0.0  # wall clock, for benchmarks that add up dispatchers
        while True:
            try:
                dispatched = [browser.get(BROWSE_CO_OP, wait_ms=200)]
            except NoMessageAvailable:
                if time.monotonic() - idle_since > idle_s:
                    break
                continue
            idle_since = time.monotonic()
            first_dispatch = first_dispatch or time.time()
            while len(dispatched) < batch and (m := browser.get_or_none(BROWSE_CO_OP)) is not None:
                dispatched.append(m)
            tokens = [m.get_message_token() for m in dispatched]
            # a line per message, written once per batch
            print("\n".join(f"dispatched {name} {token}" for token in tokens), flush=True)
            # the consumer gets exactly the dispatched messages, in one transaction
            got = consumer.receive_by_tokens(tokens, 2000)
            got_tokens = {m.get_message_token() for m in got}
            for token in tokens:
                if token not in got_tokens:
                    print(f"gone {name} {token}", flush=True)  # another consumer had it
                    gone += 1
            rounds += 1
            # a message backed out again and again would reach the broker's redelivery limit
            # (ActiveMQ: 6) and be dead-lettered: back out only messages not yet redelivered
            if fail_every and rounds % fail_every == 0 and not any(m.get_jms_redelivered() for m in got):
                work_ctx.rollback()  # backed out: unmarked at once, dispatched again
                for m in got:
                    print(f"backout {name} {m.get_message_token()}", flush=True)
                continue
            work_ctx.commit()
            last_handled = time.time()
            handled += len(got)
            if got:
                print(
                    "\n".join(f"handled {name} {m.get_message_token()} {m.get_text()}" for m in got),
                    flush=True,
                )
        browser.close()
    print(
        f"done {name} handled {handled} gone {gone} in {idle_since - started:.1f} s "
        f"first {first_dispatch:.3f} last {last_handled:.3f}",
        flush=True,
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", default=None, help="broker URL (default: an embedded broker with a tcp port)")
    p.add_argument("--queue", default="DISPATCH.DEMO")
    p.add_argument("--dispatchers", type=int, default=3)
    p.add_argument("--messages", type=int, default=30)
    p.add_argument("--idle", type=float, default=2.0, help="a dispatcher stops after this many idle seconds")
    p.add_argument("--fail-every", type=int, default=0)
    p.add_argument("--selector", default=None)
    p.add_argument("--batch", type=int, default=1, help="tokens a dispatcher hands its consumer at a time")
    p.add_argument("--dispatcher", metavar="NAME", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.dispatcher:
        dispatcher(
            args.url, args.queue, args.dispatcher, args.idle, args.fail_every, args.selector, args.batch
        )
        return 0

    broker = None
    url = args.url
    if url is None:
        from pyjms.broker import EmbeddedBroker

        broker = EmbeddedBroker(port=0)
        url = broker.tcp_url
    with pyjms.ConnectionFactory(url).create_context() as ctx:
        queue = ctx.create_queue(args.queue)
        producer = ctx.create_producer()
        for i in range(args.messages):
            producer.send(queue, f"order {i}")
    print(f"{args.messages} messages on {args.queue}; starting {args.dispatchers} dispatchers", flush=True)
    # each dispatcher writes to a file of its own: a pipe nobody reads yet would fill and stop it
    with tempfile.TemporaryDirectory() as tmp:
        outs = [Path(tmp) / f"d{i}.out" for i in range(1, args.dispatchers + 1)]
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    "--url",
                    url,
                    "--queue",
                    args.queue,
                    "--dispatcher",
                    f"d{i}",
                    "--idle",
                    str(args.idle),
                    "--fail-every",
                    str(args.fail_every),
                    "--batch",
                    str(args.batch),
                ],
                stdout=out.open("w"),
                text=True,
            )
            for i, out in enumerate(outs, 1)
        ]
        for proc in procs:
            proc.wait()
        lines = [line for out in outs for line in out.read_text().splitlines()]
    handled: dict[str, list[str]] = collections.defaultdict(list)
    backouts = 0
    for line in lines:
        parts = line.split(" ", 3)
        if parts[0] == "done":
            print(" ", line)
        if parts[0] == "backout":  # --fail-every: rolled back, unmarked, dispatched again
            backouts += 1
            print(f"  {parts[1]} backed out {parts[2]}: it goes back to the queue, to be dispatched again")
        if parts[0] == "handled":
            handled[parts[1]].append(parts[3])
            print(f"  {parts[1]} handled {parts[3]}")
    total = sum(len(v) for v in handled.values())
    if args.fail_every:
        print(f"{backouts} backout(s), every one dispatched again")
    print("who handled what: " + ", ".join(f"{k}: {len(v)}" for k, v in sorted(handled.items())))
    print(
        f"{total} of {args.messages} messages handled, each once"
        if total == args.messages
        else f"{total} of {args.messages} handled"
    )
    if broker is not None:
        broker.stop()
    return 0 if total == args.messages else 1


if __name__ == "__main__":
    sys.exit(main())
