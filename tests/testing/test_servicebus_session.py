"""Session receivers and their session (`testing/servicebus_session.py`): one session's messages in order, the next
available session, and what happens when a session lock ends."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from azure.servicebus import NEXT_AVAILABLE_SESSION, ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient
from azure.servicebus.exceptions import (
    OperationTimeoutError,
    ServiceBusError,
    SessionCannotBeLockedError,
    SessionLockLostError,
)

from pairedbus.testing import Namespace, ServiceBusWorld
from tests.load import guard


async def test_session_receiver_gets_only_its_session_in_order(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("orders", requires_session=True)
    async with client.get_queue_sender("orders") as sender:
        await sender.send_messages([ServiceBusMessage(f"{s}{i}", session_id=s) for i in range(3) for s in "ab"])
    async with client.get_queue_receiver("orders", session_id="b") as receiver:
        got = await receiver.receive_messages(max_message_count=10, max_wait_time=1)
        assert [str(m) for m in got] == ["b0", "b1", "b2"]
        assert all(m.session_id == "b" and m.locked_until_utc is None for m in got)
        assert receiver.session.session_id == "b"
        await receiver.session.set_state(b"progress")
        assert await receiver.session.get_state() == b"progress"


async def test_next_available_session_skips_locked_sessions(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("orders", requires_session=True)
    async with client.get_queue_sender("orders") as sender:
        await sender.send_messages([ServiceBusMessage(b"1", session_id="s1"), ServiceBusMessage(b"2", session_id="s2")])
    async with client.get_queue_receiver("orders", session_id=NEXT_AVAILABLE_SESSION) as first:
        async with client.get_queue_receiver("orders", session_id=NEXT_AVAILABLE_SESSION) as second:
            assert {first.session.session_id, second.session.session_id} == {"s1", "s2"}
        with pytest.raises(SessionCannotBeLockedError):
            async with client.get_queue_receiver("orders", session_id=first.session.session_id):
                pass


async def test_no_available_session_times_out(ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld) -> None:
    ns.create_queue("orders", requires_session=True)
    receiver = client.get_queue_receiver("orders", session_id=NEXT_AVAILABLE_SESSION, max_wait_time=5)
    opening = asyncio.create_task(receiver.__aenter__())
    await asyncio.sleep(0)
    world.clock.advance(5)
    with pytest.raises(OperationTimeoutError):
        await asyncio.wait_for(opening, guard(5))


async def test_session_lock_expiry_raises_session_lock_lost_and_releases_messages(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("orders", requires_session=True, lock_duration="PT30S")
    async with client.get_queue_sender("orders") as sender:
        await sender.send_messages(ServiceBusMessage(b"1", session_id="s"))
    async with client.get_queue_receiver("orders", session_id="s") as receiver:
        [message] = await receiver.receive_messages(max_wait_time=1)
        world.clock.advance(31)
        with pytest.raises(SessionLockLostError):
            await receiver.complete_message(message)
    async with client.get_queue_receiver("orders", session_id="s") as again:
        [redelivered] = await again.receive_messages(max_wait_time=1)
        assert redelivered.delivery_count == 1
        until = await again.session.renew_lock()
        assert until == world.clock.now() + timedelta(seconds=30)
        await again.complete_message(redelivered)


async def test_closing_a_session_receiver_releases_the_session(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("orders", requires_session=True)
    async with client.get_queue_sender("orders") as sender:
        await sender.send_messages(ServiceBusMessage(b"1", session_id="s"))
    async with client.get_queue_receiver("orders", session_id="s") as receiver:
        await receiver.receive_messages(max_wait_time=1)
    async with client.get_queue_receiver("orders", session_id=NEXT_AVAILABLE_SESSION) as next_one:
        [message] = await next_one.receive_messages(max_wait_time=1)
        assert message.session_id == "s" and message.delivery_count == 1


async def test_session_entities_refuse_sessionless_sends_and_receivers(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("orders", requires_session=True)
    async with client.get_queue_sender("orders") as sender:
        with pytest.raises(ServiceBusError, match="SessionId"):
            await sender.send_messages(ServiceBusMessage(b"x"))
    with pytest.raises(ServiceBusError):
        async with client.get_queue_receiver("orders"):
            pass


async def test_session_whose_lock_expired_is_offered_to_the_next_receiver(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("orders", requires_session=True, lock_duration="PT10S")
    async with client.get_queue_sender("orders") as sender:
        await sender.send_messages(ServiceBusMessage(b"1", session_id="s"))
    stalled = client.get_queue_receiver("orders", session_id="s")
    await stalled.receive_messages(max_wait_time=1)
    world.clock.advance(10)
    async with client.get_queue_receiver("orders", session_id=NEXT_AVAILABLE_SESSION) as next_one:
        [message] = await next_one.receive_messages(max_wait_time=1)
    assert (message.session_id, message.delivery_count) == ("s", 1)
    with pytest.raises(SessionLockLostError):
        await stalled.receive_messages(max_wait_time=1)


async def test_a_renewed_session_lock_moves_locked_until_and_state_is_stored_as_bytes(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("orders", requires_session=True, lock_duration=timedelta(seconds=30))
    async with client.get_queue_receiver("orders", session_id="s") as receiver:
        session = receiver.session
        opened = session.locked_until_utc
        assert opened == world.clock.now() + timedelta(seconds=30)
        world.clock.advance(10)
        renewed = await session.renew_lock()
        assert renewed == session.locked_until_utc == opened + timedelta(seconds=10)
        await session.set_state("checkpoint \u00e9")
        assert await session.get_state() == "checkpoint \u00e9".encode()
        await session.set_state(None)
        assert await session.get_state() is None
