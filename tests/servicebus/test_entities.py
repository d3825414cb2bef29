"""Queues, topics and subscriptions of the model (`servicebus/entities.py`): duplicate detection, time to live,
quotas, fan-out to subscriptions, forwarding and deletion."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from azure.servicebus import ServiceBusMessage, ServiceBusReceivedMessage, ServiceBusSubQueue
from azure.servicebus.aio import ServiceBusClient
from azure.servicebus.exceptions import MessageNotFoundError, MessagingEntityNotFoundError, ServiceBusQuotaExceededError

from pairedbus.servicebus import DEAD_LETTER_REASON_MAX_DELIVERY, DEAD_LETTER_REASON_TTL
from pairedbus.servicebus.content import BodyType, Content, Record
from pairedbus.servicebus.filters import CorrelationFilter, Rule, SqlFilter
from pairedbus.testing import Namespace, ServiceBusWorld
from tests.load import guard

from .conftest import FQDN, body


async def test_expired_message_is_dead_lettered_when_entity_asks_for_it(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q", dead_lettering_on_message_expiration=True)
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x", time_to_live=timedelta(seconds=10)))
    world.clock.advance(10)
    async with client.get_queue_receiver("q") as receiver:
        assert await receiver.receive_messages(max_wait_time=0.01) == []
    [dead] = ns.queue("q").dead_letters()
    assert dead.dead_letter_reason == DEAD_LETTER_REASON_TTL
    assert ns.queue("q").counts.expired == 1


async def test_expired_message_is_dropped_without_dead_lettering(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x", time_to_live=timedelta(seconds=10)))
        await sender.send_messages(ServiceBusMessage(b"keep"))
    world.clock.advance(11)
    async with client.get_queue_receiver("q") as receiver:
        [kept] = await receiver.receive_messages(max_message_count=5, max_wait_time=0.01)
    assert body(kept) == b"keep"
    assert ns.queue("q").dead_letters() == []


async def test_entity_default_ttl_caps_message_ttl(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q", default_message_time_to_live=timedelta(seconds=60))
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x", time_to_live=timedelta(hours=1)))
        await sender.send_messages(ServiceBusMessage(b"y"))
    async with client.get_queue_receiver("q") as receiver:
        got = await receiver.receive_messages(max_message_count=2, max_wait_time=1)
    assert [m.time_to_live for m in got] == [timedelta(seconds=60)] * 2


async def test_duplicate_message_id_is_dropped_within_the_window(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q", requires_duplicate_detection=True, duplicate_detection_history_time_window="PT1M")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"1", message_id="same"))
        await sender.send_messages(ServiceBusMessage(b"2", message_id="same"))
        world.clock.advance(60)
        await sender.send_messages(ServiceBusMessage(b"3", message_id="same"))
    assert [str(m) for m in ns.queue("q").active_messages()] == ["1", "3"]
    assert ns.queue("q").counts.duplicates_dropped == 1


async def test_duplicates_are_kept_without_duplicate_detection(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(
            [ServiceBusMessage(b"1", message_id="same"), ServiceBusMessage(b"2", message_id="same")]
        )
    assert len(ns.queue("q").active_messages()) == 2


async def test_topic_fans_out_to_matching_subscriptions(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_topic("events")
    ns.create_subscription("events", "all")
    red = ns.create_subscription("events", "red")
    red.rules.remove("$Default")
    red.rules.add(Rule("red", SqlFilter("color = 'red'")))
    audit = ns.create_subscription("events", "audit")
    audit.rules.remove("$Default")
    audit.rules.add(Rule("audit", CorrelationFilter(subject="audit")))
    async with client.get_topic_sender("events") as sender:
        await sender.send_messages(
            [
                ServiceBusMessage(b"1", application_properties={"color": "red"}),
                ServiceBusMessage(b"2", application_properties={"color": "blue"}, subject="audit"),
            ]
        )
    async with client.get_subscription_receiver("events", "all") as receiver:
        assert [body(m) for m in await receiver.receive_messages(5, max_wait_time=1)] == [b"1", b"2"]
    assert [str(m) for m in ns.subscription("events", "red").active_messages()] == ["1"]
    assert [str(m) for m in ns.subscription("events", "audit").active_messages()] == ["2"]


async def test_subscription_copies_settle_independently(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_topic("events")
    ns.create_subscription("events", "a")
    ns.create_subscription("events", "b")
    async with client.get_topic_sender("events") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))
    async with client.get_subscription_receiver("events", "a") as receiver:
        [message] = await receiver.receive_messages(max_wait_time=1)
        await receiver.complete_message(message)
    assert ns.subscription("events", "a").message_counts()["active"] == 0
    assert ns.subscription("events", "b").message_counts()["active"] == 1


async def test_entity_quota_raises_quota_exceeded(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q", max_size_in_megabytes=1024)
    chunk = b"x" * 250_000
    async with client.get_queue_sender("q") as sender:
        for _ in range(1024 * 1024 * 1024 // 250_100):
            await sender.send_messages(ServiceBusMessage(chunk))
        with pytest.raises(ServiceBusQuotaExceededError):
            await sender.send_messages(ServiceBusMessage(chunk))


async def test_partitioned_standard_queue_holds_sixteen_times_its_size(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q", max_size_in_megabytes=1024, enable_partitioning=True)
    chunk = b"x" * 250_000
    async with client.get_queue_sender("q") as sender:
        for _ in range(1024 * 1024 * 1024 // 250_000 + 10):
            await sender.send_messages(ServiceBusMessage(chunk))
    assert ns.reported_size_in_megabytes(ns.queue("q")) == 1024 * 16


async def test_deleting_a_queue_fails_its_waiting_receivers(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_receiver("q") as receiver:
        waiting = asyncio.create_task(receiver.receive_messages(max_wait_time=600))
        await asyncio.sleep(0)
        ns.delete("q")
        with pytest.raises(MessagingEntityNotFoundError):
            await asyncio.wait_for(waiting, guard(5))
        ns.create_queue("q")
        with pytest.raises(MessagingEntityNotFoundError):
            await receiver.receive_messages(max_wait_time=0.01)


async def test_topic_schedules_are_cancelled_in_every_subscription(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_topic("events")
    ns.create_subscription("events", "a")
    ns.create_subscription("events", "b")
    async with client.get_topic_sender("events") as sender:
        [seq] = await sender.schedule_messages(ServiceBusMessage(b"x"), world.clock.now() + timedelta(minutes=1))
        assert ns.subscription("events", "a").message_counts()["scheduled"] == 1
        await sender.cancel_scheduled_messages(seq)
        with pytest.raises(MessageNotFoundError):
            await sender.cancel_scheduled_messages(seq)
    world.clock.advance(120)
    assert all(ns.subscription("events", s).message_counts()["active"] == 0 for s in "ab")


async def test_subscription_dead_letter_sub_queue(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_topic("events")
    ns.create_subscription("events", "s", max_delivery_count=1)
    async with client.get_topic_sender("events") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))
    async with client.get_subscription_receiver("events", "s") as receiver:
        [message] = await receiver.receive_messages(max_wait_time=1)
        await receiver.abandon_message(message)
    async with client.get_subscription_receiver("events", "s", sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dlq:
        [dead] = await dlq.receive_messages(max_wait_time=1)
    assert dead.dead_letter_reason == DEAD_LETTER_REASON_MAX_DELIVERY


async def test_auto_forwarding_moves_messages_and_dead_letters(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("sink")
    ns.create_queue("dead-sink")
    ns.create_queue("q", forward_dead_lettered_messages_to="dead-sink", max_delivery_count=1)
    ns.create_topic("events")
    ns.create_subscription("events", "to-sink", forward_to="sink")
    async with client.get_topic_sender("events") as sender:
        await sender.send_messages(ServiceBusMessage(b"routed"))
    assert [str(m) for m in ns.queue("sink").active_messages()] == ["routed"]
    assert ns.subscription("events", "to-sink").message_counts()["active"] == 0
    async with client.get_queue_sender("q") as sender, client.get_queue_receiver("q") as receiver:
        await sender.send_messages(ServiceBusMessage(b"poison"))
        [message] = await receiver.receive_messages(max_wait_time=1)
        await receiver.abandon_message(message)
    assert [str(m) for m in ns.queue("dead-sink").active_messages()] == ["poison"]
    assert ns.queue("q").dead_letters() == []


async def test_the_inspection_helpers_return_records_unless_a_front_end_presents_them(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x", message_id="m-1"))
    [peeked] = ns.queue("q").active_messages()  # mock_servicebus presents them as the SDK's messages
    assert isinstance(peeked, ServiceBusReceivedMessage) and peeked.message_id == "m-1"
    bare = ServiceBusWorld()  # the model alone
    bare.namespace(FQDN).create_queue("q").accept([Content(BodyType.DATA, (b"y",))], 0.0)
    [record] = bare.namespace(FQDN).queue("q").active_messages()
    assert isinstance(record, Record) and record.content.body == (b"y",)
