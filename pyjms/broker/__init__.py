"""Brokers pyjms runs itself: embedded in-process, or standalone (``pyjms broker``).

The public name of pyjms.providers.activemq's broker classes, kept for programs that import
them from here.
"""

from pyjms.providers.activemq.embedded import AccessRule, EmbeddedBroker, default_broker

__all__ = ["AccessRule", "EmbeddedBroker", "default_broker"]
