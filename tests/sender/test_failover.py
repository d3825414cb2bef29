"""The per-entity failover state machine on the fake: no "sent" while failed over for a message
the primary would refuse, pings bounded by the operation timeout, not the ping interval."""

from __future__ import annotations

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.exceptions import (
    MessagingEntityNotFoundError,
    ServiceBusCommunicationError,
    ServiceBusError,
)

from .conftest import PRIMARY, QUEUE, SESSION_QUEUE, parked


async def test_while_failed_over_a_session_queue_refuses_a_message_without_session_id(world, make_client):
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(SESSION_QUEUE)
        facts = await client.entity_facts(SESSION_QUEUE)  # read from the queue's metadata
        assert facts.requires_session is True
        # What the healthy primary does with it:
        with pytest.raises(ServiceBusError) as on_primary:
            await sender.send_messages(ServiceBusMessage(b"no session"))
        world.fail(PRIMARY, error=ServiceBusCommunicationError)
        await sender.send_messages(ServiceBusMessage(b"parked", session_id="cart-1"))
        assert sender.switched
        with pytest.raises(type(on_primary.value)) as while_switched:
            await sender.send_messages(ServiceBusMessage(b"no session"))
        assert not while_switched.value._retryable
        assert "requires sessions" in str(while_switched.value)
        assert client.stats.refused_while_switched == 1
    assert len(parked(world)) == 1  # only the message with a session id


async def test_a_caller_can_state_that_a_queue_requires_sessions(world, make_client):
    world.fail(PRIMARY, error=ServiceBusCommunicationError)  # metadata unreadable too
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(SESSION_QUEUE, requires_session=True)
        await client.entity_facts(SESSION_QUEUE)
        assert client.stats.metadata_unavailable == 1
        await sender.send_messages(ServiceBusMessage(b"parked", session_id="s"))
        with pytest.raises(ServiceBusError, match="requires sessions"):
            await sender.send_messages(ServiceBusMessage(b"no session"))
    assert len(parked(world)) == 1


async def test_a_plain_queue_still_parks_messages_without_session_id(world, make_client):
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(QUEUE)
        assert (await client.entity_facts(QUEUE)).requires_session is False
        world.fail(PRIMARY, error=ServiceBusCommunicationError)
        await sender.send_messages(ServiceBusMessage(b"a"))
        await sender.send_messages(ServiceBusMessage(b"b"))
    assert len(parked(world)) == 2


async def test_a_destination_deleted_during_the_outage_is_not_parked_once_a_ping_says_so(world, make_client, gate):
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(QUEUE)
        world.fail(PRIMARY, error=ServiceBusCommunicationError)
        await sender.send_messages(ServiceBusMessage(b"parked before the deletion"))
        world.namespace(PRIMARY).delete(QUEUE)
        world.heal(PRIMARY)
        await gate.release()  # the ping: the primary answers "not found"
        assert not sender.switched
        with pytest.raises(MessagingEntityNotFoundError):
            await sender.send_messages(ServiceBusMessage(b"never told sent"))
        assert client.stats.pings_sent == 0
    assert len(parked(world)) == 1


async def test_an_entity_known_missing_is_refused_while_failed_over(world, make_client):
    world.namespace(PRIMARY).create_queue("doomed")
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender("doomed")
        await sender.send_messages(ServiceBusMessage(b"healthy"))
        world.fail(PRIMARY, error=ServiceBusCommunicationError)
        await sender.send_messages(ServiceBusMessage(b"parked"))
        sender._failover.facts.exists = False  # as a ping or the metadata would have learned
        with pytest.raises(MessagingEntityNotFoundError):
            await sender.send_messages(ServiceBusMessage(b"refused"))
    assert len(parked(world)) == 1


async def test_a_ping_is_bounded_by_the_operation_timeout_not_the_ping_interval(world, make_client, gate):
    async with make_client(failover_interval=0, ping_primary_interval=1) as client:
        sender = client.get_queue_sender(QUEUE)
        world.fail(PRIMARY, error=ServiceBusCommunicationError)
        await sender.send_messages(ServiceBusMessage(b"x"))
        world.heal(PRIMARY)
        # A primary that answers in 1.2 s: slower than the 1 s ping interval, well within the
        # 60 s operation timeout. A ping timed out at its interval would never succeed.
        world.namespace(PRIMARY).latency = 1.2
        await gate.release()
        for _ in range(300):
            if not sender.switched:
                break
            await __import__("asyncio").sleep(0.01)
        assert not sender.switched
        assert client.stats.pings_sent == 1 and client.stats.pings_failed == 0


async def test_a_failover_closed_while_a_send_was_in_flight_switches_without_starting_pings():
    # The client closes its failovers last; a send already awaiting the primary may still fail
    # after that, and must not leave a ping task behind that nobody cancels.
    from datetime import timedelta

    from pairedbus.sender.failover import EntityFailover, EntityKind, FailoverStats
    from pairedbus.sender.failover_clock import FailoverClock

    async def never(*args):
        raise AssertionError("no ping after close")

    failover = EntityFailover(
        QUEUE, EntityKind.QUEUE, FailoverClock(timedelta(0)), FailoverStats(), ping=never, ping_interval=1, sleep=never
    )
    await failover.close()
    assert failover.failed(ServiceBusCommunicationError(message="down")) is True
    assert failover.switched is True and failover.ping_task is None
