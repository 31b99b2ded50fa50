"""MarkingBrowser: IBM MQ's browse with mark, for one handle or a cooperating set, on any provider.

A handle's own marks (MARK_BROWSE_HANDLE) live in the handle: nobody else sees them and the
interval does not touch them. Marks for the cooperating set (MARK_BROWSE_CO_OP) live in the
mark service at the broker, so dispatchers in other processes and hosts see them, and they
lapse after MsgMarkBrowseInterval.

The browse itself is a JMS QueueBrowser "pass" over the queue. BROWSE_FIRST starts a new pass
at the head; BROWSE_NEXT goes on from the cursor. BROWSE_FIRST with UNMARKED_BROWSE_MSG and a
mark option (BROWSE_HANDLE, BROWSE_CO_OP) would return the same message as going on from the
cursor, because everything before the cursor is marked; so it goes on, and starts a new pass
only when the current one runs out. A message unmarked behind the cursor (a lapsed mark, a
backed-out get) is therefore found on the next pass, not at once.

A cooperative handle claims its next candidates in one request and hands them out in order;
they count as marked for the set from the claim (the interval runs from then), and a claimed
message whose mark is about to lapse before it is handed out is dropped, never returned late.
By default a claim takes 16 and doubles (up to 256) while the handle hands its claims out
quickly, and halves when claimed marks lapse unused; ``claim_batch=N`` fixes it at N.
"""

from __future__ import annotations

import secrets
import time
from collections import deque
from typing import Any

from pyjms.api.consumer import JMSConsumer, QueueBrowser
from pyjms.api.context import JMSContext
from pyjms.api.destination import Queue
from pyjms.api.message import Message
from pyjms.browse import options as O
from pyjms.browse.browsed import NoMessageAvailable, note_browsed, token_of
from pyjms.browse.client import Heartbeat, HeldMarks, MarkClient
from pyjms.browse.kept import KeptGets, kept_gets
from pyjms.errors import (
    ConnectionBrokenRuntimeException,
    IllegalStateRuntimeException,
    InvalidArgumentRuntimeException,
)
from pyjms.reasons import MQRC

# A pass looks at no more than a window of messages from the head, then starts again there:
# - within the provider's browser prefetch (ActiveMQ: 500), a pass never waits for the provider
#   to page more to the browser (which can take seconds while the queue is being consumed);
# - within the provider's dispatch page (ActiveMQ maxPageSize; 2000 on pyjms brokers), a message
#   a dispatcher sees is one a by-token consumer can be given.
# The messages a pass takes are consumed, so the next pass reaches further. If a whole window is
# marked by others, the next pass looks twice as far (up to _MAX_WINDOW).
_WINDOW = 400
_MAX_WINDOW = 20_000
_PAGE = 500
# a cooperating handle offers the mark service this many times its claim size in candidates
_OFFER = 8
# an adaptive claim starts at _FIRST_CLAIM and doubles up to _MAX_CLAIM while the handle hands
# a claim out within _QUICK_S (or a tenth of the interval, if shorter): a fast dispatcher pays a
# round trip per 256 messages, a slow one holds few marks. 4 dispatchers' claims at the head of
# the queue stay within a pyjms broker's dispatch page (2,000), which a by-token get can reach.
_FIRST_CLAIM = 16
_MAX_CLAIM = 256
_QUICK_S = 0.5
_POLL_S = 0.1
# a claimed message is handed out only if its mark has at least this much of the interval left
_LAPSE_MARGIN = 1 - O.CLAIM_KEPT_SHARE


class MarkingBrowser:
    """Browse with mark on one queue. Make one with pyjms.browse.create_marking_browser(ctx, ...)
    (or ctx.create_marking_browser(...), which pyjms.browse provides)."""

    def __init__(
        self,
        ctx: JMSContext,
        queue: Queue,
        message_selector: str | None = None,
        cooperative: bool = False,
        claim_batch: int | None = None,
    ) -> None:
        if not isinstance(queue, Queue):
            raise InvalidArgumentRuntimeException(f"a marking browser needs a Queue, got {queue!r}")
        if claim_batch is not None and (
            isinstance(claim_batch, bool) or not isinstance(claim_batch, int) or not 1 <= claim_batch <= 1000
        ):
            raise InvalidArgumentRuntimeException(
                f"claim_batch {claim_batch!r} must be an int 1..1000, or None (adaptive, 16..256)"
            )
        _check_open(ctx)
        self._ctx = ctx
        self._queue = queue
        self._selector = message_selector
        self._cooperative = bool(cooperative)
        self._adaptive = claim_batch is None
        self._claim_size = _FIRST_CLAIM if claim_batch is None else claim_batch
        self._claimed_at = 0.0  # when the last claim was granted (monotonic)
        # unguessable: on a broker without users, knowing a handle is the right to use it
        self._handle = secrets.token_hex(16)
        self._own: set[str] = set()  # marked for this handle
        self._jb: QueueBrowser | None = None  # the current pass's browser
        self._page: deque[Message] = deque()
        self._pass_done = True
        self._pass_count = 0
        self._window = _WINDOW
        self._windowed = False
        self._pass_cut = False  # the pass ended at its window, not at the end of the queue
        self._pass_took = False  # the pass returned (or claimed) something
        self._cursor_seen: set[str] = set()  # returned by BROWSE_NEXT in this cursor run
        # claimed for the set, not yet returned: (token, message, when claimed)
        self._reserved: deque[tuple[str, Message, float]] = deque()
        self._candidates: deque[tuple[str, Message]] = deque()  # of this pass, not yet offered
        self._closed = False
        # a cooperative handle opens with the mark service at its first need, not here: a
        # constructor asks the broker nothing (issue 13)
        self._client: MarkClient | None = None
        self._heartbeat: Heartbeat | None = None
        self._held = HeldMarks(self._handle, queue.name)  # marks for the set, to restore on a takeover
        self._interval_ms = -1
        self._paired: KeptGets | None = None  # dispatch_to: the consumer that gets what we return

    def __repr__(self) -> str:
        kind = "cooperative" if self._cooperative else "handle"
        return f"<MarkingBrowser {self._queue} {kind} selector={self._selector!r}>"

    # ------------------------------------------------------------------ public

    def get_queue(self) -> Queue:
        return self._queue

    def get_message_selector(self) -> str | None:
        return self._selector

    def is_cooperative(self) -> bool:
        return self._cooperative

    def get_mark_browse_interval(self) -> int:
        """The broker's MsgMarkBrowseInterval in ms (-1: never), as the mark service reports it now."""
        self._check()
        if self._cooperative:
            return int(self._mark_service().call("config")["interval_ms"])
        client = MarkClient(self._ctx)
        try:
            return int(client.call("config")["interval_ms"])
        finally:
            client.close()

    def get(self, options: int = O.BROWSE_HANDLE, wait_ms: int = 0) -> Message:
        """The next message the options select, marked as they say; raises NoMessageAvailable
        (MQRC_NO_MSG_AVAILABLE, 2033) if none comes within wait_ms."""
        m = self.get_or_none(options, wait_ms)
        if m is None:
            raise NoMessageAvailable(
                f"no {'unmarked ' if options & O.UNMARKED_BROWSE_MSG else ''}message on "
                f"{self._queue}" + (f" matching {self._selector!r}" if self._selector else ""),
                reason=MQRC.NO_MSG_AVAILABLE,
                values={"queue": self._queue.name},
            )
        return m

    def get_or_none(self, options: int = O.BROWSE_HANDLE, wait_ms: int = 0) -> Message | None:
        """As get, but None when no message is available."""
        self._check()
        O.check_get_options(options, self._cooperative)
        if isinstance(wait_ms, bool) or not isinstance(wait_ms, int) or wait_ms < 0:
            raise InvalidArgumentRuntimeException(f"wait_ms {wait_ms!r} must be an int >= 0")
        claiming = bool(options & O.UNMARKED_BROWSE_MSG and options & O.MARK_BROWSE_CO_OP)
        if self._reserved and not claiming:
            self._release_reserved()
        marking = bool(options & (O.MARK_BROWSE_HANDLE | O.MARK_BROWSE_CO_OP))
        first = bool(options & O.BROWSE_FIRST)
        fresh = False
        if first and not (options & O.UNMARKED_BROWSE_MSG and marking):
            self._new_pass()
            fresh = True
        if first:
            self._cursor_seen.clear()
        # only dispatching (claims for the set) reads in windows; other browsing walks the queue
        self._windowed = claiming
        deadline = time.monotonic() + wait_ms / 1000.0
        interrupted = False
        while True:
            try:
                m = self._claimed_next() if claiming else self._next(options)
            except ConnectionBrokenRuntimeException:
                # a failover client's call cut short by its broker's takeover (Artemis's client
                # unblocks it, AMQ219016): the connection goes on with the broker that took over,
                # so the step is tried once more there, from a new pass; a claim whose answer
                # was lost was never handed out, and its marks lapse. A connection that stays
                # broken fails the second time, and that error is raised
                if interrupted:
                    raise
                interrupted = True
                self._drop_pass()
                continue
            if m is not None:
                self._pass_took = True
                if options & O.MARK_BROWSE_HANDLE:
                    self._own.add(m.get_message_token())
                self._cursor_seen.add(m.get_message_token())  # behind the cursor now
                note_browsed(m)
                return m
            if not fresh or (self._windowed and self._pass_cut and self._window < _MAX_WINDOW):
                # the pass ran out: a new one from the head (or on from the cursor); one cut
                # short by its window with nothing for us looks twice as far
                self._new_pass()
                fresh = True
                continue
            if time.monotonic() >= deadline:
                return None
            time.sleep(_POLL_S)
            self._new_pass()

    def dispatch_to(self, consumer: JMSConsumer) -> MarkingBrowser:
        """Pairs this cooperative handle with the consumer that gets what it returns: the caller
        promises to hand every message BROWSE_CO_OP returns to ``consumer.receive_by_tokens``,
        in the order returned. Those gets then go through one consumer kept for each claim,
        not one made per get (pyjms.browse.kept), where the consumer's context is
        SESSION_TRANSACTED and its transaction has nothing in it yet at the get; otherwise, and
        whenever the order is not kept, a get is made as without pairing. Returns self.

        A message this handle claimed waits in the kept consumer until its get: a token handed
        to another consumer may find it there and be refused (2033) until the mark lapses."""
        self._check()
        if not self._cooperative:
            raise IllegalStateRuntimeException("dispatch_to needs a browser opened cooperative=True")
        if not isinstance(consumer, JMSConsumer):
            raise InvalidArgumentRuntimeException(f"dispatch_to takes a JMSConsumer, got {consumer!r}")
        if self._paired is not None:
            self._paired.given_up()
        self._paired = kept_gets(consumer)
        return self

    def unmark(self, message_or_token: Message | str, options: int = O.UNMARK_BROWSE_HANDLE) -> None:
        """Removes this handle's mark (UNMARK_BROWSE_HANDLE) and/or its mark for the set
        (UNMARK_BROWSE_CO_OP) from one message, so it can be browsed again."""
        self._check()
        O.check_unmark_options(options, self._cooperative)
        token = token_of(message_or_token)
        if options & O.UNMARK_BROWSE_HANDLE:
            self._own.discard(token)
        if options & O.UNMARK_BROWSE_CO_OP:
            self._mark_service().call("unmark", handle=self._handle, queue=self._queue.name, ids=[token])
            self._held.released([token])
        self._pass_done = True  # the message is behind the cursor: look from the head again

    def close(self) -> None:
        """Closes the handle; its marks (for the handle and for the set) are released."""
        if self._closed:
            return
        self._closed = True
        if self._paired is not None:
            self._paired.given_up()
        try:
            if self._heartbeat is not None:
                self._heartbeat.stop()
            if self._client is not None and not self._ctx.closed:
                try:
                    self._client.call("close", handle=self._handle)
                finally:
                    self._client.close()
        finally:
            self._close_pass()

    def __enter__(self) -> MarkingBrowser:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ the pass

    def _mark_service(self) -> MarkClient:
        """The mark service, this cooperative handle opened with it (and its lease kept alive)
        at the first call."""
        if self._client is None:
            client = MarkClient(self._ctx)
            try:
                sent_at = time.monotonic()
                answer = client.call("open", handle=self._handle)
                self._interval_ms = self._held.interval_ms = int(answer["interval_ms"])
                self._held.lease_ms = int(answer["lease_ms"])
                self._held.seen(answer, client, sent_at)
                self._heartbeat = Heartbeat(self._ctx, self._handle, int(answer["lease_ms"]), self._held)
            except BaseException:
                client.close()
                raise
            self._client = client
        return self._client

    def _check(self) -> None:
        if self._closed:
            raise IllegalStateRuntimeException("the marking browser is closed")
        _check_open(self._ctx)

    def _close_pass(self) -> None:
        if self._jb is not None:
            jb, self._jb = self._jb, None
            if not self._ctx.closed:
                jb.close()

    def _drop_pass(self) -> None:
        """Ends the current pass (after a takeover or a broken call: its browser may be broken)."""
        self._page.clear()
        self._candidates.clear()
        self._pass_done = True
        try:
            self._close_pass()
        except ConnectionBrokenRuntimeException:
            pass  # the broker that had it has gone

    def _new_pass(self) -> None:
        if self._pass_cut and not self._pass_took:
            self._window = min(self._window * 2, _MAX_WINDOW)  # all marked: look further
        elif self._pass_took:
            self._window = _WINDOW
        self._pass_took = False
        self._close_pass()
        self._page.clear()
        self._candidates.clear()
        self._jb = self._ctx.create_browser(self._queue, self._selector)
        self._pass_done = False
        self._pass_cut = False
        self._pass_count = 0

    def _fetch(self) -> Message | None:
        """The pass's next message, or None when it has run out."""
        if not self._page:
            if self._pass_done or self._jb is None:
                return None
            limit = self._window if self._windowed else _MAX_WINDOW
            self._page.extend(self._jb.next_batch(min(_PAGE, limit - self._pass_count)))
            self._pass_count += len(self._page)
            self._pass_cut = self._pass_count >= limit
            if self._pass_cut or not self._page:
                # an open browser costs the broker work on every change to the queue: close it
                # as soon as the pass has what it will take
                self._pass_done = True
                self._close_pass()
            if not self._page:
                return None
        return self._page.popleft()

    def _next(self, options: int) -> Message | None:
        """The next message of the pass that the options accept, marked for the set if asked."""
        unmarked = options & O.UNMARKED_BROWSE_MSG
        while (m := self._fetch()) is not None:
            mid = m.get_message_token()
            if options & O.BROWSE_NEXT and mid in self._cursor_seen:
                continue
            if unmarked and mid in self._own:
                continue
            if unmarked and self._cooperative:
                if self._mark_service().call("marked", queue=self._queue.name, ids=[mid])["marked"]:
                    continue
            if options & O.MARK_BROWSE_CO_OP:
                self._claim([mid])  # returned either way; the mark stays with whoever holds it
            return m
        return None

    def _claim(self, ids: list[str], limit: int | None = None) -> tuple[list[str], int]:
        """Claims for the set up to ``limit`` of ids; (granted, how many ids were looked at)."""
        client = self._mark_service()
        sent_at = time.monotonic()
        try:
            answer = client.call("claim", handle=self._handle, queue=self._queue.name, ids=ids, limit=limit)
        except IllegalStateRuntimeException:
            # the lease ran out (a stall, or a new mark service that this handle reached only
            # after its grace): open again, and claim from a new pass, never from this one. The
            # messages consumed since it browsed them are tombstoned only at the service that
            # heard of it, and a new service's table has no such tombstones
            self._lost()
            sent_at = time.monotonic()
            self._held.seen(client.call("open", handle=self._handle), client, sent_at)
            self._after_takeover()
            self._drop_pass()
            return [], 0
        # another mark service took over: the marks held at the last one go back to it first
        if not self._held.seen(answer, client, sent_at):
            return [], 0  # answered by a service that has gone since: nothing it granted holds
        self._interval_ms = self._held.interval_ms = int(answer.get("interval_ms", self._interval_ms))
        granted = list(answer["granted"])
        self._held.claimed(granted)
        return granted, int(answer.get("checked", len(ids)))

    def _claimed_next(self) -> Message | None:
        """BROWSE_CO_OP: the next message claimed for the set, claiming a batch at a time."""
        m: Message | None
        while True:
            self._after_takeover()
            if self._reserved and not self._held.current(_LAPSE_MARGIN):
                self._confirm()
                continue
            if self._reserved:
                keep_s = self._interval_ms * (1 - _LAPSE_MARGIN) / 1000.0
                now = time.monotonic()
                _, m, at = self._reserved[0]
                if self._interval_ms < 0 or now - at < keep_s:
                    self._reserved.popleft()
                    return m
                # about to lapse, and the rest of its claim is as old: give them all up now,
                # so that the other dispatchers need not wait for the interval
                lapsing = []
                while self._reserved and now - self._reserved[0][2] >= keep_s:
                    lapsing.append(self._reserved.popleft()[0])
                self._lapsing()
                self._held.released(lapsing)
                if self._client is not None:
                    self._client.notify("unmark", handle=self._handle, queue=self._queue.name, ids=lapsing)
                continue
            # offer the service several times the claim's size in candidates: with other
            # dispatchers on the queue most candidates are theirs already
            want = self._claim_size * _OFFER
            own = self._own
            while len(self._candidates) < want and (m := self._fetch()) is not None:
                token = m.get_message_token()
                if token not in own:
                    self._candidates.append((token, m))
            if not self._candidates:
                return None
            self._grow()
            offered = list(self._candidates)
            granted_ids, checked = self._claim([t for t, _ in offered], self._claim_size)
            if not checked:
                # a new mark service restores what was held before it grants more, or the
                # handle lost its lease and claims again from a new pass
                return None
            at = self._claimed_at = time.monotonic()
            granted = set(granted_ids)
            for _ in range(checked):  # looked at: granted, or someone else's
                self._candidates.popleft()
            self._reserved.extend((t, m, at) for t, m in offered[:checked] if t in granted)
            if self._paired is not None and granted:
                self._paired.claimed([t for t, _ in offered[:checked] if t in granted])
            self._pass_took = self._pass_took or bool(granted)

    def _lost(self) -> None:
        """The lease ran out (the process stalled): every mark we thought we held is gone."""
        self._reserved.clear()
        self._held.clear()
        if self._paired is not None:
            self._paired.given_up()

    def _confirm(self) -> None:
        """Asks the mark service whether the handle still holds its claims (a renewal): after a
        takeover (a renewal lost with the old service) this finds the new one and restores."""
        client = self._mark_service()
        sent_at = time.monotonic()
        answer = client.call("renew", handles=[self._handle])
        if self._handle in answer.get("lost", ()):
            self._lost()
            self._held.seen(client.call("open", handle=self._handle), client, time.monotonic())
        else:
            self._held.seen(answer, client, sent_at)

    def _after_takeover(self) -> None:
        """Once after a new mark service took over: drops the claims made before it that it
        does not hold for this handle (another dispatcher may have them now), and browses
        afresh, since the snapshot may hold messages consumed just before the takeover, whose
        tombstones went with the old service."""
        takeover = self._held.taken_over()
        if takeover is None:
            return
        seen_at, restored = takeover
        kept = deque(r for r in self._reserved if r[0] in restored or r[2] >= seen_at)
        if len(kept) < len(self._reserved) and self._paired is not None:
            self._paired.given_up()
        self._reserved = kept
        self._drop_pass()

    def _grow(self) -> None:
        """Before a claim: an adaptive handle that handed its last claim out quickly claims twice
        as many (the claim comes back only when the last one is all handed out)."""
        if not self._adaptive or not self._claimed_at:
            return
        quick_s = _QUICK_S if self._interval_ms < 0 else min(_QUICK_S, self._interval_ms / 10_000.0)
        if time.monotonic() - self._claimed_at < quick_s:
            self._claim_size = min(self._claim_size * 2, _MAX_CLAIM)

    def _lapsing(self) -> None:
        """A claimed message was dropped unused (its mark about to lapse): claim fewer."""
        if self._paired is not None:
            self._paired.given_up()
        if self._adaptive:
            self._claim_size = max(self._claim_size // 2, _FIRST_CLAIM)

    def _release_reserved(self) -> None:
        ids = [t for t, _, _ in self._reserved]
        self._reserved.clear()
        self._held.released(ids)
        if self._paired is not None:
            self._paired.given_up()
        if ids and self._client is not None:
            self._client.call("unmark", handle=self._handle, queue=self._queue.name, ids=ids)


def _check_open(ctx: JMSContext) -> None:
    if ctx.closed:
        raise IllegalStateRuntimeException("the JMSContext is closed")
