"""Apache Artemis: the embedded broker, ``pyjms broker --provider artemis``, choosing the client
by URL or provider=, and the features pyjms leaves to Artemis's own client.

Provider-specific by nature; the provider-independent behaviour runs on Artemis through the
``providers`` marker of the integration tests (tests/conftest.py).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import uuid

import pytest

import pyjms
from pyjms.bridge.urls import choose
from pyjms.broker import AccessRule
from pyjms.errors import SetupError
from pyjms.providers.artemis import EmbeddedArtemisBroker
from tests.conftest import ROOT, drain
from tests.integration.test_cli_and_brokers import _listening_addresses

# ------------------------------------------------------------------ which client a URL is for


@pytest.mark.parametrize(
    ("given", "provider", "chosen"),
    [
        ("tcp://h:61616", None, ("activemq", "tcp://h:61616")),  # as always in pyjms
        ("failover:(tcp://a:1,tcp://b:2)", None, ("activemq", "failover:(tcp://a:1,tcp://b:2)")),
        ("vm://pyjms-1?create=false", None, ("activemq", "vm://pyjms-1?create=false")),
        ("artemis+tcp://h:61616", None, ("artemis", "tcp://h:61616")),
        ("tcp://h:61616", "artemis", ("artemis", "tcp://h:61616")),
        ("artemis+tcp://h:61616", "artemis", ("artemis", "tcp://h:61616")),
        ("activemq+tcp://h:61616", None, ("activemq", "tcp://h:61616")),
        ("vm://3", None, ("artemis", "vm://3")),  # Artemis numbers its in-vm acceptors
        ("amqp://h:5672", None, ("amqp", "amqp://h:5672")),
    ],
)
def test_the_url_or_provider_chooses_the_client(given, provider, chosen):
    assert choose(given, provider) == chosen


def test_a_url_for_one_provider_with_another_named_is_refused():
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="artemis.*provider='activemq'"):
        pyjms.ConnectionFactory("artemis+tcp://127.0.0.1:1", provider="activemq")
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="provider 'rabbit' is not one of"):
        pyjms.ConnectionFactory("tcp://127.0.0.1:1", provider="rabbit")
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="give one, not both"):
        pyjms.ConnectionFactory(provider="artemis", factory_class="x.Y")
    with pytest.raises(
        pyjms.InvalidArgumentRuntimeException, match="no provider for URL 'gopher://x'.*artemis"
    ):
        pyjms.ConnectionFactory("gopher://x")


def test_provider_artemis_without_a_url_says_so(monkeypatch):
    monkeypatch.delenv("PYJMS_URL", raising=False)
    with pytest.raises(SetupError, match="an Artemis factory needs a URL"):  # the plug-in's answer, as AMQP's
        pyjms.ConnectionFactory(provider="artemis").create_context()


def test_in_vm_and_provider_urls_reach_the_embedded_broker(artemis_broker, qname):
    assert artemis_broker.vm_url.startswith("vm://")
    for factory in (
        pyjms.ConnectionFactory(artemis_broker.vm_url),
        pyjms.ConnectionFactory(artemis_broker.vm_url, provider="artemis"),
    ):
        with factory.create_context() as ctx:
            assert ctx.provider_name.startswith("Apache Artemis 2.")
            ctx.create_producer().send(ctx.create_queue(qname), "in-vm")
            assert ctx.create_consumer(ctx.create_queue(qname)).receive(5000).get_text() == "in-vm"


def test_two_embedded_brokers_in_one_process_have_their_own_vm_urls(artemis_broker, qname):
    with EmbeddedArtemisBroker(services=False) as other:
        assert other.vm_url != artemis_broker.vm_url
        with pyjms.ConnectionFactory(other.vm_url).create_context() as ctx:
            ctx.create_producer().send(ctx.create_queue(qname), "on the other one")
        with pyjms.ConnectionFactory(artemis_broker.vm_url).create_context() as ctx:
            assert ctx.create_consumer(ctx.create_queue(qname)).receive(300) is None
        assert other.queue_depth(qname) == 1
    with pytest.raises(pyjms.JMSRuntimeException):  # a stopped broker is an error, not a new broker
        pyjms.ConnectionFactory(other.vm_url).create_context()


# ------------------------------------------------------------------ pyjms broker --provider artemis


def test_broker_process_prints_one_ready_line_with_every_url_usable_as_printed(artemis_tcp_broker, qname):
    core, amqp = artemis_tcp_broker.uris
    assert core.startswith("artemis+tcp://127.0.0.1:") and amqp.startswith("amqp://127.0.0.1:")
    with pyjms.ConnectionFactory(core).create_context() as ctx:  # exactly as printed
        assert ctx.provider_name.startswith("Apache Artemis")
        ctx.create_producer().send(ctx.create_queue(qname), "over core")
    # the AMQP URL on the same port, through Qpid JMS (its factory class and bean property)
    qpid = pyjms.ConnectionFactory(
        factory_class="org.apache.qpid.jms.JmsConnectionFactory", properties={"remoteURI": amqp}
    )
    with qpid.create_context() as ctx:
        m = ctx.create_consumer(ctx.create_queue(qname)).receive(5000)
        assert m is not None and m.get_text() == "over core"


def test_broker_process_listens_on_loopback_only(artemis_tcp_broker):
    port = int(artemis_tcp_broker.tcp_url.rsplit(":", 1)[1])
    addrs = _listening_addresses(port)
    assert addrs and addrs <= {"0100007F", "0000000000000000FFFF00000100007F"}, addrs


def test_broker_process_refuses_stomp_with_one_clear_line():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyjms",
            "broker",
            "--provider",
            "artemis",
            "--port",
            "0",
            "--stomp-port",
            "0",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert out.returncode == 2 and "--stomp-port" in out.stderr and "Traceback" not in out.stderr


def test_a_plain_tcp_url_is_activemq_and_fails_clearly_against_artemis(artemis_tcp_broker):
    plain = artemis_tcp_broker.tcp_url.removeprefix("artemis+")
    with pytest.raises(pyjms.JMSRuntimeException) as e:
        pyjms.ConnectionFactory(plain, properties={"maxReconnectAttempts": 0}).create_context()
    assert "Traceback" not in str(e.value)


# ------------------------------------------------------------------ embedded broker options


def test_bad_options_are_refused_with_the_value_named():
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="port 70000"):
        EmbeddedArtemisBroker(port=70000)
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="dead_letter_queue ''"):
        EmbeddedArtemisBroker(dead_letter_queue="")
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="must start with pyjms"):
        EmbeddedArtemisBroker(name="other")


def test_journal_keeps_persistent_messages_across_restarts(tmp_path, qname):
    data = tmp_path / "artemis"
    with EmbeddedArtemisBroker(data_dir=data, services=False) as first:
        with pyjms.ConnectionFactory(first.vm_url).create_context() as ctx:
            p = ctx.create_producer()
            p.send(ctx.create_queue(qname), "survives")
            p.set_delivery_mode(pyjms.NON_PERSISTENT).send(ctx.create_queue(qname), "does not")
    assert (data / "journal").is_dir()
    with EmbeddedArtemisBroker(data_dir=data, services=False) as second:
        with pyjms.ConnectionFactory(second.vm_url).create_context() as ctx:
            assert [m.get_text() for m in drain(ctx.create_consumer(ctx.create_queue(qname)))] == ["survives"]


def test_a_message_rolled_back_too_often_goes_to_the_dead_letter_queue(artemis_broker, qname):
    factory = pyjms.ConnectionFactory(artemis_broker.vm_url)
    with factory.create_context(pyjms.SESSION_TRANSACTED) as tx:
        q = tx.create_queue(qname)
        tx.create_producer().send(q, "poison")
        tx.commit()
        c = tx.create_consumer(q)
        for _ in range(10):  # Artemis's max-delivery-attempts
            assert c.receive(5000).get_text() == "poison"
            tx.rollback()
        assert c.receive(500) is None
    with factory.create_context() as ctx:
        dead = ctx.create_consumer(
            ctx.create_queue(artemis_broker.dead_letter_queue), f"_AMQ_ORIG_QUEUE = '{qname}'"
        )
        m = dead.receive(5000)
        assert m is not None and m.get_text() == "poison"


def test_expired_messages_are_dropped_or_kept_on_the_expiry_queue(qname):
    with EmbeddedArtemisBroker(expiry_queue="EXPIRED", services=False) as keeping:
        with pyjms.ConnectionFactory(keeping.vm_url).create_context() as ctx:
            ctx.create_producer().set_time_to_live(100).send(ctx.create_queue(qname), "short-lived")
            time.sleep(0.3)
            assert ctx.create_consumer(ctx.create_queue(qname)).receive(300) is None
            kept = ctx.create_consumer(ctx.create_queue("EXPIRED")).receive(5000)
            assert kept is not None and kept.get_text() == "short-lived"
    with EmbeddedArtemisBroker(services=False) as dropping:
        with pyjms.ConnectionFactory(dropping.vm_url).create_context() as ctx:
            ctx.create_producer().set_time_to_live(100).send(ctx.create_queue(qname), "short-lived")
            time.sleep(0.3)
            assert dropping.queue_depth(qname) == 1  # E09: no expiry scan; it waits for a get, as on IBM MQ
            assert ctx.create_consumer(ctx.create_queue(qname)).receive(300) is None
            assert dropping.queue_depth(qname) == 0
            assert dropping.queue_depth(dropping.dead_letter_queue) == 0  # dropped, not dead-lettered


# ------------------------------------------------------------------ users and access rules


@pytest.fixture(scope="module")
def secured():
    users = {"alice": ("alice-pw", ["senders", "readers"]), "bob": ("bob-pw", ["readers"])}
    access = [
        AccessRule("ORDERS.>", read=["readers"], write=["senders"], admin=["senders", "readers"]),
        AccessRule("PUBLIC.>", read=["readers"], write=["senders", "readers"], admin=["senders", "readers"]),
        AccessRule("NEWS.>", read=["readers"], write=["senders"], admin=["senders"], kind="topic"),
    ]
    broker = EmbeddedArtemisBroker(name=f"pyjms-secured-{uuid.uuid4().hex[:6]}", users=users, access=access)
    yield broker
    broker.stop()


def test_unknown_user_and_wrong_password_are_security_errors(secured):
    for user, password in (("mallory", "x"), ("alice", "wrong"), (None, None)):
        with pytest.raises(pyjms.JMSSecurityRuntimeException):
            pyjms.ConnectionFactory(secured.vm_url, user, password).create_context()


def test_access_rules_allow_and_refuse_puts_and_gets(secured):
    with pyjms.ConnectionFactory(secured.vm_url, "alice", "alice-pw").create_context() as alice:
        alice.create_producer().send(alice.create_queue("ORDERS.A"), "from alice")
        with pytest.raises(pyjms.JMSSecurityRuntimeException):
            alice.create_producer().send(alice.create_queue("ELSEWHERE"), "no rule: only pyjms's services")
    with pyjms.ConnectionFactory(secured.vm_url, "bob", "bob-pw").create_context() as bob:
        with pytest.raises(pyjms.JMSSecurityRuntimeException):
            bob.create_producer().send(bob.create_queue("ORDERS.A"), "bob may not")
        assert bob.create_consumer(bob.create_queue("ORDERS.A")).receive(5000).get_text() == "from alice"
        # temporary queues are everyone's, as on the ActiveMQ broker
        reply = bob.create_temporary_queue()
        bob.create_producer().send(reply, "to myself")
        assert bob.create_consumer(reply).receive(5000).get_text() == "to myself"


def test_a_reader_of_a_topic_may_subscribe(secured):
    with (
        pyjms.ConnectionFactory(secured.vm_url, "bob", "bob-pw").create_context() as bob,
        pyjms.ConnectionFactory(secured.vm_url, "alice", "alice-pw").create_context() as alice,
    ):
        # making the topic is the admin's right (alice's), as on the ActiveMQ broker
        with pytest.raises(pyjms.JMSSecurityRuntimeException):
            bob.create_consumer(bob.create_topic("NEWS.TODAY"))
        alice.create_producer().send(alice.create_topic("NEWS.TODAY"), "to nobody yet")
        news = bob.create_consumer(bob.create_topic("NEWS.TODAY"))
        alice.create_producer().send(alice.create_topic("NEWS.TODAY"), "headline")
        assert news.receive(5000).get_text() == "headline"
        with pytest.raises(pyjms.JMSSecurityRuntimeException):
            bob.create_producer().send(bob.create_topic("NEWS.TODAY"), "bob may not publish")


@pytest.mark.parametrize("mode", ["native", "staging"])
def test_d11_delayed_send_is_authorised_against_the_target_at_send(secured, mode):
    bob = pyjms.ConnectionFactory(secured.vm_url, "bob", "bob-pw", delivery_delay=mode)
    with bob.create_context() as ctx:
        p = ctx.create_producer().set_delivery_delay(500)
        with pytest.raises(pyjms.JMSSecurityRuntimeException) as e:
            p.send(ctx.create_queue("ORDERS.B"), "not allowed")
        assert "ORDERS.B" in str(e.value)
        p.send(ctx.create_queue("PUBLIC.B"), "allowed")
        assert ctx.create_consumer(ctx.create_queue("PUBLIC.B")).receive(5000).get_text() == "allowed"


def test_d13_staging_queue_is_for_the_processor_only(secured):
    with pyjms.ConnectionFactory(secured.vm_url, "alice", "alice-pw").create_context() as alice:
        with pytest.raises(pyjms.JMSSecurityRuntimeException):
            alice.create_consumer(alice.create_queue("SYSTEM.DDELAY.LOCAL.QUEUE")).receive(100)


# ------------------------------------------------------------------ the client's own features


def test_native_delay_carries_the_delivery_time_in_the_header_not_a_pyjms_property(artemis_broker, qname):
    with pyjms.ConnectionFactory(artemis_broker.vm_url, delivery_delay="native").create_context() as ctx:
        q = ctx.create_queue(qname)
        c = ctx.create_consumer(q)
        m = ctx.create_text_message("later")
        ctx.create_producer().set_delivery_delay(800).send(q, m)
        assert (
            0 <= m.get_jms_delivery_time() - (m.get_jms_timestamp() + 800) <= 50
        )  # the client reads the clock twice
        assert c.receive(300) is None
        got = c.receive(5000)
        assert got.get_jms_delivery_time() == m.get_jms_delivery_time()
        assert not {n for n in got.get_property_names() if n.startswith("JMS_PYJMS_")}


def test_async_send_is_the_clients_own_and_its_failure_reaches_the_listener(artemis_broker, qname):
    from pyjms.broker.admin import Admin

    factory = pyjms.ConnectionFactory(artemis_broker.vm_url)
    q = pyjms.Queue(qname)
    Admin(factory).define_queue(q, max_depth=2)
    outcomes: list[tuple[str, int | None]] = []
    done = threading.Event()

    def listener(message: pyjms.Message, error: pyjms.JMSRuntimeException | None) -> None:
        outcomes.append((message.get_text(), None if error is None else error.reason))
        if len(outcomes) == 3:
            done.set()

    with factory.create_context() as ctx:
        names = {t.name for t in threading.enumerate()}
        p = ctx.create_producer().set_async(listener)
        for text in ("1", "2", "3"):
            p.send(q, ctx.create_text_message(text))
        assert done.wait(10), outcomes
        # the client confirmed each send; the third broke MAXDEPTH(2): MQRC_Q_FULL
        assert outcomes == [("1", None), ("2", None), ("3", 2053)]
        started = {t.name for t in threading.enumerate()} - names
        assert not any(n.startswith("pyjms-async-") for n in started)  # pyjms sent nothing itself


@pytest.mark.parametrize(
    ("given", "properties", "window"),
    [
        ("artemis+tcp://127.0.0.1:1", None, 1024 * 1024),  # pyjms's: the client's 64 KiB made sends wait
        ("artemis+tcp://127.0.0.1:1?producerWindowSize=65536", None, 65536),
        ("artemis+tcp://127.0.0.1:1", {"producerWindowSize": "32768"}, 32768),
    ],
)
def test_producers_ask_for_credits_a_mib_at_a_time_unless_the_url_or_properties_say(
    given, properties, window
):
    made = pyjms.ConnectionFactory(given, properties=properties)._java()[1]  # Artemis's own factory
    assert made.getProducerWindowSize() == window


def test_shared_subscriptions_are_the_clients_own(artemis_broker, qname):
    with (
        pyjms.ConnectionFactory(artemis_broker.vm_url).create_context() as a,
        pyjms.ConnectionFactory(artemis_broker.vm_url).create_context() as b,
    ):
        t = a.create_topic(qname)
        ca, cb = a.create_shared_consumer(t, "workers"), b.create_shared_consumer(t, "workers")
        a.create_producer().send_batch(t, [str(i) for i in range(20)])
        texts = sorted(int(m.get_text()) for m in drain(ca) + drain(cb))
        assert texts == list(range(20))
        # Artemis keeps the subscription as a queue named for it on the topic's address, not
        # the Consumer.<name>.<topic> queue of pyjms's emulation on ActiveMQ
        assert artemis_broker.queue_depth(f"Consumer.workers.{qname}") == 0
        assert artemis_broker.queues_of(qname) == ["nonDurable.workers"]


# ------------------------------------------------------------------ a commit the client cut short


def test_a_commit_whose_session_the_client_closed_under_it_is_in_doubt(artemis_broker, qname):
    """Artemis's core client, when a connection failure unblocks a commit waiting for its answer,
    rolls back to report "outcome unknown", and that rollback meets the session its failure
    handling has just closed: the commit ends in "AMQ219019: Session is closed", possibly before
    the client tells its exception listener. Such a commit may have been committed: in doubt,
    never "nothing was committed". The client's closing of its session is made here directly
    (a real failure makes it only in a race: tests/faults/test_duplicates.py)."""
    ctx = pyjms.ConnectionFactory(artemis_broker.vm_url).create_context(pyjms.SESSION_TRANSACTED)
    try:
        ctx.create_producer().send(ctx.create_queue(qname), "maybe")
        ctx.channel.java.session().getCoreSession().close()  # what the failure handling does
        with pytest.raises(pyjms.TransactionInDoubtRuntimeException, match="AMQ219019"):
            ctx.commit()
    finally:
        ctx.close()


# ------------------------------------------------------------------ the broker's log


def test_the_artemis_lines_pyjms_leaves_out_of_its_log_and_no_others() -> None:
    """pyjms's log configuration drops two Artemis server lines, AMQ222166 (expired messages
    dropped) and AMQ224046 (a browser closed while the broker held a message for it), and keeps
    every other warning and error of the server's, in a JVM started as pyjms starts it."""
    script = (
        "from pyjms.bridge import jvm\n"
        "jvm.start(providers=('artemis',))\n"
        "import jpype\n"
        "log = jpype.JClass('org.apache.logging.log4j.LogManager')"
        ".getLogger('org.apache.activemq.artemis.core.server.impl.ServerConsumerImpl')\n"
        "log.error('AMQ224046: Exception while browser handled from Reference[1]')\n"
        "log.warn('AMQ222166: No Expiry Address configured for queue Q')\n"
        "log.error('AMQ224000: Failure in initialisation')\n"
        "jpype.JClass('java.lang.System').err.flush()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "AMQ224000: Failure in initialisation" in out.stderr
    assert "AMQ224046" not in out.stderr and "AMQ222166" not in out.stderr


# ------------------------------------------------------------------ browsers racing for a new queue


def test_browsers_opened_at_once_on_a_new_queue_all_open(artemis_tcp_broker) -> None:
    """Artemis's core client creates an auto-created queue itself, after looking it up: a
    browser whose client looked before another client created the queue met AMQ229019 ("already
    exists"). pyjms opens it again then (Provider.createdMeanwhile). Four contexts open browsers
    on each of 25 new queues at the same moment: every one opens and browses the queue."""
    factory = pyjms.ConnectionFactory(artemis_tcp_broker.tcp_url)
    contexts = [factory.create_context() for _ in range(4)]
    try:
        for _ in range(25):
            name = f"RACE.{uuid.uuid4().hex[:8]}"
            start = threading.Barrier(len(contexts))
            failures: list[BaseException] = []

            def browse(ctx: pyjms.JMSContext) -> None:
                try:
                    start.wait(10)
                    with ctx.create_browser(ctx.create_queue(name)) as browser:
                        assert list(browser) == []
                except BaseException as e:  # noqa: BLE001 - reported below, with the queue
                    failures.append(e)

            threads = [threading.Thread(target=browse, args=(c,)) for c in contexts]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            assert not failures, f"{name}: {failures}"
    finally:
        for c in contexts:
            c.close()
