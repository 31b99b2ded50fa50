"""DLQ handler throughput through a 100-rule table, against a raw Java transacted move loop.

For each broker (a persistent one, `pyjms broker --data DIR` with ActiveMQ's KahaDB, and an
in-memory one, `pyjms broker`; each said so in its heading), in interleaved rounds:
  * raw Java (bench/RawJms.java in one warm JVM, bench/raw_java.py): K consumer threads, each
    with its own connection and transacted session, receive from the DLQ and send each message
    on to the target queue (delivery mode and priority kept), committing every HANDLER_TX
    messages: the DLQ handler's own transaction size;
  * pyjms: K DLQHandler instances (threads) on the same DLQ, through a 100-rule table whose
    first 99 rules (realistic patterns: reasons, wildcard queue names, message types) do not
    match, so every message is matched against all 100 before the last forwards it. End to
    end: connect, browse, match, a transacted get and put per move.
for K in --handlers (default 1, 2 and 4). Each round puts N persistent dead letters (each with a
pyjms dead-letter header, put the public way: dead_letter()) on a new DLQ, untimed; after each
run the target is drained and counted, untimed: lost or duplicated messages end the bench.
Both sides first run --warmup untimed rounds of the same volume. Prints medians, the ratio of
K handlers to the raw loop with K consumers (target >= 0.7x), what a second handler adds,
the CPU each case used per message in the client's process (pyjms: Python and its JVM; raw
Java: its JVM) and in the broker's (medians), and the cost of rule matching per message with
the table compiled once.

    python bench/bench_dlq.py [--messages 10000] [--rounds 3] [--warmup 1] [--handlers 1,2,4]
                              [--brokers persistent,in-memory]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from raw_java import CPU_HEADING, PROVIDERS, Provider, RawJava, cpu_meter, listed, start_broker  # noqa: E402

import pyjms  # noqa: E402
from pyjms.dlq import DeadLetterHeader, DLQHandler, RulesTable, dead_letter  # noqa: E402
from pyjms.dlq.header import message_fields  # noqa: E402

REASONS = ("MQRC_Q_FULL", "MQRC_PUT_INHIBITED", "MQRC_NOT_AUTHORIZED", "MQRC_MSG_TOO_BIG_FOR_Q")
BODY = "x" * 100
#: DLQHandler commits each move (its get and its put) on its own: one message a transaction
HANDLER_TX = 1
TARGET = 0.7
FILL_TX = 1000  # dead letters put per transaction while filling (untimed)
STORES = {
    "persistent": "persistent broker: `pyjms broker --data DIR` (a store on disk: ActiveMQ's KahaDB, Artemis's journal)",
    "in-memory": "in-memory broker: `pyjms broker` (no --data: no store)",
}


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


def fill(ctx: pyjms.JMSContext, dlq: str, n: int) -> None:
    """n persistent dead letters on dlq (ctx is transacted: FILL_TX a commit)."""
    for i in range(n):
        dead_letter(ctx, pyjms.TextMessage(BODY), dlq, 2085, dest_q="APP.IN", put_appl_name="bench")
        if (i + 1) % FILL_TX == 0:
            ctx.commit()
    ctx.commit()


def count_and_clear(ctx: pyjms.JMSContext, queue: str, n: int) -> None:
    """Drains queue (untimed) and checks it held exactly n messages of BODY."""
    with ctx.create_consumer(ctx.create_queue(queue)) as consumer:
        got = chars = 0
        while batch := consumer.receive_batch(1000, 2000 if got < n else 200):
            got += len(batch)
            chars += sum(len(m.get_text()) for m in batch)
    if got != n or chars != n * len(BODY):
        raise SystemExit(f"{queue}: {got} messages arrived of {n} (lost or duplicated)")


def run_handlers(url: str, dlq: str, target: str, handlers: int) -> float:
    """msg/s of ``handlers`` DLQHandler threads moving every dead letter on dlq to target."""
    rules = RulesTable.parse(table(target))  # compiled once, outside the timing
    running = [DLQHandler(url, dlq, rules) for _ in range(handlers)]
    threads = [threading.Thread(target=h.run) for h in running]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    return sum(h.stats.forwarded for h in running) / elapsed


def matching_cost(ctx: pyjms.JMSContext, dlq: str, iterations: int) -> tuple[float, float]:
    """Microseconds per message: first_match through the 100-rule table compiled once (all
    100 tried), and reading what it is matched against (the header, then message_fields), as
    the handler does for each message it browses."""
    rules = RulesTable.parse(table("BENCH.OUT"))
    with ctx.create_browser(ctx.create_queue(dlq)) as browser:
        message = next(iter(browser))
    header = DeadLetterHeader.from_message(message)
    fields = message_fields(message, header)
    assert rules.first_match(fields) == (99, rules.rules[99]), "the bench's message must match rule 100 only"
    t0 = time.perf_counter()
    for _ in range(iterations):
        rules.first_match(fields)
    match_us = (time.perf_counter() - t0) / iterations * 1e6
    t0 = time.perf_counter()
    for _ in range(iterations):
        message_fields(message, DeadLetterHeader.from_message(message))
    return match_us, (time.perf_counter() - t0) / iterations * 1e6


#: per case, a figure per timed round
Figures = dict[str, list[float]]


def bench_store(
    provider: Provider, store: str, n: int, rounds: int, warmup: int, counts: list[int], data_dir: str | None
) -> tuple[Figures, Figures, Figures]:
    """msg/s, and CPU µs per message in the client's process and in the broker's, per case."""
    broker, url = start_broker(provider, data_dir)
    raw = None
    try:
        raw = RawJava(provider, url)
        cases: dict[str, Callable[[str, str], float]] = {}
        for k in counts:
            cases[raw_case(k)] = lambda dlq, target, k=k: raw.rate("move", dlq, target, n, k, HANDLER_TX)
            cases[pyjms_case(k)] = lambda dlq, target, k=k: run_handlers(url, dlq, target, k)
        results: Figures = {case: [] for case in cases}
        client_us: Figures = {case: [] for case in cases}
        broker_us: Figures = {case: [] for case in cases}
        with pyjms.ConnectionFactory(url).create_context(pyjms.SESSION_TRANSACTED) as tx_ctx:
            with pyjms.ConnectionFactory(url).create_context() as ctx:
                for r in range(-warmup, rounds):  # negative rounds warm both JVMs, untimed
                    for i, (case, run) in enumerate(cases.items()):
                        round_name = f"W{-r}" if r < 0 else f"R{r}"  # a queue name has no '-'
                        dlq = f"BENCH.DLQ.{store.replace('-', '').upper()}.{round_name}.{i}"
                        fill(tx_ctx, dlq, n)
                        cpu = cpu_meter(
                            raw.proc.pid if case.startswith("raw Java") else os.getpid(), broker.pid
                        )
                        rate = run(dlq, dlq + ".OUT")
                        if r >= 0:
                            client, broker_side = cpu(n)
                            results[case].append(rate)
                            client_us[case].append(client)
                            broker_us[case].append(broker_side)
                        count_and_clear(ctx, dlq + ".OUT", n)
                        count_and_clear(ctx, dlq, 0)
        return results, client_us, broker_us
    finally:
        if raw is not None:
            raw.close()
        broker.terminate()
        broker.wait()


def raw_case(k: int) -> str:
    return f"raw Java transacted move, {k} consumer{'s' if k > 1 else ''}"


def pyjms_case(k: int) -> str:
    return f"pyjms DLQHandler, {k} handler{'s' if k > 1 else ''}"


def report(
    provider: Provider,
    store: str,
    n: int,
    rounds: int,
    warmup: int,
    counts: list[int],
    results: Figures,
    client_us: Figures,
    broker_us: Figures,
) -> None:
    med = {case: statistics.median(v) for case, v in results.items()}
    print(
        f"\n== {provider.name}, {STORES[store]}: {n:,} persistent dead letters of {len(BODY)} bytes, "
        f"{HANDLER_TX} message(s) a transaction; {warmup} untimed warm-up round(s), "
        f"{rounds} interleaved rounds, medians"
    )
    print(f"{'client':40} {'msg/s (median)':>15} {'ratio':>7}  {'vs':36} rounds")
    for k in counts:
        base, ours = raw_case(k), pyjms_case(k)
        print(
            f"{base:40} {med[base]:15,.0f} {'':7}  {'':36} " + ", ".join(f"{v:,.0f}" for v in results[base])
        )
        ratio = med[ours] / med[base]
        verdict = "met" if ratio >= TARGET else "MISSED"
        print(
            f"{ours:40} {med[ours]:15,.0f} {ratio:6.2f}x  {base:36} "
            + ", ".join(f"{v:,.0f}" for v in results[ours])
            + f"  (target >= {TARGET}x: {verdict})"
        )
    one = counts[0]
    for more in counts[1:]:
        gain = med[pyjms_case(more)] / med[pyjms_case(one)]
        raw_gain = med[raw_case(more)] / med[raw_case(one)]
        print(
            f"{provider.name}, {store}: {more} handlers / {one}: {gain:.2f}x (raw Java {more} consumers / {one}: "
            f"{raw_gain:.2f}x; target: handlers add throughput, > 1.00x: {'met' if gain > 1.0 else 'MISSED'})"
        )
    print(CPU_HEADING)
    print(f"  {'cpu of':46} {'client µs':>10} {'broker µs':>10}")
    for k in counts:
        for case in (raw_case(k), pyjms_case(k)):
            client, broker = statistics.median(client_us[case]), statistics.median(broker_us[case])
            print(f"  {'cpu of ' + case:46} {client:10.1f} {broker:10.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1, help="untimed rounds of every case before timing")
    ap.add_argument("--handlers", default="1,2,4", help="concurrent handlers (and raw Java consumers) to run")
    ap.add_argument("--brokers", default="persistent,in-memory", help=f"of {', '.join(STORES)}")
    ap.add_argument("--providers", default="activemq", help="of activemq, artemis (each its own broker)")
    ap.add_argument("--match-iterations", type=int, default=20_000)
    args = ap.parse_args()
    counts = sorted({int(k) for k in args.handlers.split(",")})
    stores = listed("--brokers", args.brokers, STORES)
    providers = listed("--providers", args.providers, ("activemq", "artemis"))
    print(f"pyjms {pyjms.__version__} DLQ handler, standalone brokers over tcp://127.0.0.1")
    handler_rate = None
    for name in providers:
        for store in stores:
            with tempfile.TemporaryDirectory(prefix="pyjms-bench-dlq-") as tmp:
                data_dir = tmp if store == "persistent" else None
                results, client_us, broker_us = bench_store(
                    PROVIDERS[name], store, args.messages, args.rounds, args.warmup, counts, data_dir
                )
            report(
                PROVIDERS[name],
                store,
                args.messages,
                args.rounds,
                args.warmup,
                counts,
                results,
                client_us,
                broker_us,
            )
            handler_rate = statistics.median(results[pyjms_case(counts[0])])  # the last broker's

    # matching alone, in this process's warm interpreter, on a dead letter as the handler browses it
    broker, url = start_broker(PROVIDERS["activemq"])
    try:
        with pyjms.ConnectionFactory(url).create_context(pyjms.SESSION_TRANSACTED) as ctx:
            fill(ctx, "BENCH.DLQ.MATCH", 1)
            match_us, fields_us = matching_cost(ctx, "BENCH.DLQ.MATCH", args.match_iterations)
    finally:
        broker.terminate()
        broker.wait()
    per_message_us = 1e6 / handler_rate if handler_rate else float("nan")
    print(
        f"\nrule matching, 100-rule table compiled once, all 100 rules tried: {match_us:.1f} us per message "
        f"(+ {fields_us:.1f} us reading its header and fields), {(match_us + fields_us) / per_message_us:.1%} of "
        f"the {per_message_us:,.0f} us a message takes a handler ({providers[-1]}, {stores[-1]} broker, {pyjms_case(counts[0])})"
    )


if __name__ == "__main__":
    main()
