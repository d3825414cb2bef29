"""One scenario suite, two front-ends on the same model: the in-process fake (`mock_servicebus`,
the SDK's client classes replaced) and the wire (`Emulator`, the unmodified SDK over a socket).
Each scenario asserts what a caller observes — exception type and `retryable`, delivery counts,
dead-letter reasons, ordering, sequence numbers — and must hold on both. Where they disagreed, the
wire with the real SDK was taken as right and the fake fixed (docs/emulator.md lists each)."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import azure.servicebus.aio
import pytest
from azure.core.credentials import AzureNamedKeyCredential
from azure.servicebus import NEXT_AVAILABLE_SESSION, ServiceBusMessage, ServiceBusSubQueue
from azure.servicebus.exceptions import (
    MessageLockLostError,
    MessageNotFoundError,
    MessageSizeExceededError,
    MessagingEntityNotFoundError,
    ServiceBusServerBusyError,
)

from pairedbus import sdk
from pairedbus.emulator import Emulator
from pairedbus.servicebus.world import Namespace, ServiceBusWorld
from pairedbus.testing import mock_servicebus

pytestmark = pytest.mark.timeout(120)

FQDN = "primary.servicebus.windows.net"


@dataclass
class Bus:
    front_end: str
    world: ServiceBusWorld
    ns: Namespace
    make: Callable[[], Any]

    def client(self) -> Any:
        return self.make()


@pytest.fixture(params=["in-process", "wire"])
async def bus(request: pytest.FixtureRequest) -> AsyncIterator[Bus]:
    if request.param == "in-process":
        with mock_servicebus() as world:
            ns = world.namespace(FQDN)
            credential = AzureNamedKeyCredential("k", "v")
            # looked up at call time: the patch has replaced the class in the SDK's module
            yield Bus("in-process", world, ns, lambda: azure.servicebus.aio.ServiceBusClient(FQDN, credential))
    else:
        async with Emulator(["primary"], admin=False) as emulator:
            conn = emulator.connection_string("primary")
            yield Bus(
                "wire",
                emulator.world,
                emulator.namespace("primary"),
                lambda: azure.servicebus.aio.ServiceBusClient.from_connection_string(conn, retry_total=0),
            )


async def _send(bus: Bus, queue: str, *messages: ServiceBusMessage) -> None:
    async with bus.client() as sb, sb.get_queue_sender(queue) as sender:
        await sender.send_messages(list(messages))


async def test_sequence_numbers_order_and_first_delivery(bus: Bus) -> None:
    bus.ns.create_queue("q")
    await _send(bus, "q", *(ServiceBusMessage(f"m{i}", application_properties={"n": i, "s": "x"}) for i in range(3)))
    async with bus.client() as sb, sb.get_queue_receiver("q") as receiver:
        messages = await receiver.receive_messages(max_message_count=3, max_wait_time=5)
        observed = [(str(m), m.sequence_number, m.delivery_count, m.application_properties) for m in messages]
        for m in messages:
            await receiver.complete_message(m)
    assert observed == [(f"m{i}", i + 1, 0, {b"n": i, b"s": b"x"}) for i in range(3)]


async def test_abandon_counts_a_delivery_and_max_delivery_dead_letters(bus: Bus) -> None:
    bus.ns.create_queue("q", max_delivery_count=2)
    await _send(bus, "q", ServiceBusMessage("x"))
    counts = []
    async with bus.client() as sb:
        async with sb.get_queue_receiver("q") as receiver:
            for _ in range(2):
                (m,) = await receiver.receive_messages(max_wait_time=5)
                counts.append(m.delivery_count)
                await receiver.abandon_message(m)
        async with sb.get_queue_receiver("q", sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dlq:
            (dead,) = await dlq.receive_messages(max_wait_time=5)
            observed = (dead.dead_letter_reason, dead.dead_letter_error_description, dead.delivery_count)
    assert counts == [0, 1]
    assert observed == ("MaxDeliveryCountExceeded", "Message could not be consumed after 2 delivery attempts.", 2)


async def test_dead_letter_keeps_its_reason_and_description(bus: Bus) -> None:
    bus.ns.create_queue("q")
    await _send(bus, "q", ServiceBusMessage("x"))
    async with bus.client() as sb:
        async with sb.get_queue_receiver("q") as receiver:
            (m,) = await receiver.receive_messages(max_wait_time=5)
            await receiver.dead_letter_message(m, reason="r", error_description="d")
        async with sb.get_queue_receiver("q", sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dlq:
            (dead,) = await dlq.receive_messages(max_wait_time=5)
    assert (dead.dead_letter_reason, dead.dead_letter_error_description) == ("r", "d")


async def test_a_missing_entity(bus: Bus) -> None:
    async with bus.client() as sb:
        with pytest.raises(MessagingEntityNotFoundError) as caught:
            async with sb.get_queue_sender("nope") as sender:
                await sender.send_messages(ServiceBusMessage("x"))
    assert sdk.is_retryable(caught.value) is False


async def test_a_message_over_the_limit(bus: Bus) -> None:
    bus.ns.create_queue("q")
    async with bus.client() as sb, sb.get_queue_sender("q") as sender:
        with pytest.raises(MessageSizeExceededError) as caught:
            await sender.send_messages(ServiceBusMessage("x" * 300_000))
    assert sdk.is_retryable(caught.value) is False


async def test_an_injected_server_busy_is_retryable(bus: Bus) -> None:
    bus.ns.create_queue("q")
    async with bus.client() as sb, sb.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage("warm"))  # the link is up before the fault
        bus.world.fail(FQDN, "q", ServiceBusServerBusyError)
        with pytest.raises(ServiceBusServerBusyError) as caught:
            await sender.send_messages(ServiceBusMessage("x"), timeout=20)
    assert sdk.is_retryable(caught.value) is True


async def test_a_lock_that_ran_out_is_lost_and_the_message_back(bus: Bus) -> None:
    bus.ns.create_queue("q")
    await _send(bus, "q", ServiceBusMessage("x"))
    async with bus.client() as sb, sb.get_queue_receiver("q") as receiver:
        (m,) = await receiver.receive_messages(max_wait_time=5)
        bus.world.clock.advance(61)
        with pytest.raises(MessageLockLostError):
            await receiver.complete_message(m)
        (again,) = await receiver.receive_messages(max_wait_time=5)
        assert again.delivery_count == 1
        await receiver.complete_message(again)


async def test_schedule_numbers_and_cancelling_a_missing_one(bus: Bus) -> None:
    bus.ns.create_queue("q")
    when = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    async with bus.client() as sb, sb.get_queue_sender("q") as sender:
        numbers = await sender.schedule_messages([ServiceBusMessage("a"), ServiceBusMessage("b")], when)
        await sender.cancel_scheduled_messages(numbers)
        with pytest.raises(MessageNotFoundError):
            await sender.cancel_scheduled_messages(numbers[0])
    assert numbers == [1, 2]
    assert bus.ns.queue("q").message_counts()["scheduled"] == 0


async def test_peek_shows_without_locking_and_defer_sets_aside(bus: Bus) -> None:
    bus.ns.create_queue("q")
    await _send(bus, "q", *(ServiceBusMessage(f"m{i}") for i in range(3)))
    async with bus.client() as sb, sb.get_queue_receiver("q") as receiver:
        peeked = await receiver.peek_messages(max_message_count=10)
        (first, *_) = await receiver.receive_messages(max_message_count=3, max_wait_time=5)
        await receiver.defer_message(first)
        (deferred,) = await receiver.receive_deferred_messages([first.sequence_number])
        await receiver.complete_message(deferred)
    assert [(str(m), m.sequence_number, m.delivery_count) for m in peeked] == [("m0", 1, 0), ("m1", 2, 0), ("m2", 3, 0)]
    assert str(deferred) == "m0"


async def test_the_next_available_session_and_its_state(bus: Bus) -> None:
    bus.ns.create_queue("s", requires_session=True)
    await _send(bus, "s", ServiceBusMessage("a", session_id="one"), ServiceBusMessage("b", session_id="two"))
    async with bus.client() as sb:
        async with sb.get_queue_receiver("s", session_id=NEXT_AVAILABLE_SESSION, max_wait_time=5) as receiver:
            first = receiver.session.session_id
            await receiver.session.set_state(b"st")
            state = await receiver.session.get_state()
            (m,) = await receiver.receive_messages(max_wait_time=5)
            await receiver.complete_message(m)
    assert (first, state, str(m), m.session_id) == ("one", b"st", "a", "one")


async def test_receive_and_delete_removes_on_delivery(bus: Bus) -> None:
    from azure.servicebus import ServiceBusReceiveMode

    bus.ns.create_queue("q")
    await _send(bus, "q", ServiceBusMessage("x"))
    async with bus.client() as sb:
        receiver = sb.get_queue_receiver("q", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE)
        async with receiver:
            (m,) = await receiver.receive_messages(max_wait_time=5)
    await asyncio.sleep(0)
    assert (str(m), m.lock_token, bus.ns.queue("q").message_counts()["active"]) == ("x", None, 0)
