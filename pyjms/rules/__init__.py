"""IBM MQ's rules, each implemented once and used by every pyjms entry point.

* pyjms.rules.delivery: the send-time rules for delayed messages (D04-D08, D22, D23);
* pyjms.rules.attributes: destination attributes in IBM MQ's terms (MAXDEPTH, PUT, ...);
* pyjms.rules.policy: the rules as a send policy, installed in every factory's chain when
  this package is imported.
"""

from pyjms.rules.attributes import Attributes, QueueAttributes, TopicAttributes
from pyjms.rules.policy import DelayedMessageRules

__all__ = ["Attributes", "QueueAttributes", "TopicAttributes", "DelayedMessageRules"]
