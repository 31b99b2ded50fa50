"""The Python/Java contract: no Java class but org.pyjms.shim.Contract spells a contract value
itself (that Contract and pyjms.bridge.contract agree field for field is read from the JVM, in
tests/integration/test_contract_java.py)."""

from __future__ import annotations

import re
from pathlib import Path

JAVA = Path(__file__).resolve().parents[2] / "java" / "src" / "main" / "java"


def test_no_other_java_class_spells_a_pyjms_property_or_queue() -> None:
    literal = re.compile(r'"(JMS_PYJMS_[A-Za-z_]*|PYJMS\.[A-Z.]*|SYSTEM\.DDELAY[A-Z.]*)"')
    offenders = [
        f"{path.relative_to(JAVA)}: {m.group(0)}"
        for path in JAVA.rglob("*.java")
        if path.name != "Contract.java"
        for m in literal.finditer(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
