"""The shared core of every fake sender and receiver (`testing/handler.py`): one round trip per operation, the
namespace's or world's latency, the client's timeout, and a closed handler refusing work."""

from __future__ import annotations

import asyncio

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient
from azure.servicebus.exceptions import OperationTimeoutError
from pytest_mock import MockerFixture

from pairedbus.servicebus.world import _ROUND_TRIP_WINDOW
from pairedbus.testing import Namespace, ServiceBusWorld

from .conftest import FQDN, Credential


async def test_latency_is_one_round_trip_per_operation(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld, mocker: MockerFixture
) -> None:
    ns.create_queue("q")
    world.latency = 0.001
    round_trips = mocker.spy(world, "round_trip")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages([ServiceBusMessage(b"x") for _ in range(100)])
    assert round_trips.call_count == 1
    async with client.get_queue_receiver("q") as receiver:
        messages = await receiver.receive_messages(max_message_count=100, max_wait_time=1)
        assert round_trips.call_count == 3  # open, receive
        await asyncio.gather(*(receiver.complete_message(m) for m in messages))
    assert round_trips.call_count == 103


async def test_concurrent_operations_share_one_round_trip_timer(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld, mocker: MockerFixture
) -> None:
    ns.create_queue("q")
    world.latency = 0.001
    loop = asyncio.get_running_loop()
    call_later = mocker.spy(loop, "call_later")
    async with client.get_queue_sender("q") as sender:
        await asyncio.gather(*(sender.send_messages(ServiceBusMessage(b"x")) for _ in range(50)))
    timers = [c for c in call_later.call_args_list if c.args[1].__name__ == "_wake_all"]
    assert len(timers) < 50
    assert ns.queue("q").counts.sends == 50


async def test_round_trips_ending_within_one_millisecond_share_one_timer_and_none_ends_early(
    world: ServiceBusWorld, mocker: MockerFixture
) -> None:
    # What the link model does to a gather of completes: each round trip a few µs longer than the one
    # before (its frame queued behind theirs), each its own timer before, one timer per millisecond now.
    # The loop's clock stands still while the 100 round trips start, so that they all start at one instant
    # however long the loop takes to start them (on a busy machine, long enough to spread their ends over
    # more milliseconds): their ends are then exactly the latencies after it.
    loop = asyncio.get_running_loop()
    call_later = mocker.spy(loop, "call_later")
    latencies = [0.02 + i * 50e-6 for i in range(100)]
    ended: list[float] = []
    waiting: list[float] = []
    start = loop.time()

    async def one(latency: float) -> None:
        started = loop.time()
        waiting.append(latency)
        await world.round_trip(latency)
        ended.append(loop.time() - started - latency)

    loop.time = lambda: start  # type: ignore[method-assign]
    try:
        trips = [asyncio.ensure_future(one(latency)) for latency in latencies]
        await asyncio.sleep(0)  # one turn of the loop runs each to its round trip's future
        assert len(waiting) == len(latencies)
    finally:
        del loop.time  # the loop's own clock again
    await asyncio.gather(*trips)
    timers = [c for c in call_later.call_args_list if c.args[1].__name__ == "_wake_all"]
    # One timer for each millisecond window the 100 ends fall in (4.95 ms of ends: 5 or 6 windows).
    windows = {int((start + latency) / _ROUND_TRIP_WINDOW) for latency in latencies}
    assert len(timers) == len(windows) <= 6
    assert len(ended) == 100 and min(ended) >= 0


async def test_round_trip_slower_than_the_timeout_raises_operation_timeout(
    ns: Namespace, world: ServiceBusWorld
) -> None:
    ns.create_queue("q")
    ns.latency = 0.05
    async with ServiceBusClient(FQDN, Credential(), try_timeout=0.01) as bounded:
        with pytest.raises(OperationTimeoutError) as caught:
            await bounded.get_queue_sender("q").send_messages(ServiceBusMessage(b"x"))
    assert caught.value._retryable is True
    async with ServiceBusClient(FQDN, Credential()) as unbounded:
        sender = unbounded.get_queue_sender("q")
        with pytest.raises(OperationTimeoutError):
            await sender.send_messages(ServiceBusMessage(b"x"), timeout=0.01)
        await sender.send_messages(ServiceBusMessage(b"x"), timeout=1)
    assert ns.queue("q").counts.sends == 1


async def test_namespace_latency_overrides_the_world_latency(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld, mocker: MockerFixture
) -> None:
    ns.create_queue("q")
    world.latency = 0.001
    ns.latency = 0.002
    round_trips = mocker.spy(world, "round_trip")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))
    assert round_trips.call_args.args == (0.002,)


async def test_closed_handler_raises_value_error(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    sender = client.get_queue_sender("q")
    await sender.close()
    with pytest.raises(ValueError, match="shutdown"):
        await sender.send_messages(ServiceBusMessage(b"x"))
