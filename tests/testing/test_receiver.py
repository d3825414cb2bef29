"""The fake ServiceBusReceiver (`testing/receiver.py`): receiving, waiting, settling, renewing locks and peeking,
as the SDK's receiver does them."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from azure.servicebus import ServiceBusMessage, ServiceBusReceiveMode
from azure.servicebus.aio import AutoLockRenewer, ServiceBusClient
from azure.servicebus.exceptions import MessageAlreadySettled, MessageLockLostError

from pairedbus.testing import Namespace, ServiceBusWorld
from tests.load import guard

from .conftest import FQDN, Credential, body


async def test_receive_respects_max_message_count(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages([ServiceBusMessage(str(i)) for i in range(5)])
    async with client.get_queue_receiver("q") as receiver:
        assert len(await receiver.receive_messages(max_message_count=3, max_wait_time=1)) == 3
        assert len(await receiver.receive_messages(max_message_count=3, max_wait_time=1)) == 2


async def test_waiting_receiver_is_woken_by_a_send(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_receiver("q") as receiver, client.get_queue_sender("q") as sender:
        waiting = asyncio.create_task(receiver.receive_messages(max_wait_time=600))
        await asyncio.sleep(0)
        assert not waiting.done()
        await sender.send_messages(ServiceBusMessage(b"wake"))
        [got] = await asyncio.wait_for(waiting, guard(5))
    assert body(got) == b"wake"


async def test_empty_receive_ends_when_the_frozen_clock_passes_max_wait_time(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q")
    async with client.get_queue_receiver("q") as receiver:
        waiting = asyncio.create_task(receiver.receive_messages(max_wait_time=900))
        await asyncio.sleep(0)
        world.clock.advance(899)
        await asyncio.sleep(0)
        assert not waiting.done()
        world.clock.advance(1)
        assert await asyncio.wait_for(waiting, guard(5)) == []


async def test_renew_message_lock_extends_the_lock(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q", lock_duration="PT30S")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))
    async with client.get_queue_receiver("q") as receiver:
        [message] = await receiver.receive_messages(max_wait_time=1)
        world.clock.advance(20)
        until = await receiver.renew_message_lock(message)
        assert until == world.clock.now() + timedelta(seconds=30)
        assert message.locked_until_utc == until
        world.clock.advance(20)  # past the original lock, within the renewed one
        assert await receiver.receive_messages(max_wait_time=0.01) == []
        await receiver.complete_message(message)
    assert ns.queue("q").counts.renewals == 1
    assert ns.queue("q").counts.completes == 1


async def test_renewing_a_lost_lock_raises_message_lock_lost(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q", lock_duration="PT30S")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))
    async with client.get_queue_receiver("q") as receiver:
        [message] = await receiver.receive_messages(max_wait_time=1)
        world.clock.advance(31)
        with pytest.raises(MessageLockLostError) as caught:
            await receiver.renew_message_lock(message)
    assert caught.value._retryable is False


async def test_auto_lock_renewer_keeps_a_short_lock_alive(ns: Namespace, world: ServiceBusWorld) -> None:
    world.clock.unfreeze()  # the SDK's renewer reads the real clock
    ns.create_queue("q", lock_duration="PT5S")
    renewer = AutoLockRenewer(max_lock_renewal_duration=60)
    async with ServiceBusClient(FQDN, Credential()) as client:
        async with client.get_queue_sender("q") as sender:
            await sender.send_messages(ServiceBusMessage(b"x"))
        async with client.get_queue_receiver("q", auto_lock_renewer=renewer) as receiver:
            [message] = await receiver.receive_messages(max_wait_time=1)
            first_until = message.locked_until_utc
            for _ in range(200):
                if ns.queue("q").counts.renewals:
                    break
                await asyncio.sleep(0.05)
            assert ns.queue("q").counts.renewals >= 1
            assert message.locked_until_utc > first_until
            await receiver.complete_message(message)
    await renewer.close()


async def test_abandon_makes_message_available_again(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages([ServiceBusMessage(b"1"), ServiceBusMessage(b"2")])
    async with client.get_queue_receiver("q") as receiver:
        [first] = await receiver.receive_messages(max_wait_time=1)
        await receiver.abandon_message(first)
        with pytest.raises(MessageAlreadySettled):
            await receiver.complete_message(first)
        [again] = await receiver.receive_messages(max_wait_time=1)
    assert body(again) == b"1" and again.delivery_count == 1


async def test_dead_letter_message_keeps_reason_and_description(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"bad"))
    async with client.get_queue_receiver("q") as receiver:
        [message] = await receiver.receive_messages(max_wait_time=1)
        await receiver.dead_letter_message(message, reason="TTLExpiredInBacklog", error_description="too late")
    [dead] = ns.queue("q").dead_letters()
    assert (dead.dead_letter_reason, dead.dead_letter_error_description) == ("TTLExpiredInBacklog", "too late")
    assert ns.queue("q").counts.dead_letters == 1


async def test_receive_and_delete_removes_at_once_and_cannot_settle(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))
    async with client.get_queue_receiver("q", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as receiver:
        [message] = await receiver.receive_messages(max_wait_time=1)
        assert message.lock_token is None and message.locked_until_utc is None
        with pytest.raises(ValueError, match="RECEIVE_AND_DELETE"):
            await receiver.complete_message(message)
    assert ns.queue("q").message_counts()["active"] == 0


async def test_peek_does_not_lock_or_count_deliveries(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages([ServiceBusMessage(b"1"), ServiceBusMessage(b"2")])
    async with client.get_queue_receiver("q") as receiver:
        peeked = await receiver.peek_messages(max_message_count=5)
        assert [body(m) for m in peeked] == [b"1", b"2"]
        with pytest.raises(ValueError, match="peeked"):
            await receiver.complete_message(peeked[0])
        [first] = await receiver.receive_messages(max_wait_time=1)
    assert first.delivery_count == 0


async def test_peek_continues_from_the_last_peeked_sequence_number(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages([ServiceBusMessage(str(i)) for i in range(5)])
    async with client.get_queue_receiver("q") as receiver:
        first = await receiver.peek_messages(2)
        second = await receiver.peek_messages(2)
        from_start = await receiver.peek_messages(1, sequence_number=1)
    assert [m.sequence_number for m in first + second] == [1, 2, 3, 4]
    assert from_start[0].sequence_number == 1


async def test_iterating_a_receiver_yields_messages_until_max_wait_time(
    ns: Namespace, client: ServiceBusClient
) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages([ServiceBusMessage(str(i)) for i in range(3)])
    async with client.get_queue_receiver("q", max_wait_time=0.01) as receiver:
        seen = []
        async for message in receiver:
            seen.append(str(message))
            await receiver.complete_message(message)
    assert seen == ["0", "1", "2"]
