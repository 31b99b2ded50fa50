"""JVM lifecycle: clean exits with live listeners, async senders and brokers; any provider by class name."""

from __future__ import annotations

import os
import subprocess
import sys

import pyjms
from tests.conftest import ROOT

EXIT_WITH_OPEN_THINGS = """
import threading, pyjms
cf = pyjms.ConnectionFactory()        # embedded broker in this process
ctx = cf.create_context()
q = ctx.create_queue("LIFECYCLE")
got = threading.Event()
ctx.create_consumer(q).set_message_listener(lambda m: got.set())
done = threading.Event()
ctx.create_producer().set_async(lambda m, e: done.set()).send(q, ctx.create_text_message("x"))
assert got.wait(10) and done.wait(10)
other = cf.create_context(pyjms.SESSION_TRANSACTED)
other.create_producer().send(q, "uncommitted")
print("exiting with open contexts, a listener and an async sender", flush=True)
# no close(): pyjms must close everything before the JVM stops, without hanging
"""


def test_process_exits_cleanly_with_open_contexts_and_listeners():
    env = {k: v for k, v in os.environ.items() if k != "PYJMS_URL"}  # embedded broker, not a shared one
    out = subprocess.run(
        [sys.executable, "-c", EXIT_WITH_OPEN_THINGS],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert "exiting with open contexts" in out.stdout
    assert "Exception" not in out.stderr, out.stderr


def test_any_provider_by_factory_class_and_properties(tcp_broker, qname):
    cf = pyjms.ConnectionFactory(
        factory_class="org.apache.activemq.ActiveMQConnectionFactory",
        properties={"brokerURL": tcp_broker.tcp_url, "clientID": "by-class"},
    )
    with cf.create_context() as ctx:
        # a known provider's factory class gets that provider's own handling (and name)
        assert ctx.provider_name.startswith("ActiveMQ Classic ")
        assert ctx.get_client_id() == "by-class"
        q = ctx.create_queue(qname)
        ctx.create_producer().send(q, "generic provider")
        assert ctx.create_consumer(q).receive(5000).get_text() == "generic provider"


def test_unknown_factory_class_or_property_is_clear():
    import pytest

    with pytest.raises(pyjms.JMSRuntimeException, match="org.example.Missing"):
        pyjms.ConnectionFactory(factory_class="org.example.Missing").create_context()
    with pytest.raises(pyjms.InvalidArgumentRuntimeException, match="noSuchThing"):
        pyjms.ConnectionFactory(
            factory_class="org.apache.activemq.ActiveMQConnectionFactory", properties={"noSuchThing": "1"}
        ).create_context()


def test_a_vm_url_naming_no_broker_in_this_process_is_an_error_that_writes_nothing(tmp_path, monkeypatch):
    # ActiveMQ's client would start a persistent broker of that name, with a KahaDB store in
    # the working directory: a typo must not become a new broker on the disk
    import pytest

    monkeypatch.chdir(tmp_path)
    with pytest.raises(pyjms.JMSRuntimeException, match="'vm://no-such-broker'.*does not exist"):
        pyjms.ConnectionFactory("vm://no-such-broker").create_context()
    assert list(tmp_path.iterdir()) == []
    # asked for in the URL, ActiveMQ's own broker is still there (non-persistent here)
    with pyjms.ConnectionFactory("vm://asked-for?broker.persistent=false").create_context() as ctx:
        q = ctx.create_queue("VM.ASKED")
        ctx.create_producer().send(q, "here")
        assert ctx.create_consumer(q).receive(5000).get_text() == "here"
