"""The sender learns from the primary's refusals (issue 21, item 4): a "SessionId was not set"
refusal sets the entity's session fact, and a failed-over send right after the client starts waits
for the metadata read instead of parking a message the syphon could only dead-letter."""

from __future__ import annotations

import asyncio

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.exceptions import ServiceBusCommunicationError, ServiceBusError

from pairedbus.sender.errors import SessionRequiredError, is_session_id_refusal
from pairedbus.testing.admin import AsyncServiceBusAdministrationClient

from .conftest import PRIMARY, QUEUE, SESSION_QUEUE, parked

#: The service's wording, as the fake and the real primary give it.
REFUSAL = (
    "The SessionId was not set on a message, and it cannot be sent to the entity. Entities that have session "
    "support enabled can only receive messages that have the SessionId set to a valid value."
)


@pytest.fixture
def metadata_gate(monkeypatch):
    """The queue's metadata read waits until the test sets the returned event."""
    opened = asyncio.Event()
    original = AsyncServiceBusAdministrationClient.get_queue

    async def gated(self, queue_name, **kwargs):
        await opened.wait()
        return await original(self, queue_name, **kwargs)

    monkeypatch.setattr(AsyncServiceBusAdministrationClient, "get_queue", gated)
    return opened


def test_the_primarys_session_refusal_is_recognised_by_its_wording_and_nothing_else():
    assert is_session_id_refusal(ServiceBusError(REFUSAL))
    assert is_session_id_refusal(ServiceBusError(REFUSAL, condition=b"amqp:not-allowed"))
    assert not is_session_id_refusal(ServiceBusError("The message size exceeds the limit"))
    assert not is_session_id_refusal(ValueError(REFUSAL))  # not from the service
    assert not is_session_id_refusal(ServiceBusError(REFUSAL, retryable=True))  # a retry could help: not a fact
    assert not is_session_id_refusal(SessionRequiredError(SESSION_QUEUE, "m-1"))  # our own, not the primary's


async def test_the_primarys_session_refusal_sets_the_session_fact(world, make_client, metadata_unreadable):
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(SESSION_QUEUE)
        assert (await client.entity_facts(SESSION_QUEUE)).requires_session is None  # metadata unreadable
        assert client.stats.metadata_unavailable == 1
        with pytest.raises(ServiceBusError, match="SessionId was not set") as on_primary:
            await sender.send_messages(ServiceBusMessage(b"no session"))
        assert (await client.entity_facts(SESSION_QUEUE)).requires_session is True

        world.fail(PRIMARY, SESSION_QUEUE, ServiceBusCommunicationError)
        await sender.send_messages(ServiceBusMessage(b"parked", session_id="cart-1"))
        assert sender.switched
        with pytest.raises(type(on_primary.value)) as while_switched:
            await sender.send_messages(ServiceBusMessage(b"no session"))
        assert "SessionId was not set" in str(while_switched.value)  # the primary's words
        assert not while_switched.value._retryable
        assert client.stats.refused_while_switched == 1
    assert len(parked(world)) == 1


async def test_other_refusals_of_the_primary_teach_no_session_fact(world, make_client, metadata_unreadable):
    world.fail(PRIMARY, SESSION_QUEUE, lambda: ServiceBusError("The message was refused: quota"), times=1)
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(SESSION_QUEUE)
        with pytest.raises(ServiceBusError, match="quota"):
            await sender.send_messages(ServiceBusMessage(b"x", session_id="s"))
        assert (await client.entity_facts(SESSION_QUEUE)).requires_session is None


async def test_a_send_right_after_start_waits_for_the_metadata_and_is_refused_not_parked(world, make_client):
    # The primary fails once: with no failover interval the very first send switches the queue,
    # before the client's metadata read (started with the sender) has run.
    world.fail(PRIMARY, SESSION_QUEUE, ServiceBusCommunicationError, times=1)
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(SESSION_QUEUE)
        with pytest.raises(ServiceBusError, match="SessionId was not set"):
            await sender.send_messages(ServiceBusMessage(b"no session"))
        assert sender.switched
        assert client.stats.metadata_waits == 1
        assert client.stats.refused_while_switched == 1
        await sender.send_messages(ServiceBusMessage(b"with session", session_id="cart-1"))
    assert [b"".join(m.body) for m in parked(world)] == [b"with session"]


async def test_a_failed_over_send_waits_while_the_metadata_read_is_under_way(world, make_client, metadata_gate):
    world.fail(PRIMARY, SESSION_QUEUE, ServiceBusCommunicationError, times=1)
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(SESSION_QUEUE)
        send = asyncio.create_task(sender.send_messages(ServiceBusMessage(b"no session")))
        for _ in range(20):
            await asyncio.sleep(0)
        assert sender.switched and not send.done()  # waiting for the read, nothing parked
        assert parked(world) == []
        metadata_gate.set()
        with pytest.raises(SessionRequiredError):
            await send
    assert parked(world) == []


async def test_a_plain_queue_waits_for_its_metadata_then_parks(world, make_client, metadata_gate):
    world.fail(PRIMARY, QUEUE, ServiceBusCommunicationError, times=1)
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(QUEUE)
        send = asyncio.create_task(sender.send_messages(ServiceBusMessage(b"plain")))
        for _ in range(20):
            await asyncio.sleep(0)
        assert not send.done()
        metadata_gate.set()
        await send
        assert (await client.entity_facts(QUEUE)).requires_session is False
    assert [b"".join(m.body) for m in parked(world)] == [b"plain"]


async def test_the_wait_for_the_metadata_is_bounded_by_the_send_timeout(world, make_client, metadata_gate):
    # The read never finishes: after the send's timeout the message is parked as before (the fact
    # stays unknown, so nothing is refused), and the read is not cancelled by the sender.
    world.fail(PRIMARY, SESSION_QUEUE, ServiceBusCommunicationError, times=1)
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(SESSION_QUEUE)
        await sender.send_messages(ServiceBusMessage(b"no session"), timeout=0.01)
        assert client.stats.metadata_waits == 1
        assert not client._learning[next(iter(client._learning))].done()
        metadata_gate.set()
        assert (await client.entity_facts(SESSION_QUEUE)).requires_session is True
    assert len(parked(world)) == 1


async def test_messages_with_session_ids_and_known_facts_never_wait(world, make_client, metadata_gate):
    world.fail(PRIMARY, SESSION_QUEUE, ServiceBusCommunicationError)
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(SESSION_QUEUE)
        await sender.send_messages(ServiceBusMessage(b"a", session_id="s"))  # has a session id
        stated = client.get_queue_sender(SESSION_QUEUE, requires_session=True)  # the caller states it
        with pytest.raises(SessionRequiredError):
            await stated.send_messages(ServiceBusMessage(b"no session"))
        assert client.stats.metadata_waits == 0
        metadata_gate.set()
    assert len(parked(world)) == 1


async def test_a_topic_never_waits_for_a_session_fact_its_metadata_cannot_give(world, make_client, metadata_gate):
    world.fail(PRIMARY, "events", ServiceBusCommunicationError)
    async with make_client(failover_interval=0) as client:
        await client.get_topic_sender("events").send_messages(ServiceBusMessage(b"t"))
        assert client.stats.metadata_waits == 0
        metadata_gate.set()
    assert len(parked(world)) == 1
