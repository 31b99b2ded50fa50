"""Gets by token through one consumer kept for a dispatcher's claims (MarkingBrowser.dispatch_to).

A get by token on a JMS provider is a consumer selecting exactly the wanted ids, made and closed
for each get: a round trip to make it and a wait for the broker to find the messages, per
transaction. A dispatcher paired with its consumer (``browser.dispatch_to(consumer)``) promises
that the tokens it returns are got by that consumer, in the order returned. Its gets then go
through one consumer kept for the whole claim (up to 256 messages), in the consumer's context
and transaction as any get by token.

A kept consumer is sent its messages in the broker's order, which is the order the browser
claimed them in, but a message may be gone by then (expired, got by a consumer outside the set),
and then the next one comes instead. So the kept consumer is used only where that can be undone:
a SESSION_TRANSACTED context whose transaction has nothing in it yet, on a provider that can
tell (ProviderPlugin.transaction_begun). A get that receives a message not asked for rolls back
what it received (nothing else was in the transaction), closes the kept consumer (its messages
go back to the queue) and gets the tokens the ordinary way. Everything else takes the ordinary
way too: tokens asked out of order, a context with work in its transaction, another context.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import deque
from collections.abc import Sequence

from pyjms.api.constants import SESSION_TRANSACTED
from pyjms.api.consumer import JMSConsumer
from pyjms.api.context import JMSContext
from pyjms.api.destination import Queue
from pyjms.api.message import Message

# the kept consumer waits for a missing message this long at a time
_SLICE_MS = 250


class KeptGets:
    """One paired consumer's kept consumer and the tokens its dispatcher claimed, in order."""

    def __init__(self, consumer: JMSConsumer) -> None:
        self._consumer = consumer
        self._expected: deque[str] = deque()  # claimed by the paired browser, not yet got
        self._kept: JMSConsumer | None = None
        self._kept_tokens: set[str] = set()  # what the kept consumer selects
        self._stale = False  # a claimed message was given up: close the kept consumer
        # reentrant: a get that rolls back hears of its own rollback (context_rolled_back)
        self._lock = threading.RLock()
        self.rolled_back = 0  # gets that met a message not asked for (for tests and benches)

    def claimed(self, tokens: Sequence[str]) -> None:
        """The paired browser claimed these, in the order it will return them."""
        with self._lock:
            self._expected.extend(tokens)

    def given_up(self) -> None:
        """The paired browser let claimed messages go (a mark about to lapse, a release, its
        close): the kept consumer must not hold them for another dispatcher."""
        with self._lock:
            self._stale = True

    def get(self, tokens: list[str], timeout_ms: int) -> list[Message] | None:
        """The messages with these tokens through the kept consumer, or None: take the ordinary
        way (nothing was received)."""
        consumer = self._consumer
        ctx = consumer.context
        with self._lock:
            if self._stale:
                self._stale = False
                self._expected.clear()
                self._close()
                return None
            if len(tokens) > len(self._expected) or any(
                t != e for t, e in zip(tokens, self._expected, strict=False)
            ):
                # out of the claimed order: the kept consumer would be sent others first
                self._expected.clear()
                self._close()
                return None
            if (
                ctx.closed
                or ctx.get_session_mode() != SESSION_TRANSACTED
                or ctx.provider.transaction_begun(ctx)
            ):
                self._close()  # what it was sent goes back, where the ordinary get finds it
                return None
            got: list[Message] = []
            rest = tokens
            while rest:
                if self._kept is None and not self._open(consumer):
                    return None
                assert self._kept is not None
                # the kept consumer selects the oldest claimed tokens, and the tokens asked for
                # are the oldest too: it has the first n of them, and nothing else before them
                n = min(len(rest), len(self._kept_tokens))
                part = self._receive(self._kept, rest[:n], timeout_ms)
                if part is None:
                    self.rolled_back += 1
                    ctx.rollback()  # only what this get took was in the transaction
                    self._expected.clear()
                    self._close()
                    return None
                got.extend(part)
                for t in rest[:n]:
                    self._expected.popleft()
                    self._kept_tokens.discard(t)
                if not self._kept_tokens:
                    self._close()  # nothing left in it: a new one selects the next claims
                rest = rest[n:]
            return got

    def _open(self, consumer: JMSConsumer) -> bool:
        """A kept consumer selecting every claimed token not yet got."""
        queue = consumer.destination
        if not isinstance(queue, Queue):
            return False  # the ordinary get says why not
        selected = list(self._expected)
        self._kept = consumer.consumer_of_messages(selected)
        self._kept_tokens = set(selected)
        return True

    @staticmethod
    def _receive(kept: JMSConsumer, tokens: list[str], timeout_ms: int) -> list[Message] | None:
        """Up to len(tokens) messages, all of them wanted; None if one was not."""
        wanted = set(tokens)
        got: list[Message] = []
        deadline = time.monotonic() + timeout_ms / 1000.0
        while len(got) < len(tokens):
            left_ms = int((deadline - time.monotonic()) * 1000)
            batch = kept.receive_batch(len(tokens) - len(got), max(min(left_ms, _SLICE_MS), 1))
            if any(m.get_message_token() not in wanted for m in batch):
                return None
            got.extend(batch)
            if not batch and left_ms <= 0:
                break  # the rest is not on the queue
        return got

    def _close(self) -> None:
        if self._kept is not None:
            kept, self._kept = self._kept, None
            self._kept_tokens = set()
            if not kept.context.closed:
                kept.close()

    def close(self) -> None:
        with self._lock:
            self._expected.clear()
            self._close()


#: each paired consumer's kept gets
_kept: weakref.WeakKeyDictionary[JMSConsumer, KeptGets] = weakref.WeakKeyDictionary()
_kept_lock = threading.Lock()


def kept_gets(consumer: JMSConsumer) -> KeptGets:
    """The consumer's kept gets, made at its pairing."""
    with _kept_lock:
        kept = _kept.get(consumer)
        if kept is None:
            kept = _kept[consumer] = KeptGets(consumer)
        return kept


def context_rolled_back(ctx: JMSContext) -> None:
    """ctx rolled back: a kept consumer of ctx's would be sent the rolled-back messages again
    (the provider redelivers them to the consumer that had them), which the mark service has
    just unmarked for the other dispatchers: close it now, so they go back to the queue."""
    with _kept_lock:
        kept = [k for c, k in _kept.items() if c.context is ctx]
    for k in kept:
        k.close()


def paired(consumer: JMSConsumer) -> KeptGets | None:
    """The consumer's kept gets if a browser was paired with it."""
    with _kept_lock:
        return _kept.get(consumer)
