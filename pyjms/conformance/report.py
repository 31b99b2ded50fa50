"""The kit's rows as people and CI systems read them: a table, JSON lines, JUnit XML, the
rule list."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from xml.etree import ElementTree as ET

from pyjms.conformance.kit import FAIL, PASS, RULES, SKIP, UNOBSERVABLE, Row, Rule

#: the keys of one --json line, in order
JSON_KEYS = ("id", "behaviour", "mode", "provider", "expected", "observed", "result", "reason", "seconds")


def json_line(row: Row) -> str:
    data = row.to_json()
    return json.dumps({k: data[k] for k in JSON_KEYS}, ensure_ascii=False)


def summary(rows: Sequence[Row]) -> str:
    counts = {r: sum(row.result == r for row in rows) for r in (PASS, FAIL, SKIP)}
    return f"{counts[PASS]} passed, {counts[FAIL]} failed, {counts[SKIP]} skipped"


def table(rows: Sequence[Row]) -> str:
    """One table per mode, with a summary line each."""
    out: list[str] = []
    for mode in dict.fromkeys(r.mode for r in rows):
        these = [r for r in rows if r.mode == mode]
        width = max(len(r.behaviour) for r in these)
        ew = min(max(len(r.expected) for r in these), 48)
        out.append(f"pyjms conformance: delay mode {mode} on {these[0].provider}")
        out.append(f"{'rule':5} {'behaviour':{width}} {'expected':{ew}} {'observed':{ew}} result")
        for r in these:
            observed = "-" if r.result == SKIP else r.observed
            result = {PASS: "pass", FAIL: "FAIL", SKIP: f"skip ({r.reason})"}[r.result]
            out.append(f"{r.id:5} {r.behaviour:{width}} {r.expected:{ew}} {observed:{ew}} {result}")
        out.append(summary(these))
    return "\n".join(out)


def rule_list(rules: Iterable[Rule] = RULES) -> str:
    """What --list prints: each rule with its expected outcome, then the IDs with no rule."""
    lines = [f"{r.id}  {r.behaviour}  (expected: {r.expected})" for r in rules]
    lines.append("")
    lines.append("not observable through a provider:")
    lines += [f"{u.id}  {u.reason}" for u in UNOBSERVABLE]
    return "\n".join(lines)


def junit_xml(rows: Sequence[Row], suite: str = "pyjms conformance") -> bytes:
    """One testcase per row, named by ID and mode (``D06[staging]``), its classname
    ``jms-conformance`` as the pytest plugin's; a fail is a <failure>, a skip a <skipped>, each
    with its reason."""
    root = ET.Element("testsuites")
    ts = ET.SubElement(
        root,
        "testsuite",
        name=suite,
        tests=str(len(rows)),
        failures=str(sum(r.result == FAIL for r in rows)),
        skipped=str(sum(r.result == SKIP for r in rows)),
        errors="0",
        time=f"{sum(r.seconds for r in rows):.3f}",
    )
    for r in rows:
        tc = ET.SubElement(
            ts,
            "testcase",
            classname="jms-conformance",  # as the pytest plugin's rows; the provider is a property
            name=r.name,
            time=f"{r.seconds:.3f}",
        )
        ET.SubElement(tc, "properties")
        props = tc.find("properties")
        assert props is not None
        for key in ("behaviour", "mode", "provider", "expected", "observed"):
            ET.SubElement(props, "property", name=key, value=str(getattr(r, key)))
        if r.result == FAIL:
            ET.SubElement(
                tc, "failure", message=r.reason
            ).text = f"expected: {r.expected}\nobserved: {r.observed}"
        elif r.result == SKIP:
            ET.SubElement(tc, "skipped", message=r.reason)
    ET.indent(root)
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data
