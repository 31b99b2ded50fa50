"""The Python/Java contract: pyjms.bridge.contract and org.pyjms.shim.Contract agree, field for
field, and no other Java class spells a contract value itself."""

from __future__ import annotations

import re
from pathlib import Path

from pyjms.bridge import contract, jvm

JAVA = Path(__file__).resolve().parents[2] / "java" / "src" / "main" / "java"


def java_contract() -> dict[str, object]:
    import jpype  # the JVM start is the one lazy import the layers allow

    jvm.start()
    cls = jpype.JClass("org.pyjms.shim.Contract")
    modifier = jpype.JClass("java.lang.reflect.Modifier")
    out: dict[str, object] = {}
    for field in cls.class_.getDeclaredFields():
        mods = field.getModifiers()
        if modifier.isPublic(mods) and modifier.isStatic(mods) and modifier.isFinal(mods):
            value = field.get(None)
            out[str(field.getName())] = str(value) if isinstance(value, jpype.JString) else int(value)
    return out


def test_every_java_contract_value_has_its_python_twin() -> None:
    java = java_contract()
    assert {"DELIVERY_TIME", "SEND_DELAY_NATIVE", "KIND_TEXT", "T_STRING", "STAGED_TARGET"} <= java.keys()
    mismatched = {
        name: (value, getattr(contract, name, "<missing>"))
        for name, value in java.items()
        if getattr(contract, name, None) != value
    }
    assert mismatched == {}


def test_no_other_java_class_spells_a_pyjms_property_or_queue() -> None:
    literal = re.compile(r'"(JMS_PYJMS_[A-Za-z_]*|PYJMS\.[A-Z.]*|SYSTEM\.DDELAY[A-Z.]*)"')
    offenders = [
        f"{path.relative_to(JAVA)}: {m.group(0)}"
        for path in JAVA.rglob("*.java")
        if path.name != "Contract.java"
        for m in literal.finditer(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
