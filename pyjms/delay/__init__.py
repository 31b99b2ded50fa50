"""Delivery delay on any provider (IBM MQ's semantics).

* pyjms.delay.mechanism: which mechanism delays messages here (native, scheduler, staging);
* pyjms.delay.policy: the mechanism as a send policy, installed in every factory's chain when
  this package is imported; the mechanism is resolved once per factory, at first need;
* pyjms.delay.staging and pyjms.delay.processor: IBM MQ's staging queue and delay processor.
"""

from pyjms.delay.mechanism import DelayMechanism
from pyjms.delay.policy import DelayPolicy, delay_mechanism

__all__ = ["DelayMechanism", "DelayPolicy", "delay_mechanism"]
