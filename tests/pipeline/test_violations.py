from __future__ import annotations

from typing import Any

import pytest

from pairedbus import contract, rules
from pairedbus.pipeline.schemas import PROPERTY_TYPES
from pairedbus.pipeline.violations import VIOLATION_COLUMNS, evaluate, format_value

B0 = contract.backlog_queue_name("contoso", 0)


def row(kind: str, namespace: str, entity: str | None = None, **values: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "source_file": "file:/inv/a.jsonl",
        "kind": kind,
        "id": f"/x/{namespace}/{entity}",
        "namespace": namespace.lower(),
        "namespace_display": namespace,
        "entity": entity,
        "location": values.pop("location", "westeurope"),
        "sku_name": values.pop("sku_name", None),
        "sku_capacity": values.pop("sku_capacity", None),
    }
    base.update({p: None for p in PROPERTY_TYPES})
    base.update(values)
    return base


def namespace(name: str, sku: str, **values: Any) -> dict[str, Any]:
    secure = {"disableLocalAuth": True, "minimumTlsVersion": "1.2"}
    return row("namespace", name, sku_name=sku, **(secure | values))


def backlog(**overrides: Any) -> dict[str, Any]:
    return row("queue", "contoso-dr", B0, **(dict(contract.BACKLOG_QUEUE_PROPERTIES) | overrides))


def as_dicts(found: list[tuple[str, ...]]) -> list[dict[str, str]]:
    return [dict(zip((*VIOLATION_COLUMNS, "message"), v, strict=True)) for v in found]


def test_drifted_backlog_queue_is_one_row_per_property_with_its_slash_name() -> None:
    found, rejected = evaluate(
        [namespace("contoso-dr", "Standard"), backlog(lockDuration="PT30S", maxDeliveryCount=10)]
    )
    assert rejected == []
    rows = sorted(as_dicts(found), key=lambda v: v["property"])
    assert [{k: v[k] for k in VIOLATION_COLUMNS} for v in rows] == [
        {
            "namespace": "contoso-dr",
            "entity": "contoso/x-servicebus-transfer/0",
            "rule": rules.BACKLOG_QUEUE_SETTINGS,
            "property": "lockDuration",
            "expected": "PT1M",
            "actual": "PT30S",
            "severity": rules.MANDATORY,
        },
        {
            "namespace": "contoso-dr",
            "entity": "contoso/x-servicebus-transfer/0",
            "rule": rules.BACKLOG_QUEUE_SETTINGS,
            "property": "maxDeliveryCount",
            "expected": "2147483647",
            "actual": "10",
            "severity": rules.MANDATORY,
        },
    ]


def test_partitioned_standard_backlog_queue_reporting_sixteen_times_its_size_is_not_drift() -> None:
    size = contract.BACKLOG_QUEUE_PROPERTIES["maxSizeInMegabytes"] * contract.PARTITIONS_PER_ENTITY["Standard"]
    found, _ = evaluate(
        [namespace("contoso-dr", "Standard"), backlog(enablePartitioning=True, maxSizeInMegabytes=size)]
    )
    assert found == []


def test_backlog_queue_too_small_is_a_size_violation() -> None:
    found, _ = evaluate([namespace("contoso-dr", "Standard"), backlog(maxSizeInMegabytes=1024)])
    assert [(v["rule"], v["property"], v["expected"], v["actual"]) for v in as_dicts(found)] == [
        (rules.BACKLOG_QUEUE_SETTINGS, "maxSizeInMegabytes", "5120", "1024")
    ]


def test_non_partitioned_premium_entity_is_a_violation() -> None:
    found, _ = evaluate(
        [
            namespace("fabrikam", "Premium", premiumMessagingPartitions=2),
            row("topic", "fabrikam", "ledger", enablePartitioning=False),
            row("queue", "fabrikam", "invoices", enablePartitioning=True),
        ]
    )
    assert [{k: v[k] for k in VIOLATION_COLUMNS} for v in as_dicts(found)] == [
        {
            "namespace": "fabrikam",
            "entity": "ledger",
            "rule": rules.PREMIUM_ENTITIES_PARTITIONED,
            "property": "enablePartitioning",
            "expected": "true",
            "actual": "false",
            "severity": rules.MANDATORY,
        }
    ]


def test_namespace_security_rules_apply_to_namespaces() -> None:
    found, _ = evaluate([namespace("contoso", "Standard", disableLocalAuth=False)])
    assert [(v["namespace"], v["rule"], v["property"]) for v in as_dicts(found)] == [
        ("contoso", rules.LOCAL_AUTH_DISABLED, "disableLocalAuth")
    ]


def test_gap_in_backlog_indices_is_a_backlog_set_violation() -> None:
    b2 = row("queue", "contoso-dr", contract.backlog_queue_name("contoso", 2), **contract.BACKLOG_QUEUE_PROPERTIES)
    found, _ = evaluate(
        [
            namespace("contoso", "Standard", location="westeurope"),
            namespace("contoso-dr", "Standard", location="northeurope"),
            backlog(),
            b2,
        ]
    )
    assert [(v["rule"], v["entity"]) for v in as_dicts(found)] == [
        (rules.BACKLOG_QUEUE_SET, contract.backlog_queue_name("contoso", 1))
    ]


def test_record_a_rule_cannot_read_is_rejected_not_fatal(mocker) -> None:
    mocker.patch("pairedbus.rules.check_entity_size", side_effect=TypeError("unexpected value"))
    found, rejected = evaluate([namespace("contoso", "Standard"), row("queue", "contoso", "orders")])
    assert found == []
    assert [(r.source_file, r.reason) for r in rejected] == [
        ("file:/inv/a.jsonl", "check_entity_size: TypeError: unexpected value")
    ]
    assert '"entity": "orders"' in rejected[0].record


@pytest.mark.parametrize(
    ("value", "cell"), [(True, "true"), (None, ""), (10, "10"), ("PT1M", "PT1M"), ([1024, 2048], "[1024, 2048]")]
)
def test_values_are_written_as_json_spelling(value: object, cell: str) -> None:
    assert format_value(value) == cell


def five_plus_seven(tags: dict[str, str] | None) -> list[dict[str, Any]]:
    """paired-namespaces.md: "if five are requested and contoso/x-servicebus-transfer/7 exists, it
    stays, unused - a clean pair, not drift"."""
    queues = [
        row("queue", "contoso-dr", contract.backlog_queue_name("contoso", i), **contract.BACKLOG_QUEUE_PROPERTIES)
        for i in (0, 1, 2, 3, 4, 7)
    ]
    secondary = namespace("contoso-dr", "Standard", location="northeurope", tags=tags)
    return [namespace("contoso", "Standard", location="westeurope"), secondary, *queues]


def test_the_specs_five_plus_seven_is_clean_with_the_count_tag() -> None:
    found, rejected = evaluate(five_plus_seven({"pairedbus-backlog-queue-count": "5"}))
    assert (found, rejected) == ([], [])


def test_a_missing_index_below_the_tagged_count_is_mandatory() -> None:
    found, _ = evaluate(five_plus_seven({"pairedbus-backlog-queue-count": "6"}))
    assert [(v["rule"], v["entity"], v["severity"]) for v in as_dicts(found)] == [
        (rules.BACKLOG_QUEUE_SET, "contoso/x-servicebus-transfer/5", rules.MANDATORY)
    ]


def test_without_the_count_tag_a_gap_is_advisory_and_says_why() -> None:
    # Today's fallback: the distinct indices present (6) stand in for the count, so index 5 looks
    # missing; without the configured count that may be an allowed extra, so it is advisory.
    [violation] = as_dicts(evaluate(five_plus_seven(None))[0])
    assert (violation["entity"], violation["severity"]) == ("contoso/x-servicebus-transfer/5", rules.ADVISORY)
    assert "no pairedbus-backlog-queue-count tag" in violation["message"]


# 10001: one more queue than a namespace holds (partitioning.md, the 10,000-entity quota)
@pytest.mark.parametrize("value", ["five", "0", "-1", "2.5", "", "10001"])
def test_a_count_tag_that_is_not_a_count_is_reported_and_the_count_inferred(value: str) -> None:
    found = as_dicts(evaluate(five_plus_seven({"pairedbus-backlog-queue-count": value}))[0])
    assert [(v["rule"], v["severity"]) for v in found] == [
        ("backlog-queue-count-tag", rules.ADVISORY),
        (rules.BACKLOG_QUEUE_SET, rules.ADVISORY),
    ]


def test_backlog_queue_names_differing_in_case_are_one_queue() -> None:
    upper = row("queue", "contoso-dr", "CONTOSO/x-servicebus-transfer/0", **contract.BACKLOG_QUEUE_PROPERTIES)
    found, _ = evaluate([*five_plus_seven({"pairedbus-backlog-queue-count": "5"}), upper])
    assert found == []
