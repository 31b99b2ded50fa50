"""DLQ handler throughput: messages per second through a 100-rule table (issue 5's figure).

N persistent dead-lettered messages (default 50,000, each with a pyjms dead-letter header)
are put on a DLQ of a standalone broker; one handler then processes them with a 100-rule
table whose first 99 rules (realistic patterns: reasons, wildcard queue names, message types)
do not match, so every message is matched against all 100 before the last rule forwards it.
Prints the handler's rate, end to end (connect, browse, match, one transaction per move).

    python bench/bench_dlq.py [--messages 50000] [--handlers 1] [--url tcp://...]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pyjms  # noqa: E402
from pyjms.dlq import DLQHandler, dead_letter  # noqa: E402

ROOT = Path(pyjms.__file__).resolve().parent.parent  # the checkout pyjms came from

REASONS = ("MQRC_Q_FULL", "MQRC_PUT_INHIBITED", "MQRC_NOT_AUTHORIZED", "MQRC_MSG_TOO_BIG_FOR_Q")


def table(target: str) -> str:
    rules = ["WAIT(NO) RETRYINT(60)"]
    for i in range(99):  # patterns the messages do not match, of every kind
        kind = i % 4
        if kind == 0:
            rules.append(f"REASON({REASONS[i % len(REASONS)]}) DESTQ(APP{i}.*) ACTION(RETRY) RETRY(3)")
        elif kind == 1:
            rules.append(
                f"MSGTYPE(MQMT_REQUEST) REPLYQM(QM{i}.*) ACTION(FWD) FWDQ(DEADQ.{i}) FWDQM(&REPLYQM)"
            )
        elif kind == 2:
            rules.append(f"DESTQM(QM{i}) PERSIST(MQPER_PERSISTENT) ACTION(FWD) FWDQ(&DESTQ) HEADER(NO)")
        else:
            rules.append(f"APPLNAME('batch{i}?') FORMAT(MQSTR) ACTION(DISCARD)")
    rules.append(f"ACTION(FWD) FWDQ({target})")
    return "\n".join(rules)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--handlers", type=int, default=1)
    parser.add_argument("--url", default=None, help="a broker to use (default: start a standalone one)")
    args = parser.parse_args()
    broker = None
    url = args.url
    if url is None:
        broker = subprocess.Popen(
            [sys.executable, "-m", "pyjms", "broker", "--port", "0"],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        line = broker.stdout.readline()  # type: ignore[union-attr]
        url = next(u for u in line.split("ready:", 1)[1].split() if u.startswith("tcp://"))
    stamp = time.strftime("%H%M%S")
    dlq, target = f"BENCH.DLQ.{stamp}", f"BENCH.DLQ.{stamp}.OUT"
    try:
        # untimed set-up: each message dead-lettered the public way (its header is pyjms's own)
        with pyjms.ConnectionFactory(url).create_context() as ctx:
            body = "x" * 100
            for _ in range(args.messages):
                dead_letter(ctx, pyjms.TextMessage(body), dlq, 2085, dest_q="APP.IN", put_appl_name="bench")
        handlers = [DLQHandler(url, dlq, table(target)) for _ in range(args.handlers)]
        threads = [threading.Thread(target=h.run) for h in handlers]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - t0
        moved = sum(h.stats.forwarded for h in handlers)
        print(
            f"dlq handler, {len(handlers[0].table)}-rule table, {args.handlers} handler(s): "
            f"{moved} of {args.messages} messages in {elapsed:.1f} s = {moved / elapsed:,.0f} msg/s "
            f"(persistent, one transaction per move, over {url.split('?')[0]})"
        )
    finally:
        if broker is not None:
            broker.terminate()
            broker.wait()


if __name__ == "__main__":
    main()
