"""`pyjms broker --users FILE --tls-keystore FILE` (docs/security.md), on ActiveMQ and Artemis
processes: sign-in, access rules, administrators, TLS only, identities the broker stamps, and
a private data directory. One secured broker process per provider for the module."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pyjms
from pyjms import ConnectionFactory, Queue
from tests.conftest import ROOT, BrokerProcess
from tests.faults.processes import PyjmsProcess

KEY_PASSWORD = "key-store-secret"
TRUST_PASSWORD = "trust-store-secret"

USERS = """
[users.alice]
password = "alice-pw"
groups = ["admins", "app"]

[users.bob]
password = "bob-pw"
groups = ["app"]

[users.svc]
password = "svc-pw"
groups = ["services"]

[[access]]
queue = "APP.>"
read = ["app"]
write = ["app"]
admin = ["app"]

[[access]]
queue = "PRIVATE.>"
read = ["admins"]
write = ["admins"]
admin = ["admins"]
"""


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A broker keystore for 127.0.0.1 and a trust store holding its certificate, by keytool."""
    where = tmp_path_factory.mktemp("tls")
    keystore, cert, truststore = where / "broker.p12", where / "broker.crt", where / "trust.p12"

    def keytool(*args: str) -> None:
        subprocess.run(["keytool", *args], check=True, capture_output=True)

    keytool(
        "-genkeypair", "-alias", "broker", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2",
        "-dname", "CN=localhost", "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-storetype", "PKCS12",
        "-keystore", str(keystore), "-storepass", KEY_PASSWORD, "-keypass", KEY_PASSWORD,
    )  # fmt: skip
    keytool("-exportcert", "-alias", "broker", "-keystore", str(keystore), "-storepass", KEY_PASSWORD,
            "-file", str(cert))  # fmt: skip
    keytool("-importcert", "-noprompt", "-alias", "broker", "-file", str(cert), "-storetype", "PKCS12",
            "-keystore", str(truststore), "-storepass", TRUST_PASSWORD)  # fmt: skip
    return {"keystore": keystore, "truststore": truststore}


@pytest.fixture(scope="module")
def users_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("users") / "users.toml"
    path.write_text(USERS)
    path.chmod(0o644)  # readable by others: the broker notes it
    return path


class Secured:
    """A secured broker process and how a client reaches it over TLS."""

    def __init__(self, process: BrokerProcess, provider: str, truststore: Path, data: Path) -> None:
        self.process, self.provider, self.truststore, self.data = process, provider, truststore, data

    def factory(self, user: str | None, password: str | None, *, amqp: bool = False) -> ConnectionFactory:
        """Trusting the broker's certificate as each client takes a trust store natively:
        ActiveMQ's factory properties, Artemis's URL options, Qpid JMS's transport options."""
        store = str(self.truststore)
        if amqp:
            url = f"{self.process.amqp_url}?transport.trustStoreLocation={store}&transport.trustStorePassword={TRUST_PASSWORD}"
            return ConnectionFactory(url, user, password)
        if self.provider == "artemis":
            url = f"{self.process.tcp_url}?trustStorePath={store}&trustStorePassword={TRUST_PASSWORD}"
            return ConnectionFactory(url, user, password)
        trust = {"trustStore": store, "trustStorePassword": TRUST_PASSWORD}
        return ConnectionFactory(self.process.tcp_url, user, password, properties=trust)

    def cli_env(self) -> dict[str, str]:
        """The environment of a pyjms command that trusts this broker's certificate through the
        JVM's javax.net.ssl.* properties (PYJMS_JVM_OPTIONS), which every provider's client honours."""
        env = dict(os.environ)
        env["PYJMS_JVM_OPTIONS"] = (
            f"-Djavax.net.ssl.trustStore={self.truststore} -Djavax.net.ssl.trustStorePassword={TRUST_PASSWORD}"
        )
        return env

    def cli(self, user: str, password: str, *args: str) -> subprocess.CompletedProcess[str]:
        """A pyjms command against this broker (cli_env)."""
        env = self.cli_env()
        return subprocess.run(
            [sys.executable, "-m", "pyjms", *args, "--url", self.process.tcp_url, "--user", user, "--password", password],
            capture_output=True, text=True, cwd=ROOT, env=env, timeout=120,
        )  # fmt: skip


@pytest.fixture(scope="module", params=["activemq", "artemis"])
def secured(
    request: pytest.FixtureRequest,
    keys: dict[str, Path],
    users_file: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Secured]:
    provider = request.param
    data = tmp_path_factory.mktemp(f"data-{provider}")
    if provider == "artemis":
        data.chmod(0o755)  # an existing directory others may enter: tightened
    else:
        data = data / "new" / "broker"  # a missing one: made 0700
    # the keystore's password from the environment, where ps does not show it
    os.environ["PYJMS_TLS_PASSWORD"] = KEY_PASSWORD
    try:
        process = BrokerProcess(
            "--users",
            str(users_file),
            "--tls-keystore",
            str(keys["keystore"]),
            "--data",
            str(data),
            provider=provider,
        )
    finally:
        del os.environ["PYJMS_TLS_PASSWORD"]
    yield Secured(process, provider, keys["truststore"], data)
    process.stop()


def test_ready_line_of_a_secured_broker_names_users_and_tls_and_only_tls_urls(secured: Secured) -> None:
    line = secured.process.ready_line
    assert "users from" in line and "TLS only" in line and "no authentication" not in line.lower()
    assert KEY_PASSWORD not in line and "alice-pw" not in line
    # the test's users file is mode 644: the broker says whom that exposes, and how to fix it
    assert "others may read its passwords" in Path(secured.process.log.name).read_text()
    uris = secured.process.uris
    assert all(u.startswith(("ssl://", "artemis+ssl://", "amqps://", "stomp+ssl://")) for u in uris), uris
    assert secured.process.amqp_url is not None and secured.process.amqp_url.startswith("amqps://")


def test_data_directory_is_private(secured: Secured) -> None:
    assert stat.S_IMODE(secured.data.stat().st_mode) == 0o700
    if secured.provider == "artemis":  # it was 755: tightened, and said so
        assert "now 700" in Path(secured.process.log.name).read_text()
    # what the broker writes there is this user's alone too (its umask)
    files = [p for p in secured.data.rglob("*") if p.is_file()]
    assert files and all(not p.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO) for p in files)


def test_unknown_user_and_wrong_password_are_refused(secured: Secured) -> None:
    for user, password in (("mallory", "x"), ("alice", "wrong"), (None, None)):
        with pytest.raises(pyjms.JMSSecurityRuntimeException):
            secured.factory(user, password).create_context().close()
    with pytest.raises(pyjms.JMSSecurityRuntimeException):
        secured.factory("alice", "wrong", amqp=True).create_context().close()


def test_access_rules_are_enforced(secured: Secured) -> None:
    q = Queue(f"APP.{uuid.uuid4().hex[:8]}")
    private = Queue(f"PRIVATE.{uuid.uuid4().hex[:8]}")
    with secured.factory("bob", "bob-pw").create_context() as bob:
        bob.create_producer().send(q, "from bob")
        with pytest.raises(pyjms.JMSSecurityRuntimeException):
            bob.create_producer().send(private, "bob may not")
        with pytest.raises(pyjms.JMSSecurityRuntimeException):
            bob.create_consumer(Queue("SYSTEM.DDELAY.LOCAL.QUEUE")).receive(100)
    with secured.factory("alice", "alice-pw").create_context() as alice:
        alice.create_producer().send(private, "alice may")
        assert alice.create_consumer(private).receive(10_000).get_body(str) == "alice may"
        assert alice.create_consumer(q).receive(10_000).get_body(str) == "from bob"


def test_services_group_may_read_pyjms_queues_and_others_may_not(secured: Secured) -> None:
    leader = Queue(f"PYJMS.LEADER.test-{uuid.uuid4().hex[:6]}")
    with secured.factory("bob", "bob-pw").create_context() as bob:
        with pytest.raises(pyjms.JMSSecurityRuntimeException):
            bob.create_consumer(leader).receive(100)
    with secured.factory("svc", "svc-pw").create_context() as svc:
        svc.create_consumer(leader).close()  # would take part in leader election
        svc.create_browser(Queue("SYSTEM.DDELAY.LOCAL.QUEUE")).close()  # may read the staging queue


@pytest.mark.parametrize("amqp", [False, True], ids=["core", "amqp"])
def test_broker_stamps_the_sender_and_a_client_cannot_forge_it(secured: Secured, amqp: bool) -> None:
    q = Queue(f"APP.{uuid.uuid4().hex[:8]}")
    with secured.factory("bob", "bob-pw", amqp=amqp).create_context() as bob:
        plain, forged = bob.create_text_message("plain"), bob.create_text_message("forged")
        forged.set_string_property("JMSXUserID", "alice")
        bob.create_producer().send(q, plain).send(q, forged)
    with secured.factory(
        "alice", "alice-pw"
    ).create_context() as alice:  # a core reader, as pyjms's services are
        consumer = alice.create_consumer(q)
        got = [consumer.receive(10_000) for _ in range(2)]
    assert [(m.get_body(str), m.get_string_property("JMSXUserID")) for m in got] == [
        ("plain", "bob"),
        ("forged", "bob"),
    ]


def test_plain_tcp_is_off(secured: Secured) -> None:
    port = secured.process.tcp_url.rsplit(":", 1)[1]
    plain = f"artemis+tcp://127.0.0.1:{port}" if secured.provider == "artemis" else f"tcp://127.0.0.1:{port}"
    url = plain + (
        "?reconnectAttempts=0&callTimeout=5000"
        if secured.provider == "artemis"
        else "?connectResponseTimeout=5000"
    )
    with pytest.raises(pyjms.JMSRuntimeException):
        ConnectionFactory(url, "alice", "alice-pw").create_context().close()


def test_an_administrator_defines_attributes_and_the_broker_enforces_them(secured: Secured) -> None:
    name = f"APP.LIMITED.{uuid.uuid4().hex[:6]}"
    done = secured.cli("alice", "alice-pw", "admin", "define-queue", name, "--put", "disabled")
    assert done.returncode == 0, done
    with secured.factory("bob", "bob-pw").create_context() as bob:
        with pytest.raises(pyjms.JMSRuntimeException) as refused:
            bob.create_producer().send(Queue(name), "put inhibited")
        assert refused.value.reason == 2051  # MQRC_PUT_INHIBITED


def test_non_admin_may_not_define_attributes(secured: Secured) -> None:
    done = secured.cli("bob", "bob-pw", "admin", "define-queue", "APP.LIMITED", "--max-depth", "5")
    assert done.returncode == 2, done
    assert "bob" in done.stderr and ("2035" in done.stderr or "NOT_AUTHORIZED" in done.stderr), done.stderr


def run_broker(*args: str, env: dict[str, Any] | None = None) -> subprocess.CompletedProcess[str]:
    """`pyjms broker` that is refused before it starts."""
    return subprocess.run(
        [sys.executable, "-m", "pyjms", "broker", "--port", "0", *args],
        capture_output=True, text=True, cwd=ROOT, timeout=60, env=env,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("text", "entry", "rule"),
    [
        ('[users.bob]\npassword = "bob-pw"\ngroups = "app"\n', "users.bob.groups", "list of group names"),
        ('[users.bob]\npassword = ""\n', "users.bob", "password must be a non-empty string"),
        ('[users.bob]\npassword = "bob-pw"\nrole = "x"\n', "users.bob", "unknown key 'role'"),
        ('[users.bob]\npassword = "bob-pw"\ngroups = ["app"]\n[[access]]\nread = ["app"]\n', "access #1", "queue = PATTERN"),
        ('[users.bob]\npassword = "bob-pw"\n[[access]]\nqueue = "A.>"\nwrite = ["nobody"]\n', "access #1.write", "no user's group"),
        ("users = [", "not TOML", ""),
    ],
)  # fmt: skip
def test_malformed_users_file_is_one_line_naming_file_entry_and_rule(
    tmp_path: Path, text: str, entry: str, rule: str
) -> None:
    path = tmp_path / "users.toml"
    path.write_text(text)
    done = run_broker("--users", str(path))
    assert done.returncode == 2 and "ready:" not in done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and entry in lines[0] and rule in lines[0], done.stderr
    assert "bob-pw" not in done.stderr


def test_keystore_without_its_password_is_refused(keys: dict[str, Path]) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYJMS_TLS_PASSWORD"}
    done = run_broker("--tls-keystore", str(keys["keystore"]), env=env)
    assert done.returncode == 2 and "PYJMS_TLS_PASSWORD" in done.stderr and "--tls-password" in done.stderr


def test_broker_without_users_says_it_has_no_authentication(
    tcp_broker: BrokerProcess, artemis_tcp_broker: BrokerProcess
) -> None:
    for broker in (tcp_broker, artemis_tcp_broker):
        before, _, urls = broker.ready_line.partition("ready:")
        assert "no authentication" in before and "for development only" in before
        assert urls.split() == broker.uris and broker.tcp_url in broker.uris


@pytest.mark.parametrize("provider", ["activemq", "artemis"])
def test_a_wrong_keystore_password_is_one_line_not_a_broker_without_its_port(
    keys: dict[str, Path], provider: str
) -> None:
    env = dict(os.environ, PYJMS_TLS_PASSWORD="not-the-password")
    done = run_broker("--provider", provider, "--tls-keystore", str(keys["keystore"]), env=env)
    assert done.returncode == 2 and "ready:" not in done.stdout
    error = [line for line in done.stderr.splitlines() if line.startswith("pyjms broker: error:")]
    assert len(error) == 1 and str(keys["keystore"]) in error[0] and "password" in error[0], done.stderr
    assert "not-the-password" not in done.stderr


def test_a_delay_processor_beside_the_broker_checks_stagers_rights_with_it(secured: Secured) -> None:
    """`pyjms delay-processor` as a user of group services beside a pyjms broker with users asks
    the broker what each stager may write (docs/security.md), and says so."""
    processor = PyjmsProcess(
        "delay-processor", "--url", secured.process.tcp_url, "--user", "svc", "--password", "svc-pw",
        env=secured.cli_env(),
    )  # fmt: skip
    try:
        said = processor.wait_line(lambda line: "stager's rights" in line, 120)
        assert said is not None, (processor.lines, processor.stderr()[-2000:])
    finally:
        processor.kill()
