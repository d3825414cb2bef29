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
