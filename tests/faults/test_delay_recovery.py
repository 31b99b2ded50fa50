"""Issue 15, finding 3: the delay processor after a SIGKILL of the broker that hosts it.

A quick run of tests/faults/delay_recovery.py: 500 persistent delayed messages, one SIGKILL
in their window, the broker started again on its data. Nothing is lost, duplicated, delivered
early or left on the staging and slot queues. ``make soak`` runs the long version
(bench/soak_delay_recovery.py: 10 runs of 5,000, random kill points).
"""

from __future__ import annotations

import random
import time
import uuid

import pytest

import pyjms
from pyjms.bridge.contract import DELIVERY_TIME, SLOT_PREFIX, SLOTS_PREFIX, STAGED_TARGET, STAGING_QUEUE
from pyjms.broker import EmbeddedBroker
from pyjms.delay.processor import SLOT_MS, DelayProcessor
from tests.faults.delay_recovery import run_once

pytestmark = pytest.mark.slow


def test_broker_sigkill_loses_duplicates_and_strands_nothing(tmp_path):
    kill_at = random.uniform(0.2, 0.8)
    result = run_once(500, window_s=4.0, kill_at=kill_at, seed=random.randrange(1 << 30), work_dir=tmp_path)
    assert (result.lost, result.duplicated, result.early, result.stranded) == (0, 0, 0, 0), result
    assert result.received == 500, result
    assert result.markers_left == 0, result  # markers are cleaned up: what is left grows with nothing


def test_a_slot_queue_whose_marker_was_lost_is_found_at_start():
    """A staged message on a slot queue with no marker on PYJMS.SLOTS (as a crash left 250 in
    one run of finding 3) is delivered by the next processor: it lists the broker's slot queues."""
    broker = EmbeddedBroker(name=f"pyjms-stranded-{uuid.uuid4().hex[:6]}", delay_processor=False)
    try:
        factory = pyjms.ConnectionFactory(broker.vm_url)
        target = f"STRANDED.{uuid.uuid4().hex[:8]}"
        due = int(time.time() * 1000) + 1500
        with factory.create_context() as ctx:
            # put as the sorter files it, through the provider's own client (no pyjms producer
            # sets JMS_PYJMS_* properties)
            session = ctx.channel.java.session()
            staged = session.createTextMessage("stranded")
            staged.setStringProperty(STAGED_TARGET, f"queue://{target}")
            staged.setLongProperty(DELIVERY_TIME, due)
            slot_queue = session.createQueue(f"{SLOT_PREFIX}{due // SLOT_MS}.{STAGING_QUEUE}")
            session.createProducer(slot_queue).send(staged)
            with ctx.create_browser(ctx.create_queue(SLOTS_PREFIX + STAGING_QUEUE)) as markers:
                assert list(markers) == []
        with DelayProcessor(factory, fresh_broker=True), factory.create_context() as ctx:
            got = ctx.create_consumer(ctx.create_queue(target)).receive(15_000)
            assert got is not None and got.get_text() == "stranded"
            assert int(time.time() * 1000) >= due  # never early
    finally:
        broker.stop()


@pytest.mark.soak
def test_soak_ten_broker_sigkills_under_5000_delayed_messages(tmp_path):
    """The long version (``make soak`` or ``-m soak``): 10 runs of 5,000, random kill points."""
    rng = random.Random()
    for run in range(10):
        work = tmp_path / f"run{run}"
        work.mkdir()
        result = run_once(
            5000,
            window_s=10.0,
            kill_at=rng.uniform(0.05, 0.95),
            seed=rng.randrange(1 << 30),
            settle_s=120.0,
            work_dir=work,
        )
        print(result)
        assert (result.lost, result.duplicated, result.early, result.stranded) == (0, 0, 0, 0), result
