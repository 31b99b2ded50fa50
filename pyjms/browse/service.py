"""The mark service: one MarkTable per broker, answering cooperating browse handles over JMS.

Marks must outlive any dispatcher and be seen by dispatchers in other processes and hosts, so
they live with the broker: a pyjms broker runs this service in its process (as IBM MQ keeps
marks in the queue manager), and ``pyjms mark-service --url URL`` runs it beside any other
broker. Requests are small JSON text messages on PYJMS.MARKS; the ones that need an answer
carry a reply-to queue (pyjms.api.requests).

Any number of mark services may run against one broker. Each is a candidate for the role
"marks" (pyjms.api.leadership): the broker picks the active one, which alone consumes
PYJMS.MARKS; the others stand by. Every answer carries the active service's ``epoch``. A new
active service starts with an empty table; a handle that sees a new epoch sends the marks it
held with "restore". If another service was active before (it left a note on
PYJMS.MARKS.EPOCH), the new one grants no claims for four fifths of one lease period from the
first request it serves (every live handle renews, sees the new epoch and restores within it;
or of one MsgMarkBrowseInterval, if shorter, by when every earlier mark has lapsed anyway), so
no message a handle held before the takeover is granted to another handle.

Who may do what: the sender of a request is the user the broker stamped on it (JMSXUserID).
``open`` makes the sender the handle's owner; claim, unmark, renew, close and restore of a
handle by anyone else are refused (MQRC_NOT_AUTHORIZED). Handles are 128-bit random, so on a
broker without users knowing the handle is the capability. Only an administrator
(``is_admin``) may change the mark interval.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

from pyjms.api.access import AdminCheck, WriteCheck, admins, temporary_only
from pyjms.api.checks import is_int
from pyjms.api.destination import Queue
from pyjms.api.leadership import Leadership
from pyjms.api.message import Message, TextMessage
from pyjms.api.requests import brief, serve
from pyjms.bridge import jvm
from pyjms.bridge.contract import MARK_QUEUE
from pyjms.browse.marks import MarkTable
from pyjms.browse.options import (
    CLAIM_KEPT_SHARE,
    DEFAULT_MSG_MARK_BROWSE_INTERVAL_MS,
    check_interval,
    check_lease,
)
from pyjms.errors import InvalidArgumentRuntimeException, JMSRuntimeException, JMSSecurityRuntimeException
from pyjms.reasons import MQRC

if TYPE_CHECKING:
    from pyjms.api.context import JMSContext
    from pyjms.api.factory import ConnectionFactory

_log = logging.getLogger("pyjms.browse")

#: the active service's note that it serves: a new one that finds a note took over from another
EPOCH_QUEUE = MARK_QUEUE + ".EPOCH"
#: the role mark services stand for (PYJMS.LEADER.marks)
ROLE = "marks"
#: the most ids one request may carry (a claim offers at most 8 x 256), and the longest id
MOST_IDS = 4096
MOST_ID_CHARS = 512
#: the most handles one renew may carry, and the longest handle or queue name
MOST_HANDLES = 256
MOST_NAME_CHARS = 1024
#: the largest request the mark service reads (a claim of MOST_IDS tokens fits)
MOST_REQUEST_CHARS = 512 * 1024
#: how long start() waits to see this candidate elected before it reports it standing by
ELECTION_WAIT_S = 3.0

#: the default administrators: anyone where the broker names nobody, none where it names users
NO_NAMED_ADMINS: AdminCheck = admins(())

_OPS = ("claim", "marked", "unmark", "consumed", "renew", "open", "close", "config", "restore")


class MarkService:
    """Serves a MarkTable on PYJMS.MARKS from one thread, which owns the table, while the broker
    has elected this service (one of any number of candidates) the active one.

    ``may_write``: where the service may answer a user (pyjms.api.access; a ServiceClient asks
    with a temporary queue, which the default allows); ``is_admin``: who may change the mark
    interval (the default: nobody where the broker names its users, anyone where it names none).
    """

    SWEEP_EVERY_S = 0.1

    def __init__(
        self,
        factory: ConnectionFactory,
        mark_browse_interval: int = DEFAULT_MSG_MARK_BROWSE_INTERVAL_MS,
        lease_ms: int = 10_000,
        *,
        may_write: WriteCheck = temporary_only,
        is_admin: AdminCheck = NO_NAMED_ADMINS,
    ) -> None:
        check_interval(mark_browse_interval)
        check_lease(lease_ms)
        self.factory = factory
        self._factory = factory  # start(): the service's own, which the broker lets go of at its death
        self.may_write = may_write
        self.is_admin = is_admin
        self.table = MarkTable(interval_ms=mark_browse_interval, lease_ms=lease_ms)
        #: this service's term as the active one: answers carry it (None: not elected yet)
        self.epoch: str | None = None
        #: where this service runs, as `config` reports it
        self.instance = f"{socket.gethostname()}:{os.getpid()}"
        #: the MsgMarkBrowseInterval an administrator set (mark-interval --set), kept across takeovers
        self._set_interval: int | None = None
        self._restoring_until = 0.0  # monotonic: no claims granted before then (a takeover)
        #: after a takeover, the grace (s) that begins at the first request served (None: begun)
        self._grace_due: float | None = None
        self._ready = threading.Event()
        self._serving: tuple[threading.Thread, threading.Event] | None = None
        self._leadership: Leadership | None = None
        self.requests = 0

    @property
    def active(self) -> bool:
        """Whether the broker elected this service and it serves PYJMS.MARKS now."""
        return self._serving is not None and self._ready.is_set()

    # ------------------------------------------------------------------ requests

    def handle(self, request: dict[str, Any], sender: str | None = None) -> dict[str, Any]:
        """One request, from ``sender`` (the JMSXUserID the broker stamped); the answer (sent
        only if the request has a reply-to). A claim by a handle whose lease ran out raises
        LostHandle, which reaches the asker as an IllegalStateRuntimeException."""
        op = request.get("op")
        if op not in _OPS:
            raise InvalidArgumentRuntimeException(
                f"unknown mark service operation {brief(op)}", reason=MQRC.FORMAT_ERROR
            )
        if self._grace_due is not None:
            # the grace runs from the first request this service serves, not from its election:
            # until it serves, no handle can restore (its connection may take seconds to open)
            self._restoring_until, self._grace_due = time.monotonic() + self._grace_due, None
        answer = self._handle(op, request, sender)
        answer["epoch"] = self.epoch
        return answer

    def _handle(self, op: str, request: dict[str, Any], sender: str | None) -> dict[str, Any]:
        t = self.table
        if op == "config":
            interval = request.get("interval_ms")
            if interval is not None:
                if not self.is_admin(sender):
                    raise JMSSecurityRuntimeException(
                        f"user {sender!r} may not change MsgMarkBrowseInterval: only an administrator "
                        "of the mark service may (MQRC_NOT_AUTHORIZED)",
                        reason=MQRC.NOT_AUTHORIZED,
                    )
                t.interval_ms = self._set_interval = check_interval(interval)
                if self.active:
                    self._leave_note()  # a service that takes over after this one keeps it
            return {"ok": True, **self.config()}
        if op == "renew":
            handles = _texts(request.get("handles"), "handles", MOST_HANDLES, MOST_NAME_CHARS)
            for h in handles:
                self._authorize(h, sender, op)
            restoring = self._restoring()
            # while restoring, a handle this service does not know yet is not lost: it restores
            lost = [h for h in handles if not t.renew(h) and not restoring]
            return {"ok": True, "lost": lost}
        queue = _text(request.get("queue"), "queue", MOST_NAME_CHARS) if op not in ("open", "close") else ""
        ids = (
            _texts(request.get("ids"), "ids", MOST_IDS, MOST_ID_CHARS)
            if op in ("claim", "marked", "unmark", "consumed", "restore")
            else []
        )
        if op == "marked":
            return {"ok": True, "marked": t.marked(queue, ids)}
        if op == "consumed":  # a consumer committed its gets: a statement about messages, not a handle
            t.consumed(queue, ids)
            return {"ok": True}
        if op == "unmark" and request.get("handle") is None:  # a consumer backed its gets out
            return {"ok": True, "unmarked": t.unmark(queue, ids)}
        handle = _text(request.get("handle"), "handle", MOST_NAME_CHARS)
        self._authorize(handle, sender, op)
        if op == "claim":
            limit = request.get("limit")
            if limit is not None and (not is_int(limit) or not 0 <= limit <= MOST_IDS):
                raise _field_error(f"claim limit {brief(limit)} must be an int 0..{MOST_IDS}, or null")
            if self._restoring():
                # a takeover: the marks held at the last active service come back first
                return {
                    "ok": True,
                    "granted": [],
                    "checked": 0,
                    "restoring": True,
                    "interval_ms": t.interval_ms,
                }
            granted, checked = t.claim_some(handle, queue, ids, limit)
            return {"ok": True, "granted": granted, "checked": checked, "interval_ms": t.interval_ms}
        if op == "unmark":
            return {"ok": True, "unmarked": t.unmark(queue, ids, handle)}
        if op == "open":
            t.open(handle, sender)
            return {"ok": True, **self.config()}
        if op == "close":
            return {"ok": True, "released": t.close(handle)}
        # restore
        ages = request.get("ages_ms")
        if (
            not isinstance(ages, list)
            or len(ages) != len(ids)
            or not all(is_int(a) and 0 <= a <= 2**40 for a in ages)
        ):
            raise _field_error("restore ages_ms must be a list of ints >= 0 ms, one for each of its ids")
        t.open(handle, sender)
        return {"ok": True, "restored": t.restore(handle, queue, ids, ages)}

    def _authorize(self, handle: str, sender: str | None, op: str) -> None:
        """A handle is its owner's: nobody else may use it (nor open a live one again)."""
        live, owner = self.table.owner(handle)
        if live and owner != sender:
            raise JMSSecurityRuntimeException(
                f"user {sender!r} may not {op} browse handle {handle[:8]}...: it is another user's "
                "(MQRC_NOT_AUTHORIZED)",
                reason=MQRC.NOT_AUTHORIZED,
            )

    def _restoring(self) -> bool:
        return self._grace_due is not None or time.monotonic() < self._restoring_until

    def config(self) -> dict[str, Any]:
        t = self.table
        return {
            "interval_ms": t.interval_ms,
            "lease_ms": t.lease_ms,
            "marks": t.count(),
            "handles": t.live_handles(),
            "instance": self.instance,
            "restoring": self._restoring(),
        }

    # ------------------------------------------------------------------ election and loop

    def start(self) -> MarkService:
        """Stands for election; returns once this service serves, or after ELECTION_WAIT_S when
        another is active (this one stands by: ``active`` tells)."""
        self._factory = self.factory.provider.service_factory(self.factory)
        self._leadership = Leadership(self._factory, ROLE, self._elected, self._deposed).start()
        self._ready.wait(ELECTION_WAIT_S)
        return self

    def _elected(self) -> None:
        """The broker made this service the active one: a new epoch, a fresh table."""
        t = self.table
        self.table = MarkTable(interval_ms=t.interval_ms, lease_ms=t.lease_ms)
        self.epoch = uuid.uuid4().hex[:16]
        try:
            took_over = self._take_note()
        except JMSRuntimeException as e:  # say so, and be careful: as after another service
            _log.warning(
                "mark service %s: cannot read or leave its note on %s: %s", self.instance, EPOCH_QUEUE, e
            )
            took_over = True
        # no claims while handles restore: a handle hands out what it claimed before only
        # within CLAIM_KEPT_SHARE of its lease from its last answered request (sent before the
        # old service went), and of the interval from the claim; past that, every handle that
        # has not restored has stopped handing them out (pyjms.browse.client.HeldMarks). The
        # grace begins at the first request served (handle): a live handle renews within it and
        # restores, where one counted from the election may be over before this service serves
        interval_ms = self.table.interval_ms
        bound_ms = t.lease_ms if interval_ms < 0 else min(t.lease_ms, interval_ms)
        grace_ms = int(bound_ms * CLAIM_KEPT_SHARE)
        self._restoring_until = 0.0
        self._grace_due = grace_ms / 1000.0 if took_over else None
        stop = threading.Event()
        self._ready.clear()
        thread = threading.Thread(target=self._serve, args=(stop,), name="pyjms-marks", daemon=True)
        self._serving = (thread, stop)
        thread.start()
        _log.info(
            "mark service %s active on %s (epoch %s%s)",
            self.instance,
            self.factory.url,
            self.epoch,
            f", taking over: restoring marks for {grace_ms} ms from its first request" if took_over else "",
        )

    def _take_note(self) -> bool:
        """Whether another service was active before (its note is on EPOCH_QUEUE); takes up the
        MsgMarkBrowseInterval an administrator set there, and leaves this service's note."""
        with self._factory.create_context() as ctx:
            queue = Queue(EPOCH_QUEUE)
            consumer = ctx.create_consumer(queue)
            found = False
            while (m := consumer.receive(200)) is not None:
                found = True
                interval = _noted_interval(m)
                if interval is not None:
                    self.table.interval_ms = self._set_interval = interval
            self._send_note(ctx)
        return found

    def _leave_note(self) -> None:
        """Replaces the note on EPOCH_QUEUE with this service's (after an interval was set)."""
        try:
            with self._factory.create_context() as ctx:
                consumer = ctx.create_consumer(Queue(EPOCH_QUEUE))
                while consumer.receive(200) is not None:
                    pass
                self._send_note(ctx)
        except JMSRuntimeException as e:  # the interval holds here; a takeover would lose it
            _log.warning("mark service %s: cannot leave its note on %s: %s", self.instance, EPOCH_QUEUE, e)

    def _send_note(self, ctx: JMSContext) -> None:
        # persistent: a broker that takes the store over (the other of a failover pair, or this
        # one restarted on it) may have handles that still hold marks, and the interval set holds
        note = {"instance": self.instance, "epoch": self.epoch, "interval_ms": self._set_interval}
        ctx.create_producer().set_delivery_mode(2).send(Queue(EPOCH_QUEUE), json.dumps(note))

    def _deposed(self) -> None:
        if self._serving is not None:
            thread, stop = self._serving
            stop.set()
            thread.join(10)
            self._serving = None
            self._ready.clear()

    def _serve(self, stop: threading.Event) -> None:
        swept = time.monotonic()

        def sweep() -> None:
            nonlocal swept
            now = time.monotonic()
            if now - swept >= self.SWEEP_EVERY_S:
                self.table.sweep()
                swept = now

        with jvm.java_thread():
            serve(
                self._factory,
                Queue(MARK_QUEUE),
                self.handle,
                stop,
                ready=self._ready,
                batch=256,
                each_round=sweep,
                may_write=self.may_write,
                max_chars=MOST_REQUEST_CHARS,
            )

    def stop(self) -> None:
        """Steps down (a standby takes over at once) and stops."""
        if self._leadership is not None:
            self._leadership.stop()
        self._deposed()


def _noted_interval(m: Message) -> int | None:
    """The interval an administrator set, from a service's note on EPOCH_QUEUE (None: none, or
    a note that is not one: only pyjms's services may write the queue on a broker with users)."""
    try:
        note = json.loads(m.get_text() or "") if isinstance(m, TextMessage) else None
        interval = note.get("interval_ms") if isinstance(note, dict) else None
        return None if interval is None else check_interval(interval)
    except (ValueError, RecursionError, JMSRuntimeException):
        return None


def _field_error(text: str) -> InvalidArgumentRuntimeException:
    return InvalidArgumentRuntimeException(f"mark service request: {text}", reason=MQRC.FORMAT_ERROR)


def _text(value: Any, field: str, most: int) -> str:
    if not isinstance(value, str) or not value or len(value) > most:
        raise _field_error(f"{field} must be a text of 1..{most} characters, got {brief(value)}")
    return value


def _texts(value: Any, field: str, most: int, most_chars: int) -> list[str]:
    if not isinstance(value, list) or len(value) > most:
        raise _field_error(f"{field} must be a list of at most {most} texts, got {brief(value)}")
    return [_text(v, f"each of {field}", most_chars) for v in value]
