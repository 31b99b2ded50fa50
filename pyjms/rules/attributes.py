"""Destination attributes in IBM MQ's terms, which the delay rules (D05, D22, D23) and the
delay processor (D15, D19) read.

Queues: MAXDEPTH, MAXMSGL, PUT(ENABLED|DISABLED), CLUSTER with DEFBIND(OPEN|NOTFIXED|GROUP).
Topics: PMSGDLV and NPMSGDLV (ALLDUR|ALLAVAIL|ALL). A broker that defines them answers
through its provider plug-in (ProviderPlugin.target_attributes); a pyjms broker keeps them in
its admin service (pyjms.providers.activemq.admin). A destination with no attributes has no
limits.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from pyjms.errors import InvalidArgumentRuntimeException

DEFAULT_BINDS = ("OPEN", "NOTFIXED", "GROUP")
DELIVERY = ("ALLDUR", "ALLAVAIL", "ALL")


@dataclass(frozen=True)
class QueueAttributes:
    max_depth: int = -1  # -1: no limit
    max_msg_length: int = -1  # bytes; -1: no limit
    put_enabled: bool = True
    clustered: bool = False
    default_bind: str = "OPEN"
    depth: int = field(default=0, compare=False)  # current depth, as read from the broker

    def __post_init__(self) -> None:
        if self.default_bind not in DEFAULT_BINDS:
            raise InvalidArgumentRuntimeException(
                f"default_bind {self.default_bind!r} is not one of {', '.join(DEFAULT_BINDS)}"
            )
        for name in ("max_depth", "max_msg_length"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < -1:
                raise InvalidArgumentRuntimeException(f"{name} {v!r} must be -1 (no limit) or a count >= 0")


@dataclass(frozen=True)
class TopicAttributes:
    persistent_delivery: str = "ALLDUR"  # PMSGDLV, IBM MQ's default
    nonpersistent_delivery: str = "ALLAVAIL"  # NPMSGDLV, IBM MQ's default

    def __post_init__(self) -> None:
        for name in ("persistent_delivery", "nonpersistent_delivery"):
            if getattr(self, name) not in DELIVERY:
                raise InvalidArgumentRuntimeException(
                    f"{name} {getattr(self, name)!r} is not one of {', '.join(DELIVERY)}"
                )


Attributes = QueueAttributes | TopicAttributes


def from_values(kind: str, values: dict[str, Any]) -> Attributes:
    """Attributes of kind "queue" or "topic" from their fields (unknown fields are left out)."""
    cls = QueueAttributes if kind == "queue" else TopicAttributes
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in values.items() if k in names})
