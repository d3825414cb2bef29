"""A Finding and its JSON: the policy pack and the offline gate report the same rule names."""

from __future__ import annotations

import json
from datetime import timedelta

from pairedbus.rules.findings import ADVISORY, MANDATORY, RULES, Finding


def _finding(expected: object, actual: object) -> Finding:
    return Finding(
        rule="backlog-queue-settings",
        entity="contoso/backlog/0",
        namespace="contoso-dr",
        property="maxDeliveryCount",
        expected=expected,
        actual=actual,
        severity=MANDATORY,
        message="the backlog queue's maxDeliveryCount must be 2147483647",
    )


def test_the_rule_names_are_the_policy_names() -> None:
    assert RULES == (
        "premium-entities-partitioned",
        "backlog-queue-settings",
        "backlog-queue-set",
        "local-auth-disabled",
        "minimum-tls-1-2",
        "paired-regions-differ",
        "standard-partitioned-entity-limit",
        "entity-size-allowed-for-tier",
        "paired-entities-duplicate-detection",
        "production-namespace-diagnostics",
    )
    assert (MANDATORY, ADVISORY) == ("mandatory", "advisory")  # Pulumi's enforcement level names


def test_json_keeps_every_field_and_plain_values_as_they_are() -> None:
    data = _finding(2147483647, 10).to_json()
    assert data == {
        "rule": "backlog-queue-settings",
        "entity": "contoso/backlog/0",
        "namespace": "contoso-dr",
        "property": "maxDeliveryCount",
        "expected": 2147483647,
        "actual": 10,
        "severity": "mandatory",
        "message": "the backlog queue's maxDeliveryCount must be 2147483647",
    }


def test_json_turns_tuples_into_lists_and_other_values_into_strings() -> None:
    data = _finding(("P14D", True, None, 1.5), timedelta(days=1)).to_json()
    assert data["expected"] == ["P14D", True, None, 1.5]
    assert data["actual"] == "1 day, 0:00:00"
    json.dumps(data)  # serialisable as it is


def test_json_converts_nested_values_inside_lists() -> None:
    assert _finding([[1, timedelta(seconds=2)]], None).to_json()["expected"] == [[1, "0:00:02"]]
