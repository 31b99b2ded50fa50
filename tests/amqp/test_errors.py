"""Qpid JMS's errors, as pyjms reports them."""

from __future__ import annotations

import pyjms
from pyjms import MQRC
from pyjms.bridge import jvm
from pyjms.bridge.errors import translate
from pyjms.broker.admin import Admin
from tests.amqp.conftest import AmqpPeer
from tests.conftest import move_to_a_full_queue


def test_a_call_on_a_failed_qpid_connection_reports_a_broken_connection(amqp_peer: AmqpPeer) -> None:
    """Qpid JMS fails a call that waited on a transport that broke (a commit whose answer never
    came) with JmsConnectionFailedException, often before its exception listener has told pyjms
    the connection is gone. The error itself must say MQRC_CONNECTION_BROKEN: a commit that
    failed so, on a connection not known lost before, is in doubt, not 'never sent'."""
    with pyjms.ConnectionFactory(amqp_peer.url).create_context():
        pass  # the JVM, with Qpid JMS's classes
    shim = jvm.shim()
    provider_failed = shim.jclass("org.apache.qpid.jms.provider.exceptions.ProviderFailedException")
    connection_failed = shim.jclass("org.apache.qpid.jms.exceptions.JmsConnectionFailedException")
    failure = connection_failed(provider_failed("Transport connection remotely closed."))
    error = translate(failure, "commit")
    assert isinstance(error, pyjms.IllegalStateRuntimeException)
    assert error.reason == MQRC.CONNECTION_BROKEN


def test_a_put_to_a_full_queue_in_a_transaction_fails_the_commit_and_loses_nothing(
    amqp_peer: AmqpPeer, qname: str
) -> None:
    """Through ActiveMQ Classic's AMQP connector the commit succeeded and the message was lost
    (its connector rejects the put, which Qpid JMS does not wait for in a transaction)."""
    admin = Admin(pyjms.ConnectionFactory(amqp_peer.native_url))
    move_to_a_full_queue(pyjms.ConnectionFactory(amqp_peer.url), admin, qname)
