"""The offline render's plan and its JSON (what `pairedbus plan --json` writes and `--baseline` reads back)."""

from __future__ import annotations

import json

from pairedbus.plans.model import Plan, PlannedResource

QUEUE = "azure-native:servicebus:Queue"


def _queue(name: str, **extra) -> PlannedResource:
    return PlannedResource(
        urn=f"urn:pulumi:dev::pairedbus::{QUEUE}::{name}",
        type=QUEUE,
        name=name,
        inputs={"queueName": name, "enablePartitioning": True},
        custom=True,
        **extra,
    )


def test_a_resource_round_trips_through_json_with_tuples_as_lists() -> None:
    resource = _queue(
        "orders",
        parent="urn:pulumi:dev::pairedbus::pairedbus:index:NamespacePair::pair",
        dependencies=("urn:a", "urn:b"),
        property_dependencies={"namespaceName": ("urn:a",)},
        protect=True,
        retain_on_delete=True,
        aliases=12,
    )
    data = resource.to_json()
    assert data["dependencies"] == ["urn:a", "urn:b"]
    assert data["property_dependencies"] == {"namespaceName": ["urn:a"]}
    assert PlannedResource.from_json(json.loads(json.dumps(data))) == resource


def test_alias_specs_are_not_written_but_their_count_is() -> None:
    resource = _queue("orders", aliases=1, alias_specs=({"name": "old-orders"},))
    data = resource.to_json()
    assert "alias_specs" not in data and data["aliases"] == 1
    assert PlannedResource.from_json(data).alias_specs == ()


def test_alias_specs_read_from_json_are_copied_into_a_tuple() -> None:
    spec = {"name": "old-orders"}
    resource = PlannedResource.from_json({**_queue("orders").to_json(), "alias_specs": [spec]})
    assert resource.alias_specs == ({"name": "old-orders"},)
    spec["name"] = "changed"
    assert resource.alias_specs == ({"name": "old-orders"},)


def test_a_plan_says_it_is_an_offline_render_and_round_trips() -> None:
    plan = Plan("pairedbus", "dev", (_queue("orders"), _queue("invoices")), outputs={"primaryEndpoint": None})
    data = plan.to_json()
    assert data["offline_render"] is True
    assert "warnings" not in data  # written only when there are some
    assert Plan.from_json(json.loads(json.dumps(data))) == plan


def test_warnings_are_written_in_order_and_read_back() -> None:
    plan = Plan("pairedbus", "dev", (), warnings=("second pair shares a region", "no diagnostics"))
    data = plan.to_json()
    assert data["warnings"] == ["second pair shares a region", "no diagnostics"]
    assert Plan.from_json(data).warnings == plan.warnings


def test_a_minimal_document_reads_with_defaults() -> None:
    plan = Plan.from_json({"project": "p", "stack": "s", "resources": []})
    assert plan == Plan("p", "s", (), outputs={}, warnings=())


def test_lookups_by_urn_and_by_type() -> None:
    orders, invoices = _queue("orders"), _queue("invoices")
    topic = PlannedResource(urn="urn:t", type="azure-native:servicebus:Topic", name="events", inputs={}, custom=True)
    plan = Plan("pairedbus", "dev", (orders, topic, invoices))
    assert plan.by_urn()[invoices.urn] is invoices
    assert plan.of_type(QUEUE) == [orders, invoices]
    assert plan.of_type("azure-native:servicebus:Namespace") == []
