"""``pyjms mark-service`` processes, and cooperative dispatchers, for the takeover tests and bench."""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass

import pyjms
from pyjms.api.requests import ServiceUnavailable
from pyjms.browse import BROWSE_CO_OP, NoMessageAvailable
from tests.faults.processes import PyjmsProcess

#: a short lease: a new active service restores marks for one lease before it grants claims
MARK_LEASE_MS = 1500


class MarkServiceProcess(PyjmsProcess):
    """``pyjms mark-service`` in its own process; ``first`` is the first line it printed
    ("standing by", or that it is active), waited for when first asked: several started in a
    row start their JVMs side by side."""

    def __init__(self, url: str) -> None:
        super().__init__("mark-service", "--url", url, "--mark-lease", str(MARK_LEASE_MS))

    @functools.cached_property
    def first(self) -> str:
        return self.first_line(60)


@dataclass(frozen=True)
class Dispatch:
    """One message a cooperative browse handed to a dispatcher, and what became of it."""

    dispatcher: str
    token: str
    handed_at: float  # monotonic: when the browse handed it over
    done_at: float  # when the dispatcher's get of it (and its commit) ended
    got: bool  # the get took it and the commit returned


def handouts(dispatched: list[Dispatch], token: str, t0: float) -> str:
    """One message's hand-outs, times in seconds from ``t0`` (for a failure's details)."""
    return f"{token}: " + "; ".join(
        f"{d.dispatcher} handed {d.handed_at - t0:+.3f} s, done {d.done_at - t0:+.3f} s, "
        + ("got" if d.got else "not got")
        for d in sorted(dispatched, key=lambda d: d.handed_at)
        if d.token == token
    )


def double_dispatches(dispatched: list[Dispatch], held_s: float) -> list[str]:
    """The tokens of messages dispatched twice, as cooperative marks promise they never are:
    got twice; handed to a dispatcher while another held it (before that one's get ended, and
    within ``held_s`` of its hand-out: a handle hands a claim out only while the claim has at
    least that much of MsgMarkBrowseInterval left); or handed out after another dispatcher got
    it (a consumed message is never dispatched again, B07). A message handed out again after a
    get that did not take it is no double dispatch: its mark lapsed unused (B09), or its get
    backed out (B08)."""
    by_token: dict[str, list[Dispatch]] = {}
    for d in dispatched:
        by_token.setdefault(d.token, []).append(d)
    twice = []
    for token, handed in by_token.items():
        handed.sort(key=lambda d: d.handed_at)
        if sum(d.got for d in handed) > 1 or any(
            later.handed_at < min(earlier.done_at, earlier.handed_at + held_s)
            or (earlier.got and later.handed_at >= earlier.done_at)
            for i, later in enumerate(handed)
            for earlier in handed[:i]
        ):
            twice.append(token)
    return twice


def dispatch(
    url: str,
    queue_name: str,
    name: str,
    dispatched: list[Dispatch],
    feeding_done: threading.Event,
    idle_s: float,
    stop: threading.Event | None = None,
) -> None:
    """A cooperative dispatcher that takes its time (so that claims are held across a
    takeover) and gets each message it was handed by its token, in a transaction; it ends once
    nothing came for ``idle_s`` since it saw ``feeding_done`` set (or since its last message, if
    later), or once ``stop`` is set. A get whose commit fails (its broker went away) is recorded
    as not got: the message is there again for a dispatcher."""
    factory = pyjms.ConnectionFactory(url)
    with factory.create_context() as bctx, factory.create_context(pyjms.SESSION_TRANSACTED) as wctx:
        q = bctx.create_queue(queue_name)
        browser = bctx.create_marking_browser(q, cooperative=True)
        consumer = wctx.create_consumer(q)
        idle_since = time.monotonic()
        done_seen: float | None = None  # when it first saw feeding_done set
        while stop is None or not stop.is_set():
            try:
                m = browser.get(BROWSE_CO_OP, wait_ms=200)
            except (NoMessageAvailable, ServiceUnavailable):  # nothing now, or between two services
                if feeding_done.is_set():
                    done_seen = done_seen or time.monotonic()
                    if time.monotonic() - max(idle_since, done_seen) > idle_s:
                        break
                continue
            handed_at = idle_since = time.monotonic()
            token = m.get_message_token()
            time.sleep(0.008)
            try:
                got = bool(consumer.receive_by_tokens([token], 2000))
                if got:
                    wctx.commit()
            except pyjms.JMSRuntimeException:  # rolled back, or in doubt
                got = False
            dispatched.append(Dispatch(name, token, handed_at, time.monotonic(), got))
        browser.close()
