from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from azure.mgmt.servicebus import models
from azure.servicebus.management import QueueProperties

from pairedbus import contract, durations
from pairedbus.exports.inventory import export_inventory

from .conftest import SUBSCRIPTION, ns_id

B0, B1 = contract.backlog_queue_name("contoso", 0), contract.backlog_queue_name("contoso", 1)


def queue_properties(name: str, **values: object) -> QueueProperties:
    fields = dict.fromkeys(
        [
            "authorization_rules",
            "auto_delete_on_idle",
            "dead_lettering_on_message_expiration",
            "default_message_time_to_live",
            "duplicate_detection_history_time_window",
            "availability_status",
            "enable_batched_operations",
            "enable_express",
            "enable_partitioning",
            "lock_duration",
            "max_delivery_count",
            "max_size_in_megabytes",
            "requires_duplicate_detection",
            "requires_session",
            "status",
            "forward_to",
            "user_metadata",
            "forward_dead_lettered_messages_to",
            "max_message_size_in_kilobytes",
        ]
    )
    return QueueProperties(name, **(fields | values))


def management_client(mocker):
    client = mocker.MagicMock()
    client.namespaces.list.return_value = [
        models.SBNamespace(
            {
                "id": ns_id("contoso-dr"),
                "name": "contoso-dr",
                "type": "Microsoft.ServiceBus/Namespaces",
                "location": "northeurope",
                "sku": {"name": "Standard", "tier": "Standard"},
                "properties": {
                    "disableLocalAuth": True,
                    "serviceBusEndpoint": "https://contoso-dr.servicebus.windows.net:443/",
                },
            }
        )
    ]
    client.queues.list_by_namespace.return_value = [
        models.SBQueue(
            {"id": f"{ns_id('contoso-dr')}/queues/orders", "name": "orders", "properties": {"maxSizeInMegabytes": 1024}}
        ),
        # How ARM may show a backlog queue: the data plane's record replaces it.
        models.SBQueue(
            {
                "id": f"{ns_id('contoso-dr')}/queues/{B0.replace('/', '~')}",
                "name": B0.replace("/", "~"),
                "properties": {"maxSizeInMegabytes": 5120},
            }
        ),
    ]
    client.topics.list_by_namespace.return_value = [
        models.SBTopic({"id": f"{ns_id('contoso-dr')}/topics/events", "name": "events", "properties": {}})
    ]
    client.subscriptions.list_by_topic.return_value = [
        models.SBSubscription(
            {
                "id": f"{ns_id('contoso-dr')}/topics/events/subscriptions/audit",
                "name": "audit",
                "properties": {"maxDeliveryCount": 10},
            }
        )
    ]
    return client


def admin_factory(mocker, queues):
    admin = mocker.MagicMock()
    admin.__enter__.return_value = admin
    admin.list_queues.return_value = queues
    return mocker.Mock(return_value=admin), admin


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_export_writes_arm_resources_and_data_plane_backlog_queues(mocker, tmp_path: Path) -> None:
    client = management_client(mocker)
    factory, _admin = admin_factory(
        mocker,
        [
            queue_properties(
                B0,
                max_size_in_megabytes=5120,
                lock_duration=timedelta(minutes=1),
                max_delivery_count=contract.INT32_MAX,
                enable_batched_operations=True,
                default_message_time_to_live=durations.duration_timedelta(contract.TIMESPAN_MAX_ISO),
            ),
            queue_properties("orders", max_size_in_megabytes=1024),
        ],
    )

    result = export_inventory(
        SUBSCRIPTION, tmp_path, credential=object(), management_client=client, administration_client_factory=factory
    )

    records = read(tmp_path / f"{SUBSCRIPTION}.jsonl")
    assert [r["name"] for r in records] == ["contoso-dr", "orders", "events", "audit", B0]
    assert (result.namespaces, result.queues, result.topics, result.subscriptions, result.backlog_queues) == (
        1,
        1,
        1,
        1,
        1,
    )
    client.queues.list_by_namespace.assert_called_once_with("rg", "contoso-dr")
    client.subscriptions.list_by_topic.assert_called_once_with("rg", "contoso-dr", "events")
    assert factory.call_args.args[0] == "contoso-dr.servicebus.windows.net"
    backlog = records[-1]
    assert backlog["id"] == f"{ns_id('contoso-dr')}/queues/contoso~x-servicebus-transfer~0"
    assert backlog["type"] == "Microsoft.ServiceBus/Namespaces/Queues"
    assert backlog["properties"]["lockDuration"] == "PT1M"
    assert backlog["properties"]["maxDeliveryCount"] == contract.INT32_MAX
    assert durations.durations_equal(backlog["properties"]["defaultMessageTimeToLive"], contract.TIMESPAN_MAX_ISO)
    assert records[0]["sku"] == {"name": "Standard", "tier": "Standard"}
    assert records[0]["properties"]["disableLocalAuth"] is True


def test_data_plane_failure_keeps_the_backlog_queues_arm_shows(mocker, tmp_path: Path, capsys) -> None:
    client = management_client(mocker)
    factory, admin = admin_factory(mocker, [])
    admin.list_queues.side_effect = PermissionError("no data-plane role")

    result = export_inventory(
        SUBSCRIPTION, tmp_path, credential=object(), management_client=client, administration_client_factory=factory
    )

    assert result.data_plane_failures == {"contoso-dr": "PermissionError: no data-plane role"}
    assert read(tmp_path / f"{SUBSCRIPTION}.jsonl")[-1]["name"] == B0
    assert "contoso-dr: data plane not listed" in capsys.readouterr().err


def test_default_clients_are_built_from_the_subscription(mocker, tmp_path: Path) -> None:
    credential = mocker.patch("azure.identity.DefaultAzureCredential").return_value
    arm = mocker.patch("azure.mgmt.servicebus.ServiceBusManagementClient")
    arm.return_value = management_client(mocker)
    admin_class = mocker.patch("azure.servicebus.management.ServiceBusAdministrationClient")
    admin_class.return_value.__enter__.return_value.list_queues.return_value = []

    export_inventory(SUBSCRIPTION, tmp_path)

    arm.assert_called_once_with(credential, SUBSCRIPTION)
    admin_class.assert_called_once_with("contoso-dr.servicebus.windows.net", credential)


def test_export_carries_the_secondarys_backlog_count_tag_as_arm_returns_it(mocker, tmp_path: Path) -> None:
    # Issue 19 item 8: the component records the configured count on the secondary; the export
    # writes ARM's `tags` object as it comes, so the audit reads the count back from the inventory.
    client = management_client(mocker)
    tagged = client.namespaces.list.return_value[0].as_dict()
    tagged["tags"] = {"pairedbus-pair": "contoso", "pairedbus-role": "secondary", "pairedbus-backlog-queue-count": "5"}
    client.namespaces.list.return_value = [models.SBNamespace(tagged)]
    factory, _admin = admin_factory(mocker, [])

    export_inventory(
        SUBSCRIPTION, tmp_path, credential=object(), management_client=client, administration_client_factory=factory
    )

    namespace = read(tmp_path / f"{SUBSCRIPTION}.jsonl")[0]
    assert namespace["tags"][contract.TAG_BACKLOG_QUEUE_COUNT] == "5"
    assert contract.TAG_BACKLOG_QUEUE_COUNT == "pairedbus-backlog-queue-count"
