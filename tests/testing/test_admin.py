"""Both admin clients return the SDK's models with service defaults and raise the admin errors."""

from __future__ import annotations

from datetime import timedelta

import pytest
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.servicebus import ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient
from azure.servicebus.aio.management import ServiceBusAdministrationClient as AsyncAdmin
from azure.servicebus.management import (
    QueueProperties,
    QueueRuntimeProperties,
    ServiceBusAdministrationClient,
    SqlRuleFilter,
    TopicProperties,
)

from pairedbus import contract, durations
from pairedbus.testing import Namespace, ServiceBusWorld

from .conftest import FQDN, Credential

BACKLOG = contract.backlog_queue_name("contoso", 3)
TIMESPAN_MAX = durations.duration_timedelta(contract.TIMESPAN_MAX_ISO)


async def test_aio_create_queue_returns_service_defaults(world: ServiceBusWorld) -> None:
    async with AsyncAdmin(FQDN, Credential()) as admin:
        queue = await admin.create_queue(BACKLOG)
    assert isinstance(queue, QueueProperties)
    assert queue.name == BACKLOG
    assert queue.max_size_in_megabytes == 1024
    assert queue.lock_duration == timedelta(minutes=1)
    assert queue.max_delivery_count == 10
    assert queue.default_message_time_to_live == TIMESPAN_MAX
    assert queue.auto_delete_on_idle == TIMESPAN_MAX
    assert queue.dead_lettering_on_message_expiration is False
    assert queue.enable_batched_operations is True
    assert queue.requires_session is False
    assert queue.status == "Active"


async def test_aio_create_queue_accepts_iso_strings_and_timedeltas(world: ServiceBusWorld) -> None:
    properties = {contract.ARM_TO_SDK_QUEUE_FIELD[k]: v for k, v in contract.BACKLOG_QUEUE_PROPERTIES.items()}
    async with AsyncAdmin(FQDN, Credential()) as admin:
        await admin.create_queue(BACKLOG, **properties)
        await admin.create_queue("plain", lock_duration=timedelta(seconds=45))
        queue = await admin.get_queue(BACKLOG)
        plain = await admin.get_queue("plain")
    for arm, expected in contract.BACKLOG_QUEUE_PROPERTIES.items():
        assert contract.backlog_value_matches(arm, expected, getattr(queue, contract.ARM_TO_SDK_QUEUE_FIELD[arm]))
    assert plain.lock_duration == timedelta(seconds=45)


async def test_aio_errors_are_azure_core_resource_errors(world: ServiceBusWorld) -> None:
    async with AsyncAdmin(FQDN, Credential()) as admin:
        await admin.create_queue("q")
        with pytest.raises(ResourceExistsError):
            await admin.create_queue("q")
        with pytest.raises(ResourceNotFoundError):
            await admin.get_queue("missing")
        with pytest.raises(ResourceNotFoundError):
            await admin.delete_queue("missing")
        with pytest.raises(HttpResponseError):
            await admin.create_queue("bad-lock", lock_duration=timedelta(minutes=6))


async def test_aio_update_list_and_delete_queues(world: ServiceBusWorld) -> None:
    async with AsyncAdmin(FQDN, Credential()) as admin:
        for i in range(3):
            await admin.create_queue(contract.backlog_queue_name("contoso", i))
        queue = await admin.get_queue(contract.backlog_queue_name("contoso", 1))
        queue.max_delivery_count = contract.INT32_MAX
        await admin.update_queue(queue)
        assert (await admin.get_queue(queue.name)).max_delivery_count == contract.INT32_MAX
        await admin.delete_queue(contract.backlog_queue_name("contoso", 0))
        names = [q.name async for q in admin.list_queues()]
        with pytest.raises(HttpResponseError):
            queue.requires_session = True
            await admin.update_queue(queue)
    assert names == [contract.backlog_queue_name("contoso", 1), contract.backlog_queue_name("contoso", 2)]


async def test_aio_runtime_properties_count_active_dead_letter_and_scheduled(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages([ServiceBusMessage(b"1"), ServiceBusMessage(b"2")])
        await sender.schedule_messages(ServiceBusMessage(b"3"), world.clock.now() + timedelta(hours=1))
    async with client.get_queue_receiver("q") as receiver:
        [message] = await receiver.receive_messages(max_wait_time=1)
        await receiver.dead_letter_message(message, reason="r")
    async with AsyncAdmin(FQDN, Credential()) as admin:
        runtime = await admin.get_queue_runtime_properties("q")
        listed = [r async for r in admin.list_queues_runtime_properties()]
    assert isinstance(runtime, QueueRuntimeProperties)
    assert (runtime.active_message_count, runtime.dead_letter_message_count, runtime.scheduled_message_count) == (
        1,
        1,
        1,
    )
    assert runtime.total_message_count == 3
    assert runtime.size_in_bytes > 0
    assert [r.name for r in listed] == ["q"]


async def test_aio_topics_subscriptions_and_rules(ns: Namespace, client: ServiceBusClient) -> None:
    async with AsyncAdmin(FQDN, Credential()) as admin:
        topic = await admin.create_topic("events")
        assert isinstance(topic, TopicProperties)
        assert topic.default_message_time_to_live == TIMESPAN_MAX
        sub = await admin.create_subscription("events", "red", max_delivery_count=5)
        assert (sub.max_delivery_count, sub.lock_duration) == (5, timedelta(minutes=1))
        await admin.delete_rule("events", "red", "$Default")
        await admin.create_rule("events", "red", "only-red", filter=SqlRuleFilter("color = 'red'"))
        assert [r.name async for r in admin.list_rules("events", "red")] == ["only-red"]
        with pytest.raises(ResourceExistsError):
            await admin.create_subscription("events", "red")
        with pytest.raises(HttpResponseError):
            await admin.create_rule("events", "red", "broken", filter=SqlRuleFilter("color = = 'red'"))
        async with client.get_topic_sender("events") as sender:
            await sender.send_messages(
                [
                    ServiceBusMessage(b"r", application_properties={"color": "red"}),
                    ServiceBusMessage(b"b", application_properties={"color": "blue"}),
                ]
            )
        runtime = await admin.get_subscription_runtime_properties("events", "red")
        topic_runtime = await admin.get_topic_runtime_properties("events")
        assert [s.name async for s in admin.list_subscriptions("events")] == ["red"]
    assert runtime.active_message_count == 1
    assert topic_runtime.subscription_count == 1


def test_sync_admin_twin_creates_lists_and_deletes(world: ServiceBusWorld) -> None:
    conn = f"Endpoint=sb://{FQDN}/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=abc="
    with ServiceBusAdministrationClient.from_connection_string(conn) as admin:
        admin.create_queue(BACKLOG, max_size_in_megabytes=5120, default_message_time_to_live=contract.TIMESPAN_MAX_ISO)
        with pytest.raises(ResourceExistsError):
            admin.create_queue(BACKLOG)
        queue = admin.get_queue(BACKLOG)
        assert queue.max_size_in_megabytes == 5120
        assert queue.default_message_time_to_live == TIMESPAN_MAX
        assert [q.name for q in admin.list_queues()] == [BACKLOG]
        assert admin.get_queue_runtime_properties(BACKLOG).active_message_count == 0
        admin.delete_queue(BACKLOG)
        with pytest.raises(ResourceNotFoundError):
            admin.get_queue(BACKLOG)
    assert world.namespace(FQDN).queues() == []


def test_admin_operations_honour_injected_faults(world: ServiceBusWorld) -> None:
    from azure.servicebus.exceptions import ServiceBusServerBusyError

    world.fail(FQDN)
    admin = ServiceBusAdministrationClient(FQDN, Credential())
    with pytest.raises(ServiceBusServerBusyError):
        admin.create_queue("q")
    world.heal(FQDN)
    admin.create_queue("q")


async def test_a_listing_fetched_lazily_raises_the_sdks_error_too(world: ServiceBusWorld) -> None:
    from azure.servicebus.exceptions import ServiceBusServerBusyError

    world.fail(FQDN)  # the fault fires when the pager fetches its page, after list_queues returned
    with pytest.raises(ServiceBusServerBusyError):
        list(ServiceBusAdministrationClient(FQDN, Credential()).list_queues())
    async with AsyncAdmin(FQDN, Credential()) as admin:
        with pytest.raises(ServiceBusServerBusyError):
            [queue async for queue in admin.list_topics()]


async def test_partitioned_queue_reports_its_size_summed_over_partitions(world: ServiceBusWorld) -> None:
    world.namespace(FQDN, sku=contract.SKU_PREMIUM, messaging_partitions=2)
    async with AsyncAdmin(FQDN, Credential()) as admin:
        created = await admin.create_queue(BACKLOG, max_size_in_megabytes=5120)
        assert created.enable_partitioning is True  # every entity is partitioned there
        assert created.max_size_in_megabytes == 5120 * contract.PARTITIONS_PER_ENTITY[contract.SKU_PREMIUM]
        created.max_delivery_count = 3
        await admin.update_queue(created)  # carrying the reported size back keeps the configured one
        assert world.namespace(FQDN).queue(BACKLOG).settings.values["max_size_in_megabytes"] == 5120
        with pytest.raises(HttpResponseError):
            await admin.create_queue("odd-size", max_size_in_megabytes=1500)


def test_standard_namespace_allows_one_hundred_partitioned_entities(world: ServiceBusWorld) -> None:
    admin = ServiceBusAdministrationClient(FQDN, Credential())
    for i in range(contract.MAX_PARTITIONED_ENTITIES_PER_STANDARD_NAMESPACE):
        admin.create_queue(f"p{i}", enable_partitioning=True)
    assert admin.get_queue("p0").max_size_in_megabytes == 1024 * contract.PARTITIONS_PER_ENTITY[contract.SKU_STANDARD]
    with pytest.raises(HttpResponseError):
        admin.create_topic("one-too-many", enable_partitioning=True)
    admin.create_queue("not-partitioned")
