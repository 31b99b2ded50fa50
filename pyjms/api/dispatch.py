"""A session's message listeners and the one thread that runs them.

JMS runs a session's listeners one at a time, on a thread of the session's: the shim queues
what each listening receiver gets, and this thread takes it (Channel.next_listened), runs the
consumer's listener, and returns a verdict (Channel.listened_done): a listener that raised gets
its message redelivered. Python never runs on a provider's thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from pyjms.api import observers
from pyjms.api.message import Message
from pyjms.bridge import codec, jvm
from pyjms.bridge.channel import Channel
from pyjms.errors import IllegalStateRuntimeException

if TYPE_CHECKING:
    from pyjms.api.consumer import JMSConsumer


class ListenerDispatch:
    """The listening consumers of one session, and its dispatch thread (started with the first)."""

    def __init__(
        self, channel: Channel, closed: Callable[[], bool], acknowledger: Callable[[Message], None] | None
    ) -> None:
        self._channel = channel
        self._closed = closed
        self._acknowledger = acknowledger
        self._consumers: dict[int, JMSConsumer] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def check_none(self) -> None:
        """JMS 2.0: no synchronous receive in a session that has a message listener."""
        if self._consumers:
            raise IllegalStateRuntimeException(
                "this context has a message listener: synchronous receive is not allowed on it (JMS 2.0)"
            )

    def listen(self, consumer: JMSConsumer, on: bool) -> None:
        """Starts (``on``) or stops handing the consumer's messages to its listener."""
        with self._lock:
            if not on:
                self._consumers.pop(consumer.receiver_id, None)
                return
            self._consumers[consumer.receiver_id] = consumer
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="pyjms-dispatch", daemon=True)
                self._thread.start()

    def join(self) -> None:
        """After the session closed: waits for the thread to end (not from the thread itself)."""
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        with jvm.java_thread():
            while not self._closed():
                try:
                    buf = self._channel.next_listened(200)
                except Exception:
                    if self._closed():
                        return
                    raise
                if buf is None:
                    continue
                receiver_id, rec = codec.read_listened(buf)
                consumer = self._consumers.get(receiver_id)
                ok = False
                try:
                    listener = None if consumer is None else consumer.get_message_listener()
                    if consumer is not None and listener is not None:
                        message = Message.from_record(rec, self._acknowledger)
                        if not consumer.is_resend(message):  # a resend is consumed, not handed over
                            observers.deliver(consumer, message, listener)
                        ok = True
                except Exception as e:  # a failing listener must not kill the dispatcher
                    if consumer is not None:  # (always: only the listener raises)
                        consumer.listener_failed(e)
                try:
                    self._channel.listened_done(ok)
                except Exception:
                    if self._closed():
                        return
