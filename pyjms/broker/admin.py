"""Destination attributes on a pyjms broker: the public name of pyjms.providers.activemq.admin."""

from pyjms.providers.activemq.admin import ADMIN_QUEUE, Admin, AdminService, AttributeCache, BrokerWriteCheck
from pyjms.rules.attributes import Attributes, QueueAttributes, TopicAttributes

__all__ = [
    "Admin",
    "AdminService",
    "AttributeCache",
    "BrokerWriteCheck",
    "Attributes",
    "QueueAttributes",
    "TopicAttributes",
    "ADMIN_QUEUE",
]
