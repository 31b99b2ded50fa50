"""JMS 2.0 async send through the client's own CompletionListener (where it has one).

The shim sends at once and queues each outcome under a ticket (Channel.sendAsync /
nextCompletion); one Python thread per context takes the outcomes and calls the listeners in
send order, as JMS requires, holding back outcomes that arrive early (Artemis reports a refused
send before the confirmations of earlier ones), so Python never runs on a provider thread. Where
the client has no async send (ActiveMQ Classic's), pyjms.api.sending sends synchronously on a
thread of its own instead.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from pyjms.bridge import codec as C
from pyjms.bridge import jvm
from pyjms.bridge.channel import Channel, SendArgs, SendOutcome
from pyjms.errors import JMSRuntimeException

if TYPE_CHECKING:
    from pyjms.api.destination import Destination

_log = logging.getLogger("pyjms")

#: how long the completion thread waits for an outcome before it looks at its context again
_POLL_MS = 200

#: a send's outcome from the shim: the header block it got, or the error that failed it
Outcome = SendOutcome

#: the outcome of a send the client refused at the call (it raised to the sender)
_NEVER_SENT: Outcome = (None, None)


#: called with the sent message's headers, or with the error that failed the send
Completion = Callable[[Mapping[str, Any] | None, JMSRuntimeException | None], None]


class NativeAsyncSends:
    """The outstanding async sends of one session, and the thread that completes them."""

    def __init__(self, channel: Channel, closed: Callable[[], bool]) -> None:
        self._channel = channel
        self._closed = closed
        self._tickets = itertools.count(1)
        self._pending: dict[int, tuple[Destination, Completion]] = {}
        self._arrived: dict[int, Outcome] = {}  # outcomes ahead of an earlier send's
        self._next = 1  # the ticket whose completion is due next
        self._idle = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="pyjms-completions", daemon=True)
        self._thread.start()

    def send(self, destination: Destination, args: SendArgs, completion: Completion) -> None:
        """Hands one send (Channel.send's arguments) to the client; a refusal at the call itself
        raises here, as JMS allows; ``completion`` runs on this context's completion thread."""
        ticket = next(self._tickets)
        with self._idle:
            self._pending[ticket] = (destination, completion)
        try:
            self._channel.send_async(args, ticket, f"send to {destination}")
        except JMSRuntimeException:
            with self._idle:
                self._arrived[ticket] = _NEVER_SENT  # no outcome will come: later ones must not wait
            raise

    def drain(self) -> None:
        """Waits until every send so far has completed and its listener has run."""
        if threading.current_thread() is self._thread:
            return  # a listener sending again must not wait for itself
        with self._idle:
            while self._pending and self._thread.is_alive():
                self._idle.wait(0.5)

    def stop(self) -> None:
        self.drain()
        self._stopping = True
        self._thread.join(timeout=5)

    def _run(self) -> None:
        with jvm.java_thread():
            while not self._stopping:
                try:
                    outcome = self._channel.next_completion(_POLL_MS, "async send completion")
                except JMSRuntimeException:  # the channel went away under us: nothing more will complete
                    if self._closed():
                        return
                    raise
                with self._idle:
                    if outcome is not None:
                        ticket, arrived = outcome
                        self._arrived[ticket] = arrived
                self._complete_due()

    def _complete_due(self) -> None:
        """Completes the sends whose outcomes are known, in ticket order, up to the first gap."""
        while True:
            with self._idle:
                ticket = self._next
                if ticket not in self._arrived:
                    return
                self._next += 1
                arrived = self._arrived.pop(ticket)
            self._complete(ticket, arrived)

    def _complete(self, ticket: int, arrived: Outcome) -> None:
        with self._idle:
            entry = self._pending.get(ticket)
        if entry is None or arrived is _NEVER_SENT:
            with self._idle:
                self._pending.pop(ticket, None)
                self._idle.notify_all()
            return
        destination, completion = entry
        headers, error = arrived
        try:
            if error is None:
                # a success always carries the header block the provider assigned
                completion(C.read_headers(cast(bytes, headers), 0)[0], None)
            else:
                completion(None, self._channel.translated(error, f"send to {destination}"))
        finally:
            with self._idle:
                self._pending.pop(ticket, None)
                self._idle.notify_all()


def notify_listener(listener: Any, message: Any, error: JMSRuntimeException | None) -> None:
    """Tells a producer's completion listener (JMS's CompletionListener, or a callable taking
    the message and the error) how a send of ``message`` ended."""
    try:
        if hasattr(listener, "on_completion"):
            if error is None:
                listener.on_completion(message)
            else:
                listener.on_exception(message, error)
        else:
            listener(message, error)
    except Exception:  # a failing listener must not stop later completions
        _log.exception("completion listener failed")
