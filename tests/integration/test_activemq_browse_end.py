"""ActiveMQ Classic sometimes ends a browse before its messages (about once in 40,000 passes of
a 3-message queue; org.pyjms.shim.activemq.ConfirmedBrowse): a pass goes on through a second
browser, and shows every message once, in order. The early end is made here by a first
browser whose selector hides the last messages."""

import jpype

import pyjms


def _opener(session, queue, selectors: list):
    @jpype.JImplements("org.pyjms.shim.BrowseCursor$Opener")
    class Opener:
        @jpype.JOverride
        def open(self):
            return session.createBrowser(queue, selectors.pop(0))

    return Opener()


def _pass(cursor) -> list[str]:
    shown = []
    try:
        while (m := cursor.next()) is not None:
            shown.append(str(m.getText()))
    finally:
        cursor.close()
    return shown


def test_a_browse_that_ends_early_goes_on_through_a_second_browser(embedded_broker, qname):
    with pyjms.ConnectionFactory(embedded_broker.vm_url).create_context() as ctx:
        p = ctx.create_producer()
        for i in range(5):
            p.set_property("n", i).send(ctx.create_queue(qname), f"m{i}")
    factory = jpype.JClass("org.apache.activemq.ActiveMQConnectionFactory")(embedded_broker.vm_url)
    connection = factory.createConnection()
    try:
        connection.start()
        session = connection.createSession(False, 1)
        queue = session.createQueue(qname)
        provider = jpype.JClass("org.pyjms.shim.activemq.ActiveMQProvider")()
        # the first browser ends after m0 and m1, as ActiveMQ's early end does
        selectors = ["n < 2", None]
        assert _pass(provider.browse(_opener(session, queue, selectors))) == [f"m{i}" for i in range(5)]
        assert selectors == []  # the second browser was opened
        # a first browser that showed everything: the second one adds nothing, repeats nothing
        assert _pass(provider.browse(_opener(session, queue, [None, None]))) == [f"m{i}" for i in range(5)]
        # nothing was consumed
        assert _pass(provider.browse(_opener(session, queue, [None, None]))) == [f"m{i}" for i in range(5)]
    finally:
        connection.close()
