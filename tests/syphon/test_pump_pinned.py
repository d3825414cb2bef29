"""The pump's ordering and stopping, pinned through the syphon's public behaviour (issue 22): keyed
messages to one destination wait for each other's sends, unkeyed ones overlap, and a halted pump
leaves a backing-off destination's messages locked instead of sleeping out the back-off."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.amqp import AmqpMessageBodyType
from azure.servicebus.exceptions import ServiceBusServerBusyError

from pairedbus import contract
from pairedbus.pairing.backoff import BackoffPolicy
from pairedbus.pairing.connections import ConnectionPair
from pairedbus.servicebus.world import ServiceBusWorld
from pairedbus.syphon.context import SyphonContext
from pairedbus.syphon.health import Health
from pairedbus.syphon.in_flight import InFlightBudget
from pairedbus.syphon.options import SyphonOptions
from pairedbus.syphon.pump import BacklogPump, _body_bytes
from pairedbus.syphon.stats import SyphonStats
from pairedbus.testing import aio_client
from tests.load import guard

from .helpers import PRIMARY, SECONDARY, backlog_depth, bodies, create_backlog_queues, eventually, make_syphon, park


class Sends:
    """The primary's sends, each held until the test lets it go; and the backlog receives seen."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        #: Sends to the primary begun (each a batch of one receive's messages for one destination).
        self.started = 0
        self.received = 0
        self.release = asyncio.Event()
        real_send = aio_client.ServiceBusSender.send_messages
        real_receive = aio_client.ServiceBusReceiver.receive_messages
        sends = self

        async def held_send(sender: Any, message: Any, **kwargs: Any) -> None:
            if sender.fully_qualified_namespace == PRIMARY:
                sends.started += 1
                await sends.release.wait()
            await real_send(sender, message, **kwargs)

        async def counted_receive(receiver: Any, *args: Any, **kwargs: Any) -> Any:
            messages = await real_receive(receiver, *args, **kwargs)
            sends.received += len(messages)
            return messages

        monkeypatch.setattr(aio_client.ServiceBusSender, "send_messages", held_send)
        monkeypatch.setattr(aio_client.ServiceBusReceiver, "receive_messages", counted_receive)


async def settle_turns(n: int = 50) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


async def test_keyed_messages_to_one_destination_wait_for_the_send_before_them(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_backlog_queues(world, 1)
    carts = world.namespace(PRIMARY).create_queue("carts", requires_session=True)
    sends = Sends(monkeypatch)
    stop = asyncio.Event()
    async with make_syphon(world) as syphon:
        running = asyncio.create_task(syphon.run(stop))
        await park("carts", ServiceBusMessage(b"first", session_id="cart-1"))
        await eventually(lambda: sends.started == 1)  # held on the wire
        await park("carts", ServiceBusMessage(b"second", session_id="cart-1"))  # a later receive
        await eventually(lambda: sends.received == 2)
        await settle_turns()
        assert sends.started == 1  # its key-mate's send is not acknowledged yet: it waits
        sends.release.set()
        await eventually(lambda: syphon.stats.moved == 2)
        stop.set()
        await asyncio.wait_for(running, guard(10))
    assert [b"".join(m.body) for m in carts.active_messages()] == [b"first", b"second"]
    assert backlog_depth(world) == 0


async def test_unkeyed_messages_to_one_destination_are_sent_side_by_side(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_backlog_queues(world, 1)
    orders = world.namespace(PRIMARY).create_queue("orders")
    sends = Sends(monkeypatch)
    stop = asyncio.Event()
    async with make_syphon(world) as syphon:
        running = asyncio.create_task(syphon.run(stop))
        await park("orders", ServiceBusMessage(b"a"))
        await eventually(lambda: sends.started == 1)  # held on the wire
        await park("orders", ServiceBusMessage(b"b"))  # a later receive of the same queue
        # Both sends start while neither is acknowledged: no order to keep, no lock taken.
        await eventually(lambda: sends.started == 2)
        sends.release.set()
        await eventually(lambda: syphon.stats.moved == 2)
        stop.set()
        await asyncio.wait_for(running, guard(10))
    assert bodies(orders) == [b"a", b"b"]


async def test_a_halted_pump_leaves_a_backing_off_destination_locked_instead_of_sleeping(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_backlog_queues(world, 1)
    world.namespace(PRIMARY).create_queue("orders")
    await park("orders", ServiceBusMessage(b"a"), ServiceBusMessage(b"b"))
    stop = asyncio.Event()
    real_send = aio_client.ServiceBusSender.send_messages

    async def stop_then_busy(sender: Any, message: Any, **kwargs: Any) -> None:
        if sender.fully_qualified_namespace != PRIMARY:
            return await real_send(sender, message, **kwargs)
        stop.set()  # the syphon is told to stop while this send is on the wire ...
        await settle_turns(10)
        raise ServiceBusServerBusyError(message="busy")  # ... and it fails: the destination backs off

    monkeypatch.setattr(aio_client.ServiceBusSender, "send_messages", stop_then_busy)
    # A back-off of 40 s, slept in place (under retry_hold, itself under the backlog's 1 min lock)
    # unless the pump is halted.
    options = {
        "backoff_initial": timedelta(seconds=40),
        "backoff_max": timedelta(seconds=45),
        "retry_hold": timedelta(seconds=50),
    }
    async with make_syphon(world, **options) as syphon:
        running = asyncio.create_task(syphon.run(stop))
        await asyncio.wait_for(running, guard(10))  # not 40 s
        assert syphon.stats.left_locked == 2
        assert syphon.stats.moved == 0 and syphon.stats.dead_lettered == 0
    assert backlog_depth(world) == 2  # redelivered when their locks lapse


# --- pinned by the re-measure after the head-of-line rewrite (issue 22, seed 22) ----------------


def primary_send_failing(monkeypatch: pytest.MonkeyPatch, error: Any, *, times: int | None = None) -> list[Any]:
    """The primary's sends raise `error` (the first `times` of them, or all); returns what was tried."""
    real_send = aio_client.ServiceBusSender.send_messages
    tried: list[Any] = []

    async def failing(sender: Any, message: Any, **kwargs: Any) -> None:
        if sender.fully_qualified_namespace != PRIMARY:
            return await real_send(sender, message, **kwargs)
        tried.append(message)
        if times is None or len(tried) <= times:
            raise error()
        await real_send(sender, message, **kwargs)

    monkeypatch.setattr(aio_client.ServiceBusSender, "send_messages", failing)
    return tried


async def test_every_back_off_waited_in_place_is_counted_as_a_retry(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_backlog_queues(world, 1)
    orders = world.namespace(PRIMARY).create_queue("orders")
    await park("orders", ServiceBusMessage(b"a"))
    tried = primary_send_failing(monkeypatch, lambda: ServiceBusServerBusyError(message="busy"), times=3)
    # Back-offs long enough to be read before they lapse, short enough to be waited out in place.
    options = {
        "backoff_initial": timedelta(milliseconds=300),
        "backoff_max": timedelta(milliseconds=300),
        "retry_hold": timedelta(seconds=5),
    }
    async with make_syphon(world, **options) as syphon:
        stats = await syphon.drain()
    assert len(tried) == 4  # three refusals, then the send that went through
    assert stats.retries == 3  # one per back-off slept out, not just "at least one"
    assert stats.moved == 1 and stats.left_locked == 0
    assert bodies(orders) == [b"a"]


async def test_a_lone_message_the_primary_refuses_for_good_is_dead_lettered_with_the_refusal(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    from azure.servicebus.exceptions import ServiceBusError

    from pairedbus.syphon.pump import DEAD_LETTER_SEND_REJECTED

    create_backlog_queues(world, 1)
    orders = world.namespace(PRIMARY).create_queue("orders")
    await park("orders", ServiceBusMessage(b"refused"))
    primary_send_failing(monkeypatch, lambda: ServiceBusError("the entity refused it", condition="amqp:invalid-field"))
    async with make_syphon(world) as syphon:
        stats = await syphon.drain()
    backlog = world.namespace(SECONDARY).queue(contract.backlog_queue_name("contoso-primary", 0))
    (dead,) = backlog.dead_letters()
    assert dead.dead_letter_reason == DEAD_LETTER_SEND_REJECTED == "SendRejected"
    assert (
        dead.dead_letter_error_description
        == "ServiceBusError: the entity refused it Error condition: amqp:invalid-field."
    )
    assert stats.dead_lettered == 1 and stats.moved == 0
    assert orders.active_messages() == []


async def test_a_lone_message_too_large_for_the_primary_is_dead_lettered_with_the_error(
    world: ServiceBusWorld,
) -> None:
    # Alone in its receive, the message is the delivery's only unit (sent on its own, not beside others).
    world.namespace(SECONDARY, sku=contract.SKU_PREMIUM)
    create_backlog_queues(world, 1)
    orders = world.namespace(PRIMARY).create_queue("orders")
    await park("orders", ServiceBusMessage(b"x" * (contract.MAX_MESSAGE_SIZE_BYTES + 1024)))
    async with make_syphon(world) as syphon:
        stats = await syphon.drain()
    backlog = world.namespace(SECONDARY).queue(contract.backlog_queue_name("contoso-primary", 0))
    (dead,) = backlog.dead_letters()
    assert dead.dead_letter_reason == "MessageSizeExceeded"
    assert dead.dead_letter_error_description.startswith("MessageSizeExceededError: ")
    assert stats.dead_lettered == 1 and stats.moved == 0
    assert orders.active_messages() == []


async def test_a_failed_receive_waits_out_its_queue_s_back_off_before_the_next(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_backlog_queues(world, 1)
    orders = world.namespace(PRIMARY).create_queue("orders")
    await park("orders", ServiceBusMessage(b"a"))
    real_receive = aio_client.ServiceBusReceiver.receive_messages
    receives = 0

    async def first_fails(receiver: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal receives
        receives += 1
        if receives == 1:
            raise ServiceBusServerBusyError(message="busy")
        return await real_receive(receiver, *args, **kwargs)

    monkeypatch.setattr(aio_client.ServiceBusReceiver, "receive_messages", first_fails)
    stop = asyncio.Event()
    async with make_syphon(world, backoff_initial=timedelta(seconds=60), backoff_max=timedelta(seconds=60)) as syphon:
        running = asyncio.create_task(syphon.run(stop))
        await eventually(lambda: receives == 1)
        for _ in range(20):  # ample turns for a receive that does not wait
            await asyncio.sleep(0.01)
        assert receives == 1 and syphon.stats.moved == 0  # waiting out the queue's 60 s back-off
        stop.set()
        await asyncio.wait_for(running, guard(10))  # the wait is cut short by the stop
    assert syphon.stats.errors["ServiceBusServerBusyError"] == 1
    assert orders.active_messages() == []
    assert backlog_depth(world) == 1


async def test_a_queue_busy_again_after_its_extra_receiver_closed_gets_one_again(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_backlog_queues(world, 1)
    orders = world.namespace(PRIMARY).create_queue("orders")
    world.latency = 0.002  # receives overlap only when they take time
    opened = 0
    closed = 0
    get_receiver = aio_client.ServiceBusClient.get_queue_receiver
    close = aio_client.ServiceBusReceiver.close

    def counted_open(self: Any, queue_name: str, **kwargs: Any) -> Any:
        nonlocal opened
        opened += 1
        return get_receiver(self, queue_name, **kwargs)

    async def counted_close(self: Any) -> None:
        nonlocal closed
        closed += 1
        await close(self)

    monkeypatch.setattr(aio_client.ServiceBusClient, "get_queue_receiver", counted_open)
    monkeypatch.setattr(aio_client.ServiceBusReceiver, "close", counted_close)
    stop = asyncio.Event()
    async with make_syphon(world, receive_batch_size=5, receivers_per_queue=2) as syphon:
        running = asyncio.create_task(syphon.run(stop))
        await park("orders", *(ServiceBusMessage(f"a{i}") for i in range(60)))
        # Busy: extra receivers opened; once the queue is quiet all but the first are closed.
        await eventually(lambda: syphon.stats.moved == 60 and opened >= 2 and closed == opened - 1)
        quiet = opened
        await park("orders", *(ServiceBusMessage(f"b{i}") for i in range(60)))
        await eventually(lambda: syphon.stats.moved == 120)
        assert opened > quiet  # busy again: a new extra receiver
        stop.set()
        await asyncio.wait_for(running, guard(10))
    assert len(orders.active_messages()) == 120


async def test_a_backlog_queue_that_vanishes_stops_its_pump_and_the_others_move_on(world: ServiceBusWorld) -> None:
    from azure.servicebus.exceptions import MessagingEntityNotFoundError

    names = create_backlog_queues(world, 2)
    orders = world.namespace(PRIMARY).create_queue("orders")
    await park("orders", *(ServiceBusMessage(f"m{i}") for i in range(10)), backlog=1)
    world.fail(SECONDARY, names[0], MessagingEntityNotFoundError)  # deleted under the syphon

    async with make_syphon(world) as syphon:
        stats = await syphon.drain()

    assert stats.moved == 10
    assert bodies(orders) == sorted(f"m{i}".encode() for i in range(10))
    assert stats.errors["MessagingEntityNotFoundError"] >= 1
    assert backlog_depth(world) == 0


def pump_context(budget: InFlightBudget) -> SyphonContext:
    """A pump's shared context with nothing behind it: enough to make a pump and read its budget."""
    options = SyphonOptions()
    return SyphonContext(
        options=options,
        stats=SyphonStats(),
        budget=budget,
        health=Health(BackoffPolicy(options.backoff_initial.total_seconds(), options.backoff_max.total_seconds())),
        destinations=None,  # type: ignore[arg-type]  (no send is made)
        secondary=None,
        pair=ConnectionPair(grace=1.0, reaction=None),  # type: ignore[arg-type]  (no side goes down)
        now=lambda: datetime.now(UTC),
    )


def test_a_queue_listed_with_one_large_message_sizes_its_first_receive_by_that_message() -> None:
    budget = InFlightBudget(2_000, max_bytes=64 * 1024 * 1024)
    BacklogPump(pump_context(budget), "orders", depth=1, size_in_bytes=200 * 1024)

    # A quarter of 64 MiB at the listed 200 KB a message: 81, before any receive measured one.
    assert budget.receive_limit == 81


def test_a_queue_listed_with_bytes_but_no_messages_leaves_the_message_size_unknown() -> None:
    # A listing caught between a receive and its count (bytes reported, depth 0): no size to divide by.
    budget = InFlightBudget(2_000, max_bytes=64 * 1024 * 1024)
    BacklogPump(pump_context(budget), "orders", depth=0, size_in_bytes=200 * 1024)

    assert budget.receive_limit == 2_000  # the capacity: no size known


def test_the_byte_bound_counts_the_data_sections_of_received_bodies_only() -> None:
    data = SimpleNamespace(body_type=AmqpMessageBodyType.DATA, body=iter([b"abc", b"de"]))
    value = SimpleNamespace(body_type=AmqpMessageBodyType.VALUE, body={"not": "counted"})

    assert _body_bytes([data, value]) == 5
