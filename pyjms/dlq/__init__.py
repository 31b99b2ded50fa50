"""Dead-letter queue handling in the manner of IBM MQ's runmqdlq: the rules table."""

from pyjms.dlq.rules import ControlData, Rule, RulesTable, RulesTableError

__all__ = ["RulesTable", "Rule", "ControlData", "RulesTableError"]
