"""Unit tests run without a JVM: neither in this process (JPype) nor as a child (java, javac,
Maven). A test that needs one belongs in tests/integration; the guard below fails it here, so
``pytest tests/unit`` stays JVM-free and quick (issue 33 item 5). Client logic that talks to
the wire is tested against tests/fakes instead: the fixtures ``clock``, ``broker``,
``factory`` and ``ctx`` give a fake broker, its clock, a ConnectionFactory for it and a context."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from typing import Any

import jpype
import pytest

from pyjms import ConnectionFactory, JMSContext
from tests.fakes.channel import FakeBroker, ManualClock
from tests.fakes.provider import fake_factory, threads_without_jvm

#: the programs that are (or start) a JVM
JVM_PROGRAMS = frozenset({"java", "javac", "jar", "mvn", "mvnw"})


class JVMStartedInUnitTest(AssertionError):
    """A unit test started a JVM."""


def _refuse_jvm(*args: Any, **kwargs: Any) -> None:
    raise JVMStartedInUnitTest("a unit test started the JVM: move it to tests/integration or use tests/fakes")


class _NoJVMPopen(subprocess.Popen):  # type: ignore[type-arg]
    """subprocess.Popen that refuses to run a JVM program (subprocess.run and friends use it)."""

    def __init__(self, args: Any, *rest: Any, **kwargs: Any) -> None:
        program = args if isinstance(args, (str, bytes, os.PathLike)) else args[0]
        name = os.path.basename(os.fsdecode(program)).split()[0] if program else ""
        if name in JVM_PROGRAMS:
            raise JVMStartedInUnitTest(f"a unit test ran {name}: move it to tests/integration")
        super().__init__(args, *rest, **kwargs)


@pytest.fixture(autouse=True)
def no_jvm(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fails the test that starts a JVM. In a run of the whole suite (``make test``) a worker
    process may have started one for other tests already: ``pytest tests/unit`` is the check."""
    running_before = jpype.isJVMStarted()
    monkeypatch.setattr(jpype, "startJVM", _refuse_jvm)
    monkeypatch.setattr(subprocess, "Popen", _NoJVMPopen)
    yield
    assert running_before or not jpype.isJVMStarted(), "this unit test started a JVM"


@pytest.fixture
def clock() -> ManualClock:
    """The fake broker's clock: it moves when a test moves it."""
    return ManualClock()


@pytest.fixture
def broker(clock: ManualClock) -> FakeBroker:
    return FakeBroker(now_ms=clock)


@pytest.fixture
def factory(broker: FakeBroker, monkeypatch: pytest.MonkeyPatch) -> Iterator[ConnectionFactory]:
    """A ConnectionFactory for the fake broker (the threads of its contexts attach to no JVM)."""
    with threads_without_jvm(monkeypatch):
        yield fake_factory(broker)


@pytest.fixture
def ctx(factory: ConnectionFactory) -> Iterator[JMSContext]:
    """An AUTO_ACKNOWLEDGE context on the fake broker."""
    with factory.create_context() as c:
        yield c
