"""Brokers pyjms runs itself: embedded in-process, or standalone (``pyjms broker``)."""

from pyjms.broker.embedded import EmbeddedBroker, default_broker

__all__ = ["EmbeddedBroker", "default_broker"]
