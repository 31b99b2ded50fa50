"""Protocols of the delay processor's shim classes, now pyjms.bridge.bulk's; named here until the
deliverer calls them through pyjms.api.bulk (issue 33)."""

from __future__ import annotations

from pyjms.bridge.bulk import JavaConcurrentHashMapClass, JavaDueMover, JavaDueMoverClass

__all__ = ["JavaConcurrentHashMapClass", "JavaDueMover", "JavaDueMoverClass"]
