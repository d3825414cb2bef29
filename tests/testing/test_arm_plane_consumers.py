"""The project's ARM consumers running on the world instead of hand-built MagicMocks (issue 12, item 6):
the inventory and metrics exports and the backlog provider's SAS path (the syphon's discovery is tested
beside it, in tests/syphon/test_backlog_directory.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from azure.core.exceptions import ResourceNotFoundError

from pairedbus import contract
from pairedbus.exports.inventory import export_inventory
from pairedbus.testing import ServiceBusWorld
from pairedbus.testing.arm import DEFAULT_SUBSCRIPTION_ID
from tests.testing.conftest import Credential

PRIMARY = "contoso.servicebus.windows.net"
SECONDARY = "contoso-dr.servicebus.windows.net"
SUB = "11111111-2222-3333-4444-555555555555"


def _place(world: ServiceBusWorld, fqdn: str, group: str) -> None:
    ns = world.namespace(fqdn)
    ns.subscription_id, ns.resource_group, ns.location = SUB, group, "westeurope"


def test_the_inventory_export_reads_arm_and_the_data_plane_of_the_world(world: ServiceBusWorld, tmp_path: Path) -> None:
    _place(world, PRIMARY, "prod")
    _place(world, SECONDARY, "dr-group")
    world.namespace("elsewhere.servicebus.windows.net")  # another subscription: not exported
    primary = world.namespace(PRIMARY)
    primary.create_queue("orders", max_delivery_count=7)
    primary.create_topic("events")
    primary.create_subscription("events", "audit")
    backlog = contract.backlog_queue_names("contoso", 2)
    for name in backlog:
        world.namespace(SECONDARY).create_queue(name)
    result = export_inventory(SUB, tmp_path, credential=Credential())
    records = [json.loads(line) for line in result.path.read_text().splitlines()]
    by_type: dict[str, list[dict]] = {}
    for record in records:
        by_type.setdefault(record["type"], []).append(record)
    assert sorted(r["name"] for r in by_type["Microsoft.ServiceBus/Namespaces"]) == ["contoso", "contoso-dr"]
    queues = by_type["Microsoft.ServiceBus/Namespaces/Queues"]
    orders = next(q for q in queues if q["name"] == "orders")
    assert orders["properties"]["maxDeliveryCount"] == 7
    assert orders["id"].endswith("/resourceGroups/prod/providers/Microsoft.ServiceBus/namespaces/contoso/queues/orders")
    assert sorted(q["name"] for q in queues if "/" in q["name"]) == sorted(backlog)  # from the data plane, with '/'
    assert [t["name"] for t in by_type["Microsoft.ServiceBus/Namespaces/Topics"]] == ["events"]
    assert [s["name"] for s in by_type["Microsoft.ServiceBus/Namespaces/Topics/Subscriptions"]] == ["audit"]
    assert (result.namespaces, result.queues, result.topics, result.subscriptions, result.backlog_queues) == (
        2,
        1,
        1,
        1,
        2,
    )
    assert result.data_plane_failures == {}
    assert DEFAULT_SUBSCRIPTION_ID != SUB


def test_the_metrics_export_finds_its_namespaces_and_regions_through_arm(
    world: ServiceBusWorld, tmp_path: Path
) -> None:
    from datetime import UTC, datetime, timedelta
    from unittest.mock import MagicMock

    from pairedbus.exports.metrics import export_metrics

    _place(world, PRIMARY, "prod")
    _place(world, SECONDARY, "dr-group")
    world.namespace(SECONDARY).location = "northeurope"
    metrics = MagicMock()
    metrics.__enter__.return_value = metrics
    metrics.query_resources.return_value = []
    endpoints: list[str] = []

    def factory(endpoint: str, credential: object) -> MagicMock:  # Azure Monitor is not part of the fake
        endpoints.append(endpoint)
        return metrics

    since = datetime(2026, 11, 18, tzinfo=UTC)
    result = export_metrics(
        SUB,
        tmp_path,
        since=since,
        until=since + timedelta(hours=1),
        credential=Credential(),
        metrics_client_factory=factory,
    )
    assert result.namespaces == 2
    assert sorted(endpoints) == [
        "https://northeurope.metrics.monitor.azure.com",
        "https://westeurope.metrics.monitor.azure.com",
    ]
    queried = {rid for call in metrics.query_resources.call_args_list for rid in call.kwargs["resource_ids"]}
    assert queried == {
        f"/subscriptions/{SUB}/resourceGroups/prod/providers/Microsoft.ServiceBus/namespaces/contoso",
        f"/subscriptions/{SUB}/resourceGroups/dr-group/providers/Microsoft.ServiceBus/namespaces/contoso-dr",
    }


def test_the_backlog_providers_sas_path_reads_the_key_through_arm(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    import azure.identity

    from pairedbus.iac.backlog_provider import DataPlaneAuth

    monkeypatch.setattr(azure.identity, "DefaultAzureCredential", Credential)  # nothing may probe the network
    _place(world, SECONDARY, "dr-group")
    world.namespace(SECONDARY).create_queue("contoso/x-servicebus-transfer/0")
    auth = DataPlaneAuth(mode="sas", resource_group_name="dr-group", subscription_id=SUB)
    with auth.admin_client("contoso-dr") as admin:
        assert [q.name for q in admin.list_queues()] == ["contoso/x-servicebus-transfer/0"]
    with pytest.raises(ResourceNotFoundError) as wrong_group:
        DataPlaneAuth(mode="sas", resource_group_name="elsewhere", subscription_id=SUB).admin_client("contoso-dr")
    assert wrong_group.value.error.code == "ResourceNotFound"
