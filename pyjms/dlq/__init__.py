"""Dead-letter queue handling in the manner of IBM MQ's runmqdlq.

* pyjms.dlq.rules: the rules table (RulesTable.parse), whose rules and control data are in
  pyjms.dlq.rule and whose text pyjms.dlq.table_parser reads;
* pyjms.dlq.header: the dead-letter header as JMS properties, and dead_letter();
* pyjms.dlq.handler: DLQHandler, which processes a DLQ by a table (its decisions in
  pyjms.dlq.decisions, its totals in pyjms.dlq.stats);
* pyjms.dlq.cli: ``pyjms dlq-handler``.
"""

from pyjms.dlq.forward import handler_factory, put_unchanged
from pyjms.dlq.handler import DLQHandler, HandlerStats
from pyjms.dlq.header import DeadLetterDetails, DeadLetterHeader, dead_letter
from pyjms.dlq.rules import Action, ControlData, Rule, RulesTable, RulesTableError

__all__ = [
    "RulesTable",
    "Rule",
    "ControlData",
    "RulesTableError",
    "Action",
    "DeadLetterHeader",
    "DeadLetterDetails",
    "dead_letter",
    "DLQHandler",
    "HandlerStats",
    "put_unchanged",
    "handler_factory",
]
