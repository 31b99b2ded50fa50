"""Putting a message somewhere else unchanged, as the DLQ handler and dead-lettering do.

The forwarding itself is the client's (pyjms.api.forward: one implementation for every
forwarder); this module keeps the names the DLQ code has always used, and the connection a
handler needs.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

from pyjms.api.factory import ConnectionFactory
from pyjms.api.forward import forward, remaining_time_to_live
from pyjms.api.message import Message
from pyjms.api.message.properties import check_own_property_name, tag_for

if TYPE_CHECKING:
    from pyjms.api.context import JMSContext
    from pyjms.api.destination import Destination
    from pyjms.api.producer import JMSProducer


def _typed(values: Mapping[str, bool | int | float | str] | None) -> dict[str, tuple[int, object]]:
    # pyjms's own route: the dead-letter and transmission-queue headers are JMS_PYJMS_* names
    return {
        check_own_property_name(name): (tag_for(value, what=f"property {name!r}"), value)
        for name, value in (values or {}).items()
    }


def put_unchanged(
    ctx: JMSContext,
    destination: Destination,
    message: Message,
    *,
    strip: Collection[str] = (),
    add: Mapping[str, bool | int | float | str] | None = None,
    producer: JMSProducer | None = None,
    sent_headers: bool = True,
) -> Message | None:
    """Sends a copy of ``message`` to ``destination`` in ctx (pyjms.api.forward.forward).

    ``strip`` names properties to leave out and ``add`` adds properties (JMS type from the
    Python type); nothing else changes. Returns the copy as sent, with its new message id
    (None if ``sent_headers`` is False: see forward).
    """
    return forward(
        ctx,
        destination,
        message,
        drop_properties=strip,
        add_properties=_typed(add),
        producer=producer,
        sent_headers=sent_headers,
    )


def copy_message(message: Message) -> Message:
    """A sendable copy with the same body, typed properties and application headers."""
    return message.copy()


def handler_factory(connection: ConnectionFactory | str | None) -> ConnectionFactory:
    """The factory a handler (or the delay processor) connects with: as given, with no
    provider redelivery limit, as it keeps its own retry counts (ProviderPlugin
    .without_redelivery_limit)."""
    base = connection if isinstance(connection, ConnectionFactory) else ConnectionFactory(connection)
    return base.provider.without_redelivery_limit(base)


__all__ = ["put_unchanged", "copy_message", "remaining_time_to_live", "handler_factory"]
