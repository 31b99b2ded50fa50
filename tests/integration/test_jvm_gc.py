"""Python's and Java's garbage collectors are not linked (pyjms.bridge.jvm.unlink_garbage_collectors):
JPype runs a full Python collection, holding the GIL, after each Java collection, and may answer
a Python collection with System.gc(), a full Java one. pyjms hands no Java object to Python code,
so these pauses bought nothing. With JPype's linking in place both tests fail (checked: 3 full
Python collections on JPype's thread for 3 Java collections; 5 full Java collections for one
Python collection after 100 MB of growth)."""

from __future__ import annotations

import gc
import threading
import time
from typing import Any

import jpype

from pyjms.bridge import jvm


def _full_java_collections() -> int:
    beans = jpype.JClass("java.lang.management.ManagementFactory").getGarbageCollectorMXBeans()
    # full collections (System.gc() among them) count as the old generation's collector's: G1's
    # "G1 Old Generation", Serial's "MarkSweepCompact", Parallel's "PS MarkSweep"
    full = [b for b in beans if "Old" in str(b.getName()) or "MarkSweep" in str(b.getName())]
    assert full, f"no full collector among {[str(b.getName()) for b in beans]}"  # else nothing counted
    return sum(int(b.getCollectionCount()) for b in full)


def test_a_java_collection_runs_no_python_collection() -> None:
    jvm.start()
    system = jpype.JClass("java.lang.System")
    # JPype's reference-queue thread is a Java thread (Python sees it as a dummy thread), and
    # what it ran was a full collection (generation 2)
    started_elsewhere: list[str] = []

    def note(phase: str, info: dict[str, Any]) -> None:
        thread = threading.current_thread()
        if phase == "start" and info["generation"] == 2 and isinstance(thread, threading._DummyThread):
            started_elsewhere.append(thread.name)

    gc.callbacks.append(note)
    try:
        for _ in range(3):
            system.gc()
            time.sleep(0.6)  # JPype's queue thread polls every 250 ms
    finally:
        gc.callbacks.remove(note)
    assert started_elsewhere == []


def test_a_python_collection_runs_no_full_java_collection() -> None:
    jvm.start()
    before = _full_java_collections()
    grown = [bytearray(1 << 20) for _ in range(100)]  # JPype's trigger: 20 MB above its mark
    gc.collect()
    gc.collect()
    del grown
    assert _full_java_collections() == before
