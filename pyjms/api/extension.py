"""Methods of the client that a feature provides.

A few methods of JMSContext and JMSConsumer belong to features above the client (IBM MQ's
browse with mark: ``JMSContext.create_marking_browser``, ``JMSConsumer.receive_by_token``
and ``receive_by_tokens``). The client declares them, so they keep their place in the API,
and hands each call to the implementation the feature provided with :func:`provide` when it
was imported (pyjms.browse provides these three). Called before any feature provided it, a
method raises NotSupportedRuntimeException naming the feature to import.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from pyjms.errors import NotSupportedRuntimeException

#: the methods features may provide, and the feature that does
METHODS = {
    "create_marking_browser": "pyjms.browse",
    "receive_by_token": "pyjms.browse",
    "receive_by_tokens": "pyjms.browse",
}

_provided: dict[str, Callable[..., Any]] = {}
_lock = threading.Lock()


def provide(method: str, implementation: Callable[..., Any]) -> None:
    """Makes ``implementation`` (called with the client object first) carry out ``method``."""
    if method not in METHODS:
        raise ValueError(f"{method!r} is not a method features provide (one of {', '.join(METHODS)})")
    with _lock:
        _provided[method] = implementation


def implementation(method: str) -> Callable[..., Any]:
    """The implementation of ``method``, or NotSupportedRuntimeException."""
    found = _provided.get(method)
    if found is None:
        raise NotSupportedRuntimeException(
            f"{method} is provided by {METHODS[method]}, which is not imported"
        )
    return found
