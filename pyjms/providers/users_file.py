"""The users file of a pyjms broker (``pyjms broker --users FILE``): who may sign in, their
groups, and what each group may read, write and administer (docs/security.md).

A TOML file::

    [users.alice]
    password = "change-me"
    groups = ["admins", "orders"]

    [users.shipper]
    password = "change-me-too"
    groups = ["orders", "services"]

    [[access]]
    queue = "ORDERS.>"        # or topic = "...": ActiveMQ wildcards, > any words, * one word
    read = ["orders"]
    write = ["orders"]
    admin = ["orders"]        # admin: create the destination on first use

Group ``admins`` (ADMINS_GROUP) administers pyjms's services; group ``services``
(SERVICES_GROUP) may run a standalone delay processor or mark service. A malformed file is
refused with one line naming the file, the entry and the rule; a password is never shown.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyjms.errors import InvalidArgumentRuntimeException
from pyjms.providers.activemq.embedded import SYSTEM_GROUP, SYSTEM_USER, AccessRule

_USER_KEYS = {"password", "groups"}
_RIGHTS = ("read", "write", "admin")
_KINDS = ("queue", "topic")
#: a name ends at a comma or blank in the brokers' group lists
_NOT_IN_NAMES = (",", " ", "\t", "\n")


@dataclass(frozen=True)
class UsersFile:
    """What a users file says, in the form EmbeddedBroker and EmbeddedArtemisBroker take."""

    users: Mapping[str, tuple[str, Sequence[str]]]
    access: Sequence[AccessRule]


class _Refusal(Exception):
    """One rule a file breaks: the entry and the rule, without the file's name."""

    def __init__(self, entry: str, rule: str) -> None:
        super().__init__(f"{entry}: {rule}")


def load_users(path: str | os.PathLike[str]) -> UsersFile:
    """The users and access rules in ``path``; InvalidArgumentRuntimeException names the file,
    the entry and the rule it breaks."""
    where = Path(path)
    try:
        with where.open("rb") as f:
            doc = tomllib.load(f)
    except OSError as e:
        raise _refused(where, f"cannot read it: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise _refused(where, f"not TOML: {e}") from None
    try:
        return _parse(doc)
    except _Refusal as e:
        raise _refused(where, str(e)) from None


def _refused(where: Path, why: str) -> InvalidArgumentRuntimeException:
    return InvalidArgumentRuntimeException(f"users file {where}: {why}", values={"users_file": str(where)})


def _parse(doc: dict[str, Any]) -> UsersFile:
    for key in doc:
        if key not in ("users", "access"):
            raise _Refusal(key, "unknown key (a users file has [users.NAME] tables and [[access]] rules)")
    table = doc.get("users")
    if not isinstance(table, dict) or not table:
        raise _Refusal("users", "at least one user is needed, as a [users.NAME] table")
    users = {name: _user(name, entry) for name, entry in table.items()}
    groups = {g for _, gs in users.values() for g in gs}
    rules = doc.get("access", [])
    if not isinstance(rules, list):
        raise _Refusal("access", "must be [[access]] tables")
    access = [_rule(i, r, groups) for i, r in enumerate(rules, 1)]
    return UsersFile(users, access)


def _user(name: str, entry: object) -> tuple[str, tuple[str, ...]]:
    where = f"users.{name}"
    _check_name(where, "user name", name)
    if name == SYSTEM_USER:
        raise _Refusal(where, f"the name {SYSTEM_USER} is pyjms's own services' user")
    if not isinstance(entry, dict):
        raise _Refusal(where, "must be a table with password and groups")
    unknown = set(entry) - _USER_KEYS
    if unknown:
        raise _Refusal(where, f"unknown key {sorted(unknown)[0]!r} (a user has password and groups)")
    password = entry.get("password")
    if not isinstance(password, str) or not password:
        raise _Refusal(where, "password must be a non-empty string")
    groups = _names(f"{where}.groups", entry.get("groups", []))
    if SYSTEM_GROUP in groups:
        raise _Refusal(f"{where}.groups", f"the group {SYSTEM_GROUP} is pyjms's own services' group")
    return password, groups


def _rule(number: int, entry: object, groups: set[str]) -> AccessRule:
    where = f"access #{number}"
    if not isinstance(entry, dict):
        raise _Refusal(where, "must be a table")
    kinds = [k for k in _KINDS if k in entry]
    if len(kinds) != 1:
        raise _Refusal(where, "needs exactly one of queue = PATTERN or topic = PATTERN")
    kind = kinds[0]
    pattern = entry[kind]
    if not isinstance(pattern, str) or not pattern.strip():
        raise _Refusal(f"{where}.{kind}", "must be a non-empty destination name or pattern")
    unknown = set(entry) - set(_RIGHTS) - {kind}
    if unknown:
        raise _Refusal(
            where, f"unknown key {sorted(unknown)[0]!r} (a rule has queue or topic, read, write, admin)"
        )
    rights = {}
    for right in _RIGHTS:
        names = _names(f"{where}.{right}", entry.get(right, []))
        for g in names:
            if g not in groups:
                raise _Refusal(f"{where}.{right}", f"group {g!r} is no user's group")
        rights[right] = names
    return AccessRule(pattern, kind=kind, **rights)


def _names(where: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _Refusal(where, "must be a list of group names")
    for g in value:
        _check_name(where, "group name", g)
    return tuple(value)


def _check_name(where: str, what: str, value: object) -> None:
    if not isinstance(value, str) or not value or any(c in value for c in _NOT_IN_NAMES):
        raise _Refusal(where, f"{what} {value!r} must be a non-empty string without commas or blanks")
