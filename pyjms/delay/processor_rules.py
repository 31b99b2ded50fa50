"""The delay processor's rules thread: which targets the shim may move to without Python, and
whether the staging queue lets the processor move at all (D19).

The deliverer lets the shim move a chunk only when every target in it is a plain one: a target
Python found no rules for (put-inhibited, MAXDEPTH...). The rules thread re-reads the rules of
those targets, off the deliverer's path, and takes out any that gained some. It also reads the
staging queue's: PUT(DISABLED) on it stops the moving until it is PUT(ENABLED) again, which is
how IBM MQ has an administrator stop and restart its delay processor.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from pyjms.api.bulk import ConcurrentKeySet
from pyjms.api.context import JMSContext
from pyjms.api.destination import Queue, from_key
from pyjms.api.factory import ConnectionFactory

_log = logging.getLogger("pyjms.delay")


def has_rules(attributes: Any) -> bool:
    """Whether a target's attributes (ProviderPlugin.target_attributes) define rules a put must pass."""
    return attributes is not None and hasattr(attributes, "put_enabled")


def allowed_pair(user: str | None, key: str) -> str:
    """org.pyjms.shim.delay.DueMover.pair: a user (None: none stamped) and a target key."""
    return ("" if user is None else "u:" + user) + "\n" + key


class PlainTargets:
    """The targets without rules, as a set the shim reads (ConcurrentKeySet) and as Python keys. The
    deliverer adds to it, the rules thread takes out; a lock keeps the two views together.

    Where the processor checks who may write to a target, also the (user, target) pairs that
    passed the check (``checks_users``), which the rules thread forgets every round, so a
    right taken away is checked again within about a second."""

    def __init__(self, checks_users: bool = False) -> None:
        self._lock = threading.Lock()
        self._shared: ConcurrentKeySet | None = None  # shared with the shim
        self._keys: set[str] = set()
        self._checks_users = checks_users
        self._allowed: ConcurrentKeySet | None = None  # shared with the shim

    def reset(self) -> None:
        """Forgets every target (a Java object of a previous JVM session is not reused)."""
        with self._lock:
            self._shared = None
            self._keys = set()
            self._allowed = None

    def allowed_key_set(self) -> ConcurrentKeySet | None:
        """The pairs the shim's DueMover may move without Python; None: it checks no users."""
        if not self._checks_users:
            return None
        with self._lock:
            if self._allowed is None:
                self._allowed = ConcurrentKeySet()
            return self._allowed

    def allow(self, user: str | None, key: str) -> None:
        """A user passed the check to write to a target: its next messages may skip Python."""
        with self._lock:
            if self._allowed is not None:
                self._allowed.add(allowed_pair(user, key))

    def forget_allowed(self) -> None:
        with self._lock:
            self._allowed = None  # the deliverer's next chunk gets a new, empty set

    def key_set(self) -> ConcurrentKeySet:
        """The set the shim's DueMover reads (concurrent: the rules thread changes it)."""
        with self._lock:
            if self._shared is None:
                self._shared = ConcurrentKeySet()
                self._keys = set()
            return self._shared

    def keys(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._keys)

    def __contains__(self, key: str) -> bool:
        with self._lock:
            return key in self._keys

    def add(self, key: str) -> None:
        with self._lock:
            if key in self._keys or self._shared is None:
                return
            self._keys.add(key)
            self._shared.add(key)

    def discard(self, key: str) -> None:
        with self._lock:
            self._keys.discard(key)
            if self._shared is not None:
                self._shared.discard(key)


class RulesWatcher:
    """The rules thread; it owns the plain targets' pruning and the suspended flag."""

    def __init__(
        self, factory: ConnectionFactory, staging: str, plain: PlainTargets, stop: threading.Event
    ) -> None:
        self._factory = factory
        self._staging = staging
        self._plain = plain
        self._stop = stop
        #: set while the staging queue is PUT(DISABLED): the sorter and the deliverer do not move
        self.suspended = threading.Event()

    def run(self) -> None:
        """About twice per ProviderPlugin.attributes_max_age_s it reads each plain target's attributes again (on
        its own context: a broker query never delays a slot); a target that gained rules
        leaves the set, so its next chunk goes through Python. Forgetting the whole set every
        second instead sent one chunk per target and second through Python, a query and a
        Python move on the drain's path."""
        with self._factory.create_context() as ctx:
            while not self._stop.wait(ctx.provider.attributes_max_age_s / 2):
                self._check_staging_queue(ctx)
                self._plain.forget_allowed()
                for key in self._plain.keys():
                    if has_rules(ctx.provider.target_attributes(ctx, from_key(key))):
                        self._plain.discard(key)

    def _check_staging_queue(self, ctx: JMSContext) -> None:
        """D19: the staging queue PUT(DISABLED) stops the moves, PUT(ENABLED) starts them again."""
        attrs = ctx.provider.target_attributes(ctx, Queue(self._staging))
        disabled = attrs is not None and getattr(attrs, "put_enabled", True) is False
        if disabled and not self.suspended.is_set():
            _log.warning(
                "staging queue %s is PUT(DISABLED): the delay processor stops until it is enabled",
                self._staging,
            )
            self.suspended.set()
        elif not disabled and self.suspended.is_set():
            _log.warning("staging queue %s is PUT(ENABLED): the delay processor starts again", self._staging)
            self.suspended.clear()
