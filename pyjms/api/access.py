"""Whom pyjms's own services act for, and where they may write for them.

A service (the admin and mark services, the delay processor and its ping) acts with the rights
of whoever asked, never with its own. Who asked is what the broker stamped on the request or
the staged message (``JMSXUserID``: ActiveMQ's populateJMSXUserID, Artemis's
populate-validated-user), never what the request body says. A service writes a reply or a
report only where that user may write, and changes its own settings only for an administrator.

A broker that runs the service in its own process answers both questions from its own access
rules (EmbeddedBroker.may_write / is_admin). A service that runs beside a broker whose rules it
cannot read falls back to the defaults here: replies to temporary destinations only (a
ServiceClient always asks with one), and administration only where the broker authenticates
nobody (no user stamped) or for the users it was told are administrators.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from pyjms.api.destination import Destination, TemporaryQueue, TemporaryTopic

__all__ = ["AdminCheck", "WriteCheck", "anyone", "anyone_admin", "temporary_only", "admins"]

#: may this user (None: the broker named none) write to this destination?
WriteCheck = Callable[[str | None, Destination], bool]
#: may this user (None: the broker named none) change a service's settings?
AdminCheck = Callable[[str | None], bool]


def anyone(user: str | None, destination: Destination) -> bool:
    """A broker without authentication: every local user may write everywhere."""
    return True


def anyone_admin(user: str | None) -> bool:
    """A broker without authentication: every local user administers it."""
    return True


def temporary_only(user: str | None, destination: Destination) -> bool:
    """Beside a broker whose rules the service cannot read: only temporary destinations, which
    their maker's connection owns and nobody's data lives in."""
    return isinstance(destination, (TemporaryQueue, TemporaryTopic))


def admins(names: Collection[str]) -> AdminCheck:
    """Beside a broker whose rules the service cannot read: the users named, and anyone where
    the broker authenticates nobody (it stamps no user)."""
    allowed = frozenset(names)
    return lambda user: user is None or user in allowed
