"""The one send path of a context's session: every wire send goes through its SendPath.

Producers (single, batch, async, forward), routed bulk sends (the Spark sink, the delay
processor) and the delay probes all send through ``ctx.sends``; it keeps JMS's order (a
synchronous send waits for the session's async ones), runs the async sends (the client's own
CompletionListener where it has one, pyjms.api.completions; else a thread of the context's), and
every failure reaches the caller as a pyjms error (the typed channel translates). As Qpid JMS's
producer hands every send to its session, which hands it to the provider, pyjms's producer
hands it here, and this hands it to the channel.
"""

from __future__ import annotations

import queue as _queue
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pyjms.api.completions import Completion, NativeAsyncSends
from pyjms.bridge import codec as C
from pyjms.bridge import jvm
from pyjms.bridge.channel import Channel
from pyjms.bridge.java_types import JavaStringArg
from pyjms.errors import IllegalStateRuntimeException, JMSRuntimeException

if TYPE_CHECKING:
    from pyjms.api.destination import Destination

#: a send's options, as the channel takes them: delivery mode, priority, time to live (ms),
#: delivery delay (ms), flags (pyjms.bridge.contract.SEND_*)
SendOptions = tuple[int, int, int, int, int]


class SendPath:
    """Every wire send of one session, in order, with its errors translated."""

    def __init__(
        self,
        channel: Channel,
        wire_key: Callable[[Destination], JavaStringArg],
        closed: Callable[[], bool],
    ) -> None:
        self._channel = channel
        self._wire_key = wire_key
        self._closed = closed
        self._thread_sends: _ThreadSends | None = None  # async sends where the client has none
        self._native_sends: NativeAsyncSends | None = None  # the client's own async sends
        self._client_sends_async: bool | None = None  # asked once

    @property
    def channel(self) -> Channel:
        return self._channel

    def key(self, destination: Destination) -> JavaStringArg:
        """The destination's key on the wire, once the session and the destination passed
        (strict mode: the broker has it)."""
        if self._closed():
            raise IllegalStateRuntimeException("the JMSContext is closed")
        return self._wire_key(destination)

    # ------------------------------------------------------------------ synchronous sends

    def send(self, key: JavaStringArg, record: bytes, options: SendOptions, what: str) -> None:
        """One encoded message (codec.pack_record). It waits for the async sends this path
        makes on its thread; the client's own async sends are on the wire in order already."""
        if self._thread_sends is not None:
            self._thread_sends.drain()
        self._channel.send(key, record, *options, what)

    def send_batch(
        self, key: JavaStringArg, records: Sequence[bytes], options: SendOptions, what: str
    ) -> int:
        """Many encoded messages to one destination with one set of options, in one crossing."""
        self.drain()
        return self._channel.send_batch(key, C.pack_batch(records, len(records)), *options, what)

    def send_routed(self, entries: Sequence[bytes]) -> int:
        """Routed entries (codec.pack_routed: each its own destination and options), in one
        crossing."""
        if self._closed():
            raise IllegalStateRuntimeException("the JMSContext is closed")
        if not entries:
            return 0
        self.drain()
        return self._channel.send_routed(
            C.pack_batch(entries, len(entries)), 0, f"send of {len(entries)} routed messages"
        )

    def forward_consumed(
        self,
        message_id: str,
        key: JavaStringArg,
        drop: Collection[str],
        block: bytes,
        options: SendOptions,
        what: str,
    ) -> bool:
        """The message this session consumed last, copied in the JVM and sent (no delay: the
        options' delay is ignored); False if the channel has no such message."""
        self.drain()
        mode, priority, ttl, _, flags = options
        return self._channel.forward_consumed(message_id, key, drop, block, mode, priority, ttl, flags, what)

    def send_records(
        self,
        destination: Destination,
        records: Sequence[bytes],
        options: SendOptions,
        *,
        describe: bool = False,
        completion: Completion | None = None,
    ) -> tuple[int, Mapping[str, Any] | None]:
        """The end of every producer's send chain: (how many were sent, the headers the one
        message got when ``describe``). With ``completion`` the send is async: it returns at
        once, and ``completion`` hears of the outcome, in send order."""
        key = self._wire_key(destination)
        describe = describe or completion is not None
        channel = self._channel

        def wire() -> Mapping[str, Any] | None:
            if not records:
                return None
            if len(records) == 1:
                what = f"send to {destination}"
                if describe:
                    headers, _ = C.read_headers(channel.send_described(key, records[0], *options, what), 0)
                    return headers
                channel.send(key, records[0], *options, what)
                return None
            channel.send_batch(
                key,
                C.pack_batch(records, len(records)),
                *options,
                f"send_batch of {len(records)} messages to {destination}",
            )
            return None

        if completion is None:
            self.drain()
            return len(records), wire()
        native = self._native_async() if len(records) == 1 else None
        if native is not None:
            native.send(destination, (key, records[0], *options), completion)  # the client's own
            return 1, None

        def job() -> None:
            try:
                headers = wire()
            except JMSRuntimeException as e:
                completion(None, e)
            else:
                completion(headers, None)

        if self._thread_sends is None:
            self._thread_sends = _ThreadSends()
        self._thread_sends.submit(job)
        return len(records), None

    # ------------------------------------------------------------------ order and lifecycle

    def drain(self) -> None:
        """JMS keeps a session's sends in order: a synchronous send waits for async ones."""
        if self._thread_sends is not None:
            self._thread_sends.drain()
        if self._native_sends is not None:
            self._native_sends.drain()

    def close(self) -> None:
        """Waits for the async sends, then stops their threads."""
        if self._thread_sends is not None:
            self._thread_sends.stop()
        if self._native_sends is not None:
            self._native_sends.stop()

    def _native_async(self) -> NativeAsyncSends | None:
        """The client's own async sends, or None where it has none (ActiveMQ Classic's)."""
        if self._client_sends_async is None:
            self._client_sends_async = self._channel.sends_async()
        if not self._client_sends_async:
            return None
        if self._native_sends is None:
            self._native_sends = NativeAsyncSends(self._channel, self._closed)
        return self._native_sends


class _ThreadSends:
    """JMS 2.0 async send where the client has none: one thread per session sends in order and
    calls the listeners."""

    def __init__(self) -> None:
        self._q: _queue.Queue[Callable[[], None] | None] = _queue.Queue()
        self._thread = threading.Thread(target=self._run, name="pyjms-async-send", daemon=True)
        self._thread.start()

    def submit(self, job: Callable[[], None]) -> None:
        self._q.put(job)

    def drain(self) -> None:
        if threading.current_thread() is not self._thread:
            self._q.join()

    def stop(self) -> None:
        self.drain()
        self._q.put(None)
        self._thread.join(timeout=5)

    def _run(self) -> None:
        with jvm.java_thread():
            while True:
                job = self._q.get()
                try:
                    if job is None:
                        return
                    job()
                finally:
                    self._q.task_done()
