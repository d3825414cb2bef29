from __future__ import annotations

import json
from pathlib import Path

import pytest

from pairedbus import contract
from pairedbus.pipeline.inventory import (
    REASON_BAD_ID,
    REASON_CORRUPT,
    REASON_NO_ID,
    REASON_NO_SKU,
    read_inventory,
)

from .conftest import ns_id

pytestmark = pytest.mark.spark

BACKLOG = contract.backlog_queue_name("contoso", 0)


def arm_backlog_queue() -> dict:
    return {
        "id": f"{ns_id('contoso-dr')}/queues/{BACKLOG.replace('/', '~')}",
        "name": BACKLOG,
        "type": "Microsoft.ServiceBus/Namespaces/Queues",
        "properties": {"maxSizeInMegabytes": 5120, "lockDuration": "PT1M", "enablePartitioning": False},
    }


def test_arm_and_az_shapes_read_as_the_same_resource(spark, tmp_path: Path) -> None:
    (tmp_path / "arm.jsonl").write_text(json.dumps(arm_backlog_queue()) + "\n")
    flat = {k: v for k, v in arm_backlog_queue().items() if k != "properties"}
    flat.update(arm_backlog_queue()["properties"], name=BACKLOG.replace("/", "~"), resourceGroup="rg")
    flat["id"] = flat["id"].replace("contoso-dr", "Contoso-DR2")
    (tmp_path / "az.json").write_text(json.dumps([flat], indent=2))

    rows = read_inventory(spark, str(tmp_path)).resources.orderBy("namespace").collect()

    assert [(r.kind, r.namespace, r.entity) for r in rows] == [
        ("queue", "contoso-dr", BACKLOG),
        ("queue", "contoso-dr2", BACKLOG),
    ]
    for r in rows:
        assert (r.maxSizeInMegabytes, r.lockDuration, r.enablePartitioning) == (5120, "PT1M", False)
    assert rows[1].namespace_display == "Contoso-DR2"


def test_kinds_and_service_names_from_arm_ids(spark, write_lines) -> None:
    directory = write_lines(
        "inv/a.jsonl",
        [
            {"id": ns_id("contoso"), "name": "contoso", "sku": {"name": "Premium", "capacity": 2}},
            {"id": f"{ns_id('contoso')}/topics/events"},
            {"id": f"{ns_id('contoso')}/topics/events/subscriptions/audit"},
            {"id": f"{ns_id('contoso')}/queues/orders"},
        ],
    )
    rows = read_inventory(spark, str(directory)).resources.orderBy("kind").collect()
    assert [(r.kind, r.entity) for r in rows] == [
        ("namespace", None),
        ("queue", "orders"),
        ("subscription", "events/subscriptions/audit"),
        ("topic", "events"),
    ]
    assert (rows[0].sku_name, rows[0].sku_capacity) == ("Premium", 2)


def test_malformed_records_are_quarantined_with_their_reason(spark, write_lines) -> None:
    directory = write_lines(
        "inv/bad.jsonl",
        [
            '{"id": "/subscriptions/x/resourceGroups/rg/providers/Microsoft.ServiceBus/namespaces/a", "sku": ',
            {"id": f"{ns_id('contoso')}/queues/q", "properties": {"maxSizeInMegabytes": "five gigabytes"}},
            {"name": "no-id"},
            {"id": "/subscriptions/x/resourceGroups/rg/providers/Microsoft.Storage/storageAccounts/s"},
            {"id": ns_id("nosku"), "name": "nosku"},
            {"id": f"{ns_id('contoso')}/queues/good"},
        ],
    )
    inventory = read_inventory(spark, str(directory))

    reasons = sorted(r.reason for r in inventory.quarantine.collect())
    assert reasons == sorted([REASON_CORRUPT, REASON_CORRUPT, REASON_NO_ID, REASON_BAD_ID, REASON_NO_SKU])
    assert [r.entity for r in inventory.resources.collect()] == ["good"]
    corrupt = [r for r in inventory.quarantine.collect() if r.reason == REASON_CORRUPT]
    assert all(r.source_file.endswith("bad.jsonl") and r.record for r in corrupt)


def test_same_backlog_queue_from_arm_and_az_is_one_resource(spark, tmp_path: Path) -> None:
    arm = arm_backlog_queue()
    (tmp_path / "arm.jsonl").write_text(json.dumps(arm | {"name": BACKLOG.replace("/", "~")}) + "\n")
    flat = {k: v for k, v in arm.items() if k != "properties"} | arm["properties"]
    (tmp_path / "az.json").write_text(json.dumps([flat]))

    rows = read_inventory(spark, str(tmp_path)).resources.collect()

    assert [(r.namespace, r.entity) for r in rows] == [("contoso-dr", BACKLOG)]


def test_entity_names_differing_only_in_case_are_one_entity(spark, write_lines) -> None:
    # Service Bus entity names are case-insensitive: `ORDERS` and `orders` are one queue.
    directory = write_lines(
        "inv/a.jsonl",
        [
            {"id": f"{ns_id('contoso')}/queues/orders", "properties": {"maxDeliveryCount": 10}},
            {"id": f"{ns_id('contoso')}/queues/ORDERS", "properties": {"maxDeliveryCount": 10}},
        ],
    )
    rows = read_inventory(spark, str(directory)).resources.collect()
    assert [(r.entity_key, r.duplicates) for r in rows] == [("orders", 1)]


def test_top_level_and_properties_values_that_disagree_are_two_versions_not_merged(spark, write_lines) -> None:
    from pairedbus.pipeline.transform import conflicting_resources

    directory = write_lines(
        "inv/a.jsonl",
        [{"id": f"{ns_id('contoso')}/queues/orders", "lockDuration": "PT5M", "properties": {"lockDuration": "PT1M"}}],
    )
    resources = read_inventory(spark, str(directory)).resources
    assert sorted(r.lockDuration for r in resources.collect()) == ["PT1M", "PT5M"]
    [conflict] = conflicting_resources(resources).collect()
    assert (conflict.entity, conflict.versions) == ("orders", 2)


def test_agreeing_top_level_and_properties_values_are_one_version(spark, write_lines) -> None:
    directory = write_lines(
        "inv/a.jsonl",
        [{"id": f"{ns_id('contoso')}/queues/orders", "lockDuration": "PT1M", "properties": {"lockDuration": "PT1M"}}],
    )
    rows = read_inventory(spark, str(directory)).resources.collect()
    assert [(r.lockDuration, r.duplicates) for r in rows] == [("PT1M", 0)]


WRONG_TYPED = [
    {"properties": {"lockDuration": 60}},  # a number where ARM has a string
    {"properties": {"status": True}},
    {"properties": {"forwardTo": {"queue": "x"}}},
    {"lockDuration": 60},  # the flattened `az` shape
    {"name": 5},
    {"location": ["westeurope"]},
    {"tags": {"owner": 1}},
    {"properties": {"maxDeliveryCount": "10"}},  # a string where ARM has a number
    {"properties": {"requiresSession": "true"}},
    {"properties": {"maxDeliveryCount": 10.5}},
    {"properties": "none"},
]


def test_every_wrong_typed_record_is_quarantined(spark, write_lines) -> None:
    records = [{"id": f"{ns_id('contoso')}/queues/q{i}", **fields} for i, fields in enumerate(WRONG_TYPED)]
    records.append({"id": ns_id("contoso"), "sku": {"name": 1}})  # the SKU's name as a number
    records.append({"id": f"{ns_id('contoso')}/queues/good", "properties": {"lockDuration": "PT1M"}})
    inventory = read_inventory(spark, str(write_lines("inv/a.jsonl", records)))
    assert [r.entity for r in inventory.resources.collect()] == ["good"]
    quarantined = inventory.quarantine.collect()
    assert len(quarantined) == len(WRONG_TYPED) + 1
    assert {r.reason for r in quarantined} == {REASON_CORRUPT}
    named = [json.loads(r.record)["wrong_json_type"] for r in quarantined if r.record.startswith('{"wrong_json_type"')]
    assert ["properties.lockDuration"] in named and ["tags"] in named and ["sku.name"] in named


def test_the_secondary_backlog_count_tag_is_read_with_the_namespace(spark, write_lines) -> None:
    directory = write_lines(
        "inv/a.jsonl",
        [{"id": ns_id("contoso-dr"), "sku": {"name": "Standard"}, "tags": {contract.TAG_BACKLOG_QUEUE_COUNT: "5"}}],
    )
    [row] = read_inventory(spark, str(directory)).resources.collect()
    assert row.tags == {"pairedbus-backlog-queue-count": "5"}
