"""The message store of a queue or subscription (`testing/store.py`): delivery in order under locks, redelivery,
the max delivery count, schedules and deferral."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from azure.servicebus import ServiceBusMessage, ServiceBusSubQueue
from azure.servicebus.aio import ServiceBusClient
from azure.servicebus.exceptions import MessageLockLostError

from pairedbus.servicebus import DEAD_LETTER_REASON_MAX_DELIVERY
from pairedbus.testing import Namespace, ServiceBusWorld
from tests.load import guard

from .conftest import body


async def test_expired_lock_redelivers_with_delivery_count_incremented(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q", lock_duration=timedelta(seconds=30))
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))
    async with client.get_queue_receiver("q") as receiver:
        [first] = await receiver.receive_messages(max_wait_time=1)
        world.clock.advance(29)
        assert ns.queue("q").message_counts()["active"] == 1
        world.clock.advance(1)
        [again] = await receiver.receive_messages(max_wait_time=1)
        assert again.sequence_number == first.sequence_number
        assert again.delivery_count == 1
        with pytest.raises(MessageLockLostError):
            await receiver.complete_message(first)
        await receiver.complete_message(again)
    assert ns.queue("q").message_counts()["active"] == 0


async def test_locked_message_is_skipped_by_other_receivers(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages([ServiceBusMessage(b"1"), ServiceBusMessage(b"2")])
    async with client.get_queue_receiver("q") as one, client.get_queue_receiver("q") as two:
        [a] = await one.receive_messages(max_wait_time=1)
        [b] = await two.receive_messages(max_wait_time=1)
        assert (body(a), body(b)) == (b"1", b"2")


async def test_max_delivery_count_dead_letters_with_reason(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q", max_delivery_count=3)
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"poison", message_id="p"))
    async with client.get_queue_receiver("q") as receiver:
        for expected_count in range(3):
            [message] = await receiver.receive_messages(max_wait_time=1)
            assert message.delivery_count == expected_count
            await receiver.abandon_message(message)
        assert await receiver.receive_messages(max_wait_time=0.01) == []
    async with client.get_queue_receiver("q", sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dlq:
        [dead] = await dlq.receive_messages(max_wait_time=1)
        assert dead.message_id == "p"
        assert dead.dead_letter_reason == DEAD_LETTER_REASON_MAX_DELIVERY
        assert dead.dead_letter_error_description == "Message could not be consumed after 3 delivery attempts."
        await dlq.complete_message(dead)
    assert ns.queue("q").message_counts() == {"active": 0, "dead_letter": 0, "scheduled": 0, "deferred": 0}


async def test_update_queue_properties_loses_locks(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))
    async with client.get_queue_receiver("q") as receiver:
        [message] = await receiver.receive_messages(max_wait_time=1)
        queue = ns.queue("q")
        queue.settings.update({"max_delivery_count": 20})
        queue.settings_changed()
        with pytest.raises(MessageLockLostError):
            await receiver.complete_message(message)
        [again] = await receiver.receive_messages(max_wait_time=1)
    assert again.delivery_count == 1


async def test_scheduled_message_appears_at_its_time_and_can_be_cancelled(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q")
    due = world.clock.now() + timedelta(minutes=5)
    async with client.get_queue_sender("q") as sender:
        [keep] = await sender.schedule_messages(ServiceBusMessage(b"later"), due)
        [drop] = await sender.schedule_messages(ServiceBusMessage(b"never"), due)
        await sender.cancel_scheduled_messages(drop)
        await sender.send_messages(ServiceBusMessage(b"also", scheduled_enqueue_time_utc=due))
    queue = ns.queue("q")
    assert queue.message_counts()["scheduled"] == 2
    async with client.get_queue_receiver("q") as receiver:
        assert await receiver.receive_messages(max_wait_time=0.01) == []
        world.clock.advance(timedelta(minutes=5))
        got = await receiver.receive_messages(max_message_count=5, max_wait_time=1)
    assert got[0].sequence_number == keep
    assert [body(m) for m in got] == [b"later", b"also"]
    assert got[0].scheduled_enqueue_time_utc == due
    assert got[0].enqueued_time_utc == due


async def test_waiting_receiver_wakes_when_a_schedule_comes_due(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.schedule_messages(ServiceBusMessage(b"later"), world.clock.now() + timedelta(seconds=30))
    async with client.get_queue_receiver("q") as receiver:
        waiting = asyncio.create_task(receiver.receive_messages(max_wait_time=60))
        await asyncio.sleep(0)
        world.clock.advance(30)
        [got] = await asyncio.wait_for(waiting, guard(5))
    assert body(got) == b"later"


async def test_deferred_message_is_received_by_sequence_number(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))
    async with client.get_queue_receiver("q") as receiver:
        [message] = await receiver.receive_messages(max_wait_time=1)
        await receiver.defer_message(message)
        assert await receiver.receive_messages(max_wait_time=0.01) == []
        [deferred] = await receiver.receive_deferred_messages([message.sequence_number])
        await receiver.complete_message(deferred)
    assert ns.queue("q").deferred_messages() == []


def test_a_partitioned_sequence_number_carries_its_fragment_in_the_top_16_bits() -> None:
    # https://learn.microsoft.com/azure/service-bus-messaging/message-sequencing
    from pairedbus.servicebus.store import partition_for_key, partition_of

    assert partition_of((3 << 48) | 12345) == 3 and partition_of(12345) == 0
    fragments = {partition_for_key(f"key-{i}", 4) for i in range(100)}
    assert fragments == {0, 1, 2, 3}  # every fragment used
    # stable across processes (CRC-32, not Python's salted str hash): a key pins to the same fragment every run
    assert (partition_for_key("orders-42", 4), partition_for_key("orders-43", 4)) == (0, 2)
