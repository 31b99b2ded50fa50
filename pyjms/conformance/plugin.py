"""The conformance kit as a pytest plugin: ``pytest --jms-conformance-url URL`` makes every row
(rule and delay mode) a pytest item named by ID and mode (``D06[staging]``), so that ``-k``,
pytest-xdist and ``--junit-xml`` work on it. Without the option the plugin adds nothing.

pyjms registers it under the ``pytest11`` entry point (pyproject.toml), so an installed pyjms
offers it to every pytest run; ``-p pyjms.conformance.plugin`` loads it where the entry point
is not installed.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

import pytest

from pyjms.api.factory import ConnectionFactory
from pyjms.conformance.kit import FAIL, SKIP, Row, Rule, Session, offered_modes, select

URL_OPTION = "--jms-conformance-url"
_SESSIONS = pytest.StashKey[dict[str, Session]]()
_FACTORY = pytest.StashKey[ConnectionFactory]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("jms-conformance", "pyjms conformance kit (IBM MQ behaviours on a JMS provider)")
    group.addoption(
        URL_OPTION,
        metavar="URL",
        default=None,
        help="run the pyjms conformance kit against this provider URL, one test per rule and delay mode",
    )
    group.addoption(
        "--jms-conformance-mode",
        action="append",
        default=None,
        choices=["auto", "native", "scheduler", "staging", "none"],
        help="delay mode(s) to run the rules in (repeatable; default: every mode the provider offers)",
    )
    group.addoption(
        "--jms-conformance-queue",
        metavar="NAME",
        default=None,
        help="an existing queue to use, where the provider does not create queues on demand",
    )
    group.addoption("--jms-conformance-user", default=None, help="user name for the provider")
    group.addoption("--jms-conformance-password", default=None, help="password for the provider")


class ConformanceFailure(Exception):
    """A rule whose observed outcome is not IBM MQ's."""


class ConformanceKit(pytest.Collector):
    """The rows' parent, so that their node ids (and JUnit classnames) say where they come from."""

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        return []


class ConformanceItem(pytest.Item):
    """One rule in one delay mode."""

    def __init__(self, *, rule: Rule, mode: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rule = rule
        self.mode = mode
        self.add_marker(pytest.mark.jms_conformance)
        self.row: Row | None = None

    def runtest(self) -> None:
        sessions = self.config.stash[_SESSIONS]
        session = sessions.get(self.mode)
        if session is None:
            session = sessions[self.mode] = Session(
                self.config.stash[_FACTORY],
                self.mode,
                self.config.getoption("--jms-conformance-queue"),
                _tag(),
            )
        row = self.row = session.run(self.rule)
        for key in ("id", "behaviour", "mode", "provider", "expected", "observed", "result", "seconds"):
            self.user_properties.append((key, getattr(row, key)))
        if row.result == SKIP:
            pytest.skip(row.reason)
        if row.result == FAIL:
            raise ConformanceFailure(row.reason)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ConformanceFailure) and self.row is not None:
            r = self.row
            return f"{r.id} ({r.behaviour}) in delay mode {r.mode} on {r.provider}\n  expected: {r.expected}\n  observed: {r.observed}\n  {r.reason}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int | None, str]:
        return "pyjms conformance", None, f"{self.rule.id} in delay mode {self.mode}: {self.rule.behaviour}"


def _tag() -> str:
    """The kit names its own queues by a tag per run: here one per process (xdist worker)."""
    return f"pytest{os.getpid()}{uuid.uuid4().hex[:4]}"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "jms_conformance: a row of the pyjms conformance kit")
    config.stash[_SESSIONS] = {}


@pytest.hookimpl(tryfirst=True)  # before pytest's own -k and -m deselection, which then sees the rows
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    url = config.getoption(URL_OPTION)
    if not url:
        return
    factory = ConnectionFactory(
        url, config.getoption("--jms-conformance-user"), config.getoption("--jms-conformance-password")
    )
    config.stash[_FACTORY] = factory
    modes = config.getoption("--jms-conformance-mode") or offered_modes(factory)
    kit = ConformanceKit.from_parent(session, name="jms-conformance", nodeid="jms-conformance")
    for mode in modes:
        for r in select(None):
            items.append(ConformanceItem.from_parent(kit, name=f"{r.id}[{mode}]", rule=r, mode=mode))


def pytest_unconfigure(config: pytest.Config) -> None:
    for s in config.stash.get(_SESSIONS, {}).values():
        s.close()
