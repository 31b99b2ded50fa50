"""The rights an embedded broker answers its services with (may_write, is_admin: the
WriteCheck and AdminCheck of pyjms.api.access), from the broker's own access rules."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from pyjms import ConnectionFactory, Queue, Topic
from pyjms.api.access import anyone, anyone_admin
from pyjms.api.destination import Destination
from pyjms.broker import AccessRule, EmbeddedBroker
from pyjms.providers.activemq.embedded import SYSTEM_USER
from pyjms.providers.artemis import EmbeddedArtemisBroker
from tests.conftest import ROOT

USERS = {
    "alice": ("alice-pw", ["admins", "app"]),
    "bob": ("bob-pw", ["app"]),
    "carol": ("carol-pw", ["readers"]),
    "svc": ("svc-pw", ["services"]),
}
ACCESS = [
    AccessRule("APP.>", read=["app", "readers"], write=["app"], admin=["app"]),
    AccessRule("NEWS.*", read=["readers"], write=["admins"], admin=["admins"], kind="topic"),
]


@pytest.fixture(scope="module", params=["activemq", "artemis"])
def secured(request: pytest.FixtureRequest) -> Iterator[Any]:
    cls: Any = EmbeddedBroker if request.param == "activemq" else EmbeddedArtemisBroker
    # no delay processor of its own: a standalone one serves it (test_a_services_user_runs_a_delay_processor)
    broker = cls(
        name=f"pyjms-rights-{uuid.uuid4().hex[:6]}", port=0, users=USERS, access=ACCESS, delay_processor=False
    )
    yield broker
    broker.stop()


@pytest.mark.parametrize(
    ("user", "destination", "allowed"),
    [
        ("bob", Queue("APP.ORDERS"), True),
        ("bob", Queue("APP.ORDERS.EU"), True),
        ("carol", Queue("APP.ORDERS"), False),  # may read, not write
        ("bob", Queue("OTHER"), False),
        ("alice", Topic("NEWS.TODAY"), True),
        ("bob", Topic("NEWS.TODAY"), False),
        ("alice", Topic("NEWS.TODAY.LATE"), False),  # * is one word
        ("bob", Queue("SYSTEM.DDELAY.LOCAL.QUEUE"), True),  # everyone stages delayed messages
        ("bob", Queue("PYJMS.LEADER.delay"), False),  # leader election is the services' own
        ("svc", Queue("PYJMS.LEADER.delay"), True),
        ("svc", Queue("ANY.TARGET"), True),  # a standalone processor delivers anywhere
        (SYSTEM_USER, Queue("ANYWHERE"), True),
        ("mallory", Queue("APP.ORDERS"), False),  # nobody the broker knows
        (None, Queue("APP.ORDERS"), False),  # not stamped: nobody
    ],
)
def test_may_write_follows_the_access_rules(
    secured: Any, user: str | None, destination: Destination, allowed: bool
) -> None:
    assert secured.may_write(user, destination) is allowed


def test_temporary_destinations_are_open_to_every_user_the_broker_knows(secured: Any) -> None:
    with ConnectionFactory(secured.vm_url, "carol", "carol-pw").create_context() as ctx:
        temporary = ctx.create_temporary_queue()
        assert secured.may_write("bob", temporary) and secured.may_write("carol", temporary)
        assert not secured.may_write("mallory", temporary)


def test_administrators_are_the_admins_group_and_the_system_user(secured: Any) -> None:
    assert secured.is_admin("alice") and secured.is_admin(SYSTEM_USER)
    assert not any(secured.is_admin(u) for u in ("bob", "svc", "mallory", None))
    assert secured.authenticates


@pytest.mark.parametrize("name", ["embedded_broker", "artemis_broker"])
def test_a_broker_without_users_lets_anyone(request: pytest.FixtureRequest, name: str) -> None:
    broker = request.getfixturevalue(name)
    assert not broker.authenticates
    assert broker.may_write(None, Queue("ANY")) and broker.may_write("whoever", Topic("ANY"))
    assert broker.is_admin(None) and broker.is_admin("whoever")
    assert broker.write_check is anyone and broker.admin_check is anyone_admin  # nothing to check


def test_services_of_a_secured_broker_get_its_own_checks(secured: Any) -> None:
    assert secured.write_check == secured.may_write and secured.admin_check == secured.is_admin


def test_a_services_user_runs_a_delay_processor_beside_the_broker(secured: Any) -> None:
    """Group services has the rights a standalone `pyjms delay-processor` needs: the staging
    queue, the slot queues, and the targets."""
    processor = subprocess.Popen(
        [sys.executable, "-m", "pyjms", "delay-processor", "--url", secured.tcp_url, "--user", "svc",
         "--password", "svc-pw", "--report-every", "60"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
    )  # fmt: skip
    try:
        assert "running" in (processor.stdout.readline() if processor.stdout else ""), processor
        target = Queue(f"APP.DELAYED.{uuid.uuid4().hex[:6]}")
        with ConnectionFactory(
            secured.tcp_url, "bob", "bob-pw", delivery_delay="staging"
        ).create_context() as ctx:
            ctx.create_producer().set_delivery_delay(300).send(target, "later")
            got = ctx.create_consumer(target).receive(20_000)
            assert got is not None and got.get_body(str) == "later"
    finally:
        processor.terminate()
        out, _ = processor.communicate(timeout=30)
    assert "delivered 1" in out and "failed 0" in out, out
