"""The Python/Java contract, read from the JVM: every public constant of org.pyjms.shim.Contract
has its twin of the same value in pyjms.bridge.contract (starts a JVM; the source check that
needs none is tests/unit/test_contract.py)."""

from __future__ import annotations

from pyjms.bridge import contract, jvm


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
