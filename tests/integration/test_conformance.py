"""The conformance kit (pyjms.conformance, ``pyjms conformance``) against ActiveMQ Classic
(staging and scheduler) and Artemis native (and staging): one full run per configuration
through the command line, the API and the pytest plugin on a few rules; and against IBM MQ and
Artemis in containers, where a Docker engine answers."""

from __future__ import annotations

import fnmatch
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence

import pytest

import pyjms
from pyjms import conformance
from pyjms.bridge import classpath
from tests.conformance_kit import FullRun, full_run, left_on_the_broker, plugin_run, pyjms_command
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def full_runs(tcp_broker, artemis_tcp_broker, tmp_path_factory) -> Iterator[dict[str, FullRun]]:
    """The full runs of ActiveMQ and Artemis, started together, each on its own broker."""
    runs = {
        "ActiveMQ": FullRun(tcp_broker.tcp_url, tmp_path_factory.mktemp("activemq")),
        "Artemis": FullRun(artemis_tcp_broker.tcp_url, tmp_path_factory.mktemp("artemis")),
    }
    yield runs
    for run in runs.values():
        run.stop()


def test_conformance_command_on_activemq_runs_every_rule_in_staging_and_scheduler_mode(tcp_broker, full_runs):
    rows = full_run("ActiveMQ", full_runs["ActiveMQ"], {"scheduler", "staging"})
    assert all(r["provider"].startswith("ActiveMQ Classic") for r in rows)
    assert left_on_the_broker(pyjms.ConnectionFactory(tcp_broker.tcp_url)) == []


def test_conformance_command_on_artemis_runs_every_rule_in_native_and_staging_mode(
    artemis_tcp_broker, full_runs
):
    rows = full_run("Artemis", full_runs["Artemis"], {"native", "staging"})
    assert all(r["provider"].startswith("Apache Artemis") for r in rows)
    assert left_on_the_broker(pyjms.ConnectionFactory(artemis_tcp_broker.tcp_url)) == []


@pytest.mark.parametrize(
    ("provider", "modes"),
    [("activemq", ["staging", "scheduler"]), ("artemis", ["native"])],
)
def test_the_api_runs_the_rules_asked_for_in_the_modes_asked_for(request, provider, modes):
    broker = request.getfixturevalue("embedded_broker" if provider == "activemq" else "artemis_broker")
    rows = conformance.run(
        pyjms.ConnectionFactory(broker.vm_url), modes=modes, rules=["D06", "e02", "B07", "Q04"]
    )
    assert [(r.id, r.mode) for r in rows] == [(i, m) for m in modes for i in ("E02", "D06", "B07", "Q04")]
    assert all(r.result == conformance.PASS for r in rows), [r for r in rows if r.result != conformance.PASS]
    assert all(r.seconds >= 0 and r.provider for r in rows)


def test_the_api_refuses_an_id_the_catalogue_does_not_have():
    with pytest.raises(ValueError, match=r"no such behaviour ID: Z98, Z99 \(pyjms conformance --list\)"):
        conformance.run(pyjms.ConnectionFactory("tcp://127.0.0.1:1"), rules=["E16", "Z99", "Z98"])


def test_a_rule_forced_into_a_mode_the_provider_lacks_is_skipped_saying_why(embedded_broker):
    # ActiveMQ Classic's client has no setDeliveryDelay: a rule that needs a delayed send cannot
    # be tried in native mode, and says so instead of passing on a rewritten expectation
    rows = conformance.run(
        pyjms.ConnectionFactory(embedded_broker.vm_url), modes=["native"], rules=["D08", "D04"]
    )
    assert [(r.id, r.result, r.reason) for r in rows] == [
        ("D04", "pass", ""),
        ("D08", "skip", "no native delay here (D04)"),
    ]


def test_the_plugin_makes_each_row_a_pytest_item_with_k_and_xdist(tcp_broker, tmp_path):
    out, junit = plugin_run(
        tcp_broker.tcp_url,
        tmp_path,
        "--jms-conformance-mode",
        "staging",
        "--jms-conformance-mode",
        "scheduler",
        "-k",
        "D06 or D16 or E07",
        "-n",
        "2",
    )
    assert out.returncode == 0, out.stdout + out.stderr
    cases = {c.get("name"): c for c in junit.iter("testcase")}
    assert set(cases) == {f"{i}[{m}]" for i in ("D06", "D16", "E07") for m in ("staging", "scheduler")}
    assert [n for n, c in cases.items() if c.find("failure") is not None] == []
    assert [n for n, c in cases.items() if c.find("skipped") is not None] == ["E07[scheduler]"]
    assert all(c.get("classname") == "jms-conformance" for c in cases.values())
    assert "5 passed, 1 skipped" in out.stdout


def test_the_plugin_adds_nothing_without_its_option(tmp_path):
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "pyjms.conformance.plugin",
            "-p",
            "no:cacheprovider",
            "-q",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert out.returncode == 0 and "1 passed" in out.stdout, out.stdout + out.stderr


def test_the_command_lists_the_rules_and_runs_only_those_asked_for(tcp_broker, tmp_path):
    listed = pyjms_command("conformance", "--list")
    assert listed.returncode == 0
    lines = listed.stdout.splitlines()
    assert [line.split()[0] for line in lines[: len(conformance.RULES)]] == [r.id for r in conformance.RULES]
    assert "E16  no meaning outside IBM MQ's transmission queues" in listed.stdout
    one = pyjms_command(
        "conformance", "--url", tcp_broker.tcp_url, "--mode", "staging", "--rule", "E08", "--rule", "d06"
    )
    assert one.returncode == 0, one.stdout + one.stderr
    assert [line.split()[0] for line in one.stdout.splitlines()[2:4]] == ["E08", "D06"]
    assert one.stdout.splitlines()[-1] == "2 passed, 0 failed, 0 skipped"
    # an ID no client can observe is a skipped row saying why; one the catalogue lacks is an error
    d14 = pyjms_command(
        "conformance", "--url", tcp_broker.tcp_url, "--mode", "staging", "--rule", "D14", "--json"
    )
    assert d14.returncode == 0, d14.stderr
    row = json.loads(d14.stdout)
    assert (row["id"], row["result"]) == ("D14", "skip") and "a documented limit" in row["reason"]
    bad = pyjms_command("conformance", "--url", tcp_broker.tcp_url, "--rule", "D99")
    assert bad.returncode == 2 and "no such behaviour ID: D99" in bad.stderr


def test_conformance_command_reaches_a_provider_through_its_factory_class(tcp_broker):
    # how IBM MQ or Artemis is reached: the provider's own factory class, bean properties, jars
    out = pyjms_command(
        "conformance",
        "--mode",
        "staging",
        "--rule",
        "D22",
        "--rule",
        "D01",
        "--factory-class",
        "org.apache.activemq.ActiveMQConnectionFactory",
        "--property",
        f"brokerURL={tcp_broker.tcp_url}",
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "delay mode staging" in out.stdout and "2 passed, 0 failed, 0 skipped" in out.stdout
    bad = pyjms_command(
        "conformance",
        "--factory-class",
        "org.apache.activemq.ActiveMQConnectionFactory",
        "--property",
        "brokerURL",
    )
    assert bad.returncode == 2 and "--property 'brokerURL' is not NAME=VALUE" in bad.stderr


def test_an_existing_queue_is_used_where_queues_are_not_created_on_demand(tcp_broker):
    # --queue (IBM MQ's DEV.QUEUE.1): the rules use that queue, and leave nothing on it
    out = pyjms_command(
        "conformance",
        "--url",
        tcp_broker.tcp_url,
        "--mode",
        "staging",
        "--queue",
        "CONFORMANCE.GIVEN",
        "--rule",
        "E04",
        "--rule",
        "D08",
        "--rule",
        "Q04",
        "--json",
    )
    results = {line.split('"id": "')[1][:3]: line for line in out.stdout.splitlines()}
    assert '"result": "pass"' in results["E04"] and '"result": "pass"' in results["D08"], out.stdout
    assert '"reason": "needs queues of its own' in results["Q04"]
    with pyjms.ConnectionFactory(tcp_broker.tcp_url).create_context() as ctx:
        assert list(ctx.create_browser(ctx.create_queue("CONFORMANCE.GIVEN"))) == []


# Real IBM MQ and Artemis, where a Docker engine answers (none does on the machines pyjms is
# built on: these have never run there). Their JMS clients come out of the images themselves,
# so no Maven repository is needed: Artemis ships its Jakarta client in lib/client, IBM MQ in
# /opt/mqm/java/lib.
ARTEMIS_IMAGE = "apache/activemq-artemis:2.42.0"
IBM_MQ_IMAGE = "icr.io/ibm-messaging/mq:9.4.3.0-r1"


def _docker_engine() -> None:
    import shutil

    docker = shutil.which("docker")
    if docker is None or subprocess.run([docker, "info"], capture_output=True).returncode != 0:
        pytest.skip("no Docker engine here: testcontainers cannot run the IBM MQ and Artemis images")


def _copy_jars_out(container, dest, required: Sequence[str], optional: Sequence[str] = ()) -> list[str]:
    """The image's jars whose names match, copied to dest (the client runs on this side)."""
    import io
    import tarfile

    found = container.exec(["sh", "-c", "find / -xdev -name '*.jar' 2>/dev/null"]).output.decode().split()
    jars = []
    for pattern in [*required, *optional]:
        match = next((p for p in found if fnmatch.fnmatch(p.rsplit("/", 1)[-1], pattern)), None)
        if match is None:
            if pattern in required:
                pytest.fail(f"no jar named {pattern} in the image (searched {len(found)} jars)")
            continue
        stream, _ = container.get_wrapped_container().get_archive(match)
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            tar.extractall(dest, filter="data")
        jars.append(str(dest / match.rsplit("/", 1)[-1]))
    return jars


def _conformance_when_ready(args: list[str], deadline_s: float = 180) -> subprocess.CompletedProcess[str]:
    """Runs `pyjms conformance` until the broker in the container accepts connections."""
    end = time.monotonic() + deadline_s
    while True:
        out = pyjms_command("conformance", *args)
        if (
            out.returncode == 0
            or time.monotonic() > end
            or "Connection refused" not in out.stderr + out.stdout
        ):
            return out
        time.sleep(3)


def test_conformance_against_real_artemis(tmp_path):
    _docker_engine()
    from testcontainers.core.container import DockerContainer

    with (
        DockerContainer(ARTEMIS_IMAGE)
        .with_exposed_ports(61616)
        .with_env("ARTEMIS_USER", "pyjms")
        .with_env("ARTEMIS_PASSWORD", "pyjms") as artemis
    ):
        jars = _copy_jars_out(artemis, tmp_path, ["artemis-jakarta-client-all-*.jar"])
        url = f"tcp://{artemis.get_container_host_ip()}:{artemis.get_exposed_port(61616)}"
        out = _conformance_when_ready(
            [
                "--factory-class",
                "org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory",
                "--property",
                f"brokerURL={url}",
                "--user",
                "pyjms",
                "--password",
                "pyjms",
                "--classpath",
                jars[0],
                "--mode",
                "native",
            ]
        )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "delay mode native" in out.stdout  # Artemis's client has JMS 2.0 delivery delay


def test_conformance_against_real_ibm_mq(tmp_path):
    _docker_engine()
    from testcontainers.core.container import DockerContainer

    mq = (
        DockerContainer(IBM_MQ_IMAGE)
        .with_exposed_ports(1414)
        .with_env("LICENSE", "accept")
        .with_env("MQ_QMGR_NAME", "QM1")
        .with_env("MQ_APP_PASSWORD", "pyjms-app")
    )
    # IBM's client from Maven Central (java/pom.xml, profile ibmmq), resolved on demand, never shipped
    jars = classpath.provider_jars("ibmmq")
    with mq:
        props = {
            "hostName": mq.get_container_host_ip(),
            "port": mq.get_exposed_port(1414),
            "queueManager": "QM1",
            "channel": "DEV.APP.SVRCONN",
            "transportType": 1,
        }  # 1: client
        out = _conformance_when_ready(
            [
                "--factory-class",
                "com.ibm.mq.jakarta.jms.MQConnectionFactory",
                *[a for k, v in props.items() for a in ("--property", f"{k}={v}")],
                "--user",
                "app",
                "--password",
                "pyjms-app",
                "--queue",
                "DEV.QUEUE.1",
                *[a for j in jars for a in ("--classpath", j)],
                "--mode",
                "native",
            ]
        )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "delay mode native" in out.stdout
