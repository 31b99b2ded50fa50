"""Delivery delay on any provider: choosing the mechanism (see mechanism.py)."""

from pyjms.delay.mechanism import DelayMechanism

__all__ = ["DelayMechanism"]
