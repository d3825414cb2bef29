"""The ARM plane served from the same world as the data plane (issue 12, item 6).

Resource shapes are checked through the real `azure-mgmt-servicebus` client and models: the fake
only answers HTTP, so deserialization, paging, the LRO poller and error mapping are the SDK's.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.mgmt.servicebus import ServiceBusManagementClient
from azure.mgmt.servicebus.aio import ServiceBusManagementClient as AsyncServiceBusManagementClient
from azure.mgmt.servicebus.models import SBNamespace, SBQueue, SBQueueProperties, SBSku, SBSubscription
from azure.servicebus import ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient

from pairedbus.testing import ServiceBusWorld
from pairedbus.testing.arm import DEFAULT_RESOURCE_GROUP, DEFAULT_SUBSCRIPTION_ID
from tests.testing.conftest import FQDN, Credential

SUB = DEFAULT_SUBSCRIPTION_ID
RG = DEFAULT_RESOURCE_GROUP
NS = "primary-ns"


async def test_entities_made_on_the_data_plane_are_seen_through_arm(world: ServiceBusWorld) -> None:
    ns = world.namespace(FQDN)
    ns.create_queue("contoso/x-servicebus-transfer/0")
    ns.create_topic("orders")
    ns.create_subscription("orders", "audit")
    async with (
        ServiceBusClient(FQDN, Credential()) as client,
        client.get_queue_sender("contoso/x-servicebus-transfer/0") as sender,
    ):
        await sender.send_messages([ServiceBusMessage("a"), ServiceBusMessage("b")])
    arm = ServiceBusManagementClient(Credential(), SUB)
    [queue] = list(arm.queues.list_by_namespace(RG, NS))
    assert queue.name == "contoso~x-servicebus-transfer~0"  # ARM shows '/' as '~'
    assert queue.type == "Microsoft.ServiceBus/Namespaces/Queues"
    assert queue.id == (
        f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.ServiceBus/namespaces/{NS}"
        "/queues/contoso~x-servicebus-transfer~0"
    )
    assert queue.properties.count_details.active_message_count == 2
    assert queue.properties.lock_duration == timedelta(minutes=1)
    assert queue.as_dict()["properties"]["lockDuration"] == "PT1M"
    same = arm.queues.get(RG, NS, "contoso~x-servicebus-transfer~0")
    assert same.as_dict()["properties"]["countDetails"]["activeMessageCount"] == 2
    assert [t.name for t in arm.topics.list_by_namespace(RG, NS)] == ["orders"]
    assert [s.name for s in arm.subscriptions.list_by_topic(RG, NS, "orders")] == ["audit"]
    [namespace] = list(arm.namespaces.list())
    assert (namespace.name, namespace.sku.name) == (NS, "Standard")
    assert namespace.properties.service_bus_endpoint == f"https://{FQDN}:443/"


async def test_entities_made_through_arm_are_used_on_the_data_plane(world: ServiceBusWorld) -> None:
    arm = ServiceBusManagementClient(Credential(), SUB)
    arm.namespaces.begin_create_or_update(
        RG, NS, SBNamespace(location="northeurope", sku=SBSku(name="Standard"))
    ).result()
    arm.queues.create_or_update(RG, NS, "jobs", SBQueue(properties=SBQueueProperties(lock_duration="PT30S")))
    assert world.namespace(FQDN).queue("jobs").settings.values["lock_duration"] == timedelta(seconds=30)
    async with ServiceBusClient(FQDN, Credential()) as client:
        async with client.get_queue_sender("jobs") as sender:
            await sender.send_messages(ServiceBusMessage("x"))
        async with client.get_queue_receiver("jobs", max_wait_time=1) as receiver:
            [message] = await receiver.receive_messages()
            assert message.locked_until_utc - message.enqueued_time_utc == timedelta(seconds=30)
    arm.queues.delete(RG, NS, "jobs")
    assert "jobs" not in world.namespace(FQDN).entities
    assert arm.namespaces.get(RG, NS).location == "northeurope"
    arm.namespaces.begin_delete(RG, NS).result()
    assert list(arm.namespaces.list()) == []


def test_arm_errors_are_the_sdks(world: ServiceBusWorld) -> None:
    world.namespace(FQDN).create_topic("orders")
    arm = ServiceBusManagementClient(Credential(), SUB)
    with pytest.raises(ResourceNotFoundError) as missing_queue:
        arm.queues.get(RG, NS, "nope")
    assert missing_queue.value.status_code == 404
    assert missing_queue.value.error.code == "NotFound"
    with pytest.raises(ResourceNotFoundError) as missing_namespace:
        arm.namespaces.get(RG, "other-ns")
    assert missing_namespace.value.error.code == "ResourceNotFound"
    with pytest.raises(HttpResponseError) as refused:
        arm.queues.create_or_update(RG, NS, "q", SBQueue(properties=SBQueueProperties(lock_duration="PT1S")))
    assert refused.value.status_code == 400 and refused.value.error.code == "BadRequest"
    with pytest.raises(ResourceNotFoundError):
        arm.subscriptions.get(RG, NS, "orders", "nope")
    arm.subscriptions.create_or_update(RG, NS, "orders", "audit", SBSubscription())
    assert "audit" in world.namespace(FQDN).topic("orders").subscriptions


async def test_the_aio_client_reads_the_same_world(world: ServiceBusWorld) -> None:
    world.namespace(FQDN).create_queue("a/b")
    async with AsyncServiceBusManagementClient(Credential(), SUB) as arm:
        names = [q.name async for q in arm.queues.list_by_namespace(RG, NS)]
        got = await arm.queues.get(RG, NS, "a~b")
    assert names == ["a~b"]
    assert got.properties.count_details.active_message_count == 0
