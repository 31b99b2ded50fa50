"""Consume a queue acknowledging only after the Spark job that processed it has succeeded.

PySpark's batch reader has no job-commit callback, so ``mode=consume`` cannot wait for the job
(see pyjms.spark.batch_read). This does it from the driver, which knows when the job ended:

1. browse the queue into a DataFrame and materialize it once (``localCheckpoint``), so the
   job and the acknowledgement see the same messages, whatever Spark recomputes;
2. run the caller's job on it; if it raises, nothing is removed and the error propagates;
3. then get exactly those messages by their tokens (their provider message ids) and commit,
   ``ackBatch`` messages per transaction.

Messages sent while the job ran are not part of the snapshot and stay. A message another
consumer took in the meantime is counted as ``missing``. If the driver dies during step 3, the
messages not yet acknowledged are read again by the next run: at-least-once, like readStream.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pyjms.api.constants import SESSION_TRANSACTED
from pyjms.api.destination import Queue, from_key
from pyjms.errors import InvalidArgumentRuntimeException
from pyjms.spark.options import JMSOptions, connection_factory


@dataclass(frozen=True)
class ConsumeResult:
    processed: int  # rows the job saw
    acknowledged: int  # messages removed from the queue after the job succeeded
    missing: int  # messages in the snapshot another consumer took while the job ran
    result: Any  # what the job returned


def consume_after_job(
    spark: Any, options: Mapping[str, str], job: Callable[[Any], Any], ack_batch: int = 500
) -> ConsumeResult:
    """Reads ``options``' queue (browse), runs ``job(df)``, and only if it returns removes the
    messages it saw. ``options`` are the ``jms`` format's read options (``mode`` must not be set)."""
    if "mode" in options:
        raise InvalidArgumentRuntimeException(
            f"consume_after_job browses, then acknowledges: drop the option mode={options['mode']!r}"
        )
    if isinstance(ack_batch, bool) or not isinstance(ack_batch, int) or not 1 <= ack_batch <= 10_000:
        raise InvalidArgumentRuntimeException(f"ack_batch {ack_batch!r} must be an int 1..10000")
    jms = JMSOptions.parse(dict(options))
    queue_key = jms.require_queue()
    reader = spark.read.format("jms")
    for k, v in options.items():
        reader = reader.option(k, v)
    snapshot = reader.load().localCheckpoint(eager=True)
    result = job(snapshot)  # raises: nothing was consumed
    tokens = [r.message_id for r in snapshot.select("message_id").toLocalIterator() if r.message_id]
    acknowledged = 0
    queue = from_key(queue_key)
    assert isinstance(queue, Queue)
    with connection_factory(jms).create_context(SESSION_TRANSACTED) as ctx:
        consumer = ctx.create_consumer(queue)
        for start in range(0, len(tokens), ack_batch):
            got = consumer.receive_by_tokens(tokens[start : start + ack_batch], jms.receive_timeout)
            ctx.commit()
            acknowledged += len(got)
    return ConsumeResult(len(tokens), acknowledged, len(tokens) - acknowledged, result)
