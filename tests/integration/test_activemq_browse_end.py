"""ActiveMQ Classic's own browser ends a browse with messages unread when they and the broker's
end arrive between its two looks (org.pyjms.shim.activemq.EndFirstBrowse): with a 1 ms pause
between them, 1,608 of 2,000 passes of a 3-message queue ended early. pyjms's browse looks at
the end first; the same pause, put between its looks, must lose nothing."""

import jpype
import pytest

import pyjms


@pytest.fixture
def widened_window(embedded_broker):
    cls = jpype.JClass("org.pyjms.shim.activemq.EndFirstBrowse")
    field = cls.class_.getDeclaredField("pauseBetweenLooksMs")
    field.setAccessible(True)
    field.setLong(None, 1)
    yield
    field.setLong(None, 0)


def test_every_pass_shows_every_message_with_a_pause_between_the_looks(
    embedded_broker, widened_window, qname
):
    with pyjms.ConnectionFactory(embedded_broker.vm_url).create_context() as ctx:
        p = ctx.create_producer()
        for i in range(300):
            q = ctx.create_queue(f"{qname}.{i}")
            p.send_batch(q, ["a", "b", "c"])
            with ctx.create_browser(q) as b:
                assert [m.get_text() for m in b] == ["a", "b", "c"], f"pass {i}"
            c = ctx.create_consumer(q)
            assert [c.receive(2000).get_text() for _ in range(3)] == ["a", "b", "c"]
            c.close()
