"""The pump's ordering and stopping, pinned through the syphon's public behaviour (issue 22): keyed
messages to one destination wait for each other's sends, unkeyed ones overlap, and a halted pump
leaves a backing-off destination's messages locked instead of sleeping out the back-off."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.exceptions import ServiceBusServerBusyError

from pairedbus.testing import aio_client
from pairedbus.testing.world import ServiceBusWorld

from .helpers import PRIMARY, backlog_depth, bodies, create_backlog_queues, eventually, make_syphon, park


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
        await asyncio.wait_for(running, 10)
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
        await asyncio.wait_for(running, 10)
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
        await asyncio.wait_for(running, 10)  # not 40 s
        assert syphon.stats.left_locked == 2
        assert syphon.stats.moved == 0 and syphon.stats.dead_lettered == 0
    assert backlog_depth(world) == 2  # redelivered when their locks lapse
