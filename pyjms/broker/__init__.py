"""Brokers pyjms runs itself: embedded in-process, or standalone (``pyjms broker``)."""

from pyjms.broker.embedded import AccessRule, EmbeddedBroker, default_broker

__all__ = ["AccessRule", "EmbeddedBroker", "default_broker"]
