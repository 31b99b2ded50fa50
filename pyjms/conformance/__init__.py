"""The conformance kit: IBM MQ's observable behaviours (docs/catalogue.md), checked against a
JMS provider through pyjms's public API.

``run(factory, modes=..., rules=...)`` returns one :class:`Row` per rule and delay mode;
``RULES`` lists the rules and ``UNOBSERVABLE`` the behaviour IDs a client cannot observe, each
with its reason. ``pyjms conformance`` (pyjms.cli.conformance) prints the rows, as a table,
JSON lines or JUnit XML; ``pyjms.conformance.plugin`` makes each row a pytest item
([conformance](../../docs/conformance.md)).
"""

from pyjms.conformance import browse_rules, delay_rules, dlq_rules, expiry_rules
from pyjms.conformance.kit import (
    FAIL,
    PASS,
    RULES,
    SKIP,
    UNOBSERVABLE,
    Row,
    Rule,
    Skip,
    Unobservable,
    factory_for,
    offered_modes,
    run,
    run_iter,
    select,
)

#: the modules whose import registers the rules
RULE_MODULES = (delay_rules, expiry_rules, browse_rules, dlq_rules)

__all__ = [
    "FAIL",
    "PASS",
    "RULES",
    "RULE_MODULES",
    "SKIP",
    "UNOBSERVABLE",
    "Row",
    "Rule",
    "Skip",
    "Unobservable",
    "factory_for",
    "offered_modes",
    "run",
    "run_iter",
    "select",
]
