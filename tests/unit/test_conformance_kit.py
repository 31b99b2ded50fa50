"""The conformance kit without a broker: its coverage of docs/catalogue.md, its reports (JSON
lines, JUnit XML, the rule list), the matrix page and the plugin's entry point."""

from __future__ import annotations

import json
import re
import tomllib
import xml.etree.ElementTree as ET

from pyjms.conformance import RULES, UNOBSERVABLE, Row, matrix
from pyjms.conformance.report import JSON_KEYS, json_line, junit_xml, rule_list, table
from tests.conftest import ROOT


def catalogue_ids() -> list[str]:
    text = (ROOT / "docs" / "catalogue.md").read_text(encoding="utf-8")
    return re.findall(r"(?m)^\| ([EDBQ]\d\d) \|", text)


def test_every_catalogue_id_has_a_rule_or_a_reason_it_has_none() -> None:
    ruled = [r.id for r in RULES]
    skipped = [u.id for u in UNOBSERVABLE]
    assert len(ruled) == len(set(ruled)) and not set(ruled) & set(skipped)
    assert sorted(ruled + skipped) == sorted(catalogue_ids())
    assert all(u.reason for u in UNOBSERVABLE)
    assert {"E16", "D14"} <= set(skipped)


def rows() -> list[Row]:
    return [
        Row(
            "D06",
            "delay longer than TTL",
            "staging",
            "ActiveMQ",
            "MQRC_EXPIRY_ERROR",
            "MQRC_EXPIRY_ERROR",
            "pass",
            "",
            0.1,
        ),
        Row(
            "D16",
            "matched at send",
            "scheduler",
            "ActiveMQ",
            "earlier: 1, later: 0",
            "earlier: 1, later: 1",
            "fail",
            "expected x, observed y",
            1.0,
        ),
        Row(
            "E07",
            "report sent",
            "scheduler",
            "ActiveMQ",
            "report sent",
            "skipped",
            "skip",
            "staging mode only",
            0.0,
        ),
    ]


def test_a_json_line_has_exactly_the_issues_keys() -> None:
    assert JSON_KEYS == (
        "id",
        "behaviour",
        "mode",
        "provider",
        "expected",
        "observed",
        "result",
        "reason",
        "seconds",
    )
    assert [list(json.loads(json_line(r))) for r in rows()] == [list(JSON_KEYS)] * 3
    assert json.loads(json_line(rows()[1]))["result"] == "fail"


def test_junit_has_a_testcase_per_row_named_by_id_and_mode() -> None:
    root = ET.fromstring(junit_xml(rows()))
    suite = root.find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == (
        "3",
        "1",
        "1",
    )
    cases = root.findall(".//testcase")
    assert [c.get("name") for c in cases] == ["D06[staging]", "D16[scheduler]", "E07[scheduler]"]
    assert [c.find("failure") is not None for c in cases] == [False, True, False]
    assert [c.find("skipped") is not None for c in cases] == [False, False, True]


def test_the_table_and_the_list() -> None:
    text = table(rows())
    assert "1 passed, 0 failed, 0 skipped" in text and "0 passed, 1 failed, 1 skipped" in text
    listed = rule_list()
    assert all(f"{r.id}  {r.behaviour}" in listed for r in RULES)
    assert all(f"{u.id}  {u.reason}" in listed for u in UNOBSERVABLE)


def test_the_matrix_reads_back_what_it_writes() -> None:
    cols = matrix.columns("ActiveMQ", [r.to_json() for r in rows()])
    assert cols == {"ActiveMQ staging": {"D06": "pass"}, "ActiveMQ scheduler": {"D16": "FAIL", "E07": "skip"}}
    page = f"before\n{matrix.BEGIN}\nold\n{matrix.END}\nafter\n"
    written = matrix.replace(page, cols)
    assert written.startswith("before\n") and written.endswith(f"{matrix.END}\nafter\n")
    assert matrix.parse(written) == cols


def test_the_providers_page_has_a_matrix_of_every_rule() -> None:
    cols = matrix.parse((ROOT / "docs" / "providers.md").read_text(encoding="utf-8"))
    assert len(cols) >= 8  # five configurations, each in every mode it offers
    assert all(set(c) == {r.id for r in RULES} for c in cols.values())


def test_the_plugin_is_registered_under_pytest11() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["pytest11"] == {"pyjms.conformance.plugin": "pyjms.conformance.plugin"}
