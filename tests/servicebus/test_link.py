"""The fake's link model: frames and bytes occupy a connection's direction, queued, per client."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient
from pytest_mock import MockerFixture

from pairedbus.servicebus.link import INCOMING, OUTGOING, Link, Wire
from pairedbus.testing import Namespace, ServiceBusWorld
from tests.load import guard

from .conftest import FQDN, Credential


def test_a_direction_carries_one_transfer_after_another() -> None:
    link = Link(frame_cost=0.5, bandwidth=1_000)
    wire = Wire()
    assert wire.occupy(link, OUTGOING, 1, 500, now=10.0) == 1.0  # 0.5 s frame + 500 B at 1 kB/s
    assert wire.occupy(link, OUTGOING, 2, 0, now=10.0) == 2.0  # queued behind the first
    assert wire.occupy(link, INCOMING, 1, 0, now=10.0) == 0.5  # the other direction is free
    assert wire.occupy(link, OUTGOING, 1, 0, now=20.0) == 0.5  # idle again by then


@pytest.mark.parametrize("bad", [{"frame_cost": -1.0}, {"bandwidth": 0}])
def test_a_link_refuses_impossible_costs(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        Link(**bad)


@pytest.fixture
def frozen_wire_clock(mocker: MockerFixture) -> None:
    """The wire's clock stands still, so every delay is exactly what was queued before it."""
    mocker.patch("pairedbus.testing.handler.time", SimpleNamespace(monotonic=lambda: 100.0, sleep=time.sleep))


async def test_concurrent_sends_on_one_connection_queue_and_other_connections_do_not(
    ns: Namespace, world: ServiceBusWorld, mocker: MockerFixture, frozen_wire_clock: None
) -> None:
    ns.create_queue("q")
    world.latency = 0.001
    world.link = Link(frame_cost=0.002, bandwidth=None)
    round_trips = mocker.spy(world, "round_trip")
    async with ServiceBusClient(FQDN, Credential()) as one, ServiceBusClient(FQDN, Credential()) as two:
        sender, other = one.get_queue_sender("q"), two.get_queue_sender("q")
        await sender.send_messages(ServiceBusMessage(b"warm"))  # the fake opens links for free
        round_trips.reset_mock()
        await asyncio.gather(*(sender.send_messages(ServiceBusMessage(b"x")) for _ in range(5)))
        queued = sorted(call.args[0] for call in round_trips.call_args_list)
        round_trips.reset_mock()
        await other.send_messages(ServiceBusMessage(b"x"))
        alone = round_trips.call_args_list[0].args[0]
    # 1 ms latency after 2, 4, ... 10 ms of frames queued since the wire clock stood still (the
    # warm-up send's frame is still ahead of them).
    assert queued == pytest.approx([0.001 + 0.002 * k for k in range(2, 7)])
    assert alone == pytest.approx(0.003)
    assert ns.queue("q").counts.sends == 7


async def test_bytes_cost_bandwidth_on_the_way_out_and_on_the_way_in(
    ns: Namespace, world: ServiceBusWorld, mocker: MockerFixture, frozen_wire_clock: None
) -> None:
    ns.create_queue("q")
    world.link = Link(frame_cost=0.0, bandwidth=1_000_000)
    wire_delays: list[tuple[int, float]] = []
    occupy = Wire.occupy

    def recorded(self: Wire, link: Link, direction: int, frames: int, nbytes: int, now: float) -> float:
        delay = occupy(self, link, direction, frames, nbytes, now)
        wire_delays.append((direction, nbytes))
        return delay

    mocker.patch.object(Wire, "occupy", recorded)
    async with ServiceBusClient(FQDN, Credential()) as client:
        async with client.get_queue_sender("q") as sender:
            await sender.send_messages([ServiceBusMessage(b"x" * 10_000) for _ in range(3)])
        async with client.get_queue_receiver("q") as receiver:
            received = await receiver.receive_messages(max_message_count=3, max_wait_time=1)
    assert len(received) == 3
    sent = [n for d, n in wire_delays if d == OUTGOING and n]
    arrived = [n for d, n in wire_delays if d == INCOMING]
    assert len(sent) == 1 and 30_000 < sent[0] < 31_000  # one batch: three bodies and their headers
    assert len(arrived) == 1 and arrived[0] == sent[0]


async def test_without_a_link_nothing_is_charged(ns: Namespace, world: ServiceBusWorld, mocker: MockerFixture) -> None:
    ns.create_queue("q")
    occupy = mocker.spy(Wire, "occupy")
    async with ServiceBusClient(FQDN, Credential()) as client, client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))
    assert occupy.call_count == 0


async def test_operations_shorter_than_the_shared_timer_window_still_wake(
    ns: Namespace, world: ServiceBusWorld
) -> None:
    # One operation after another, each far shorter than the window in which round trips share a
    # timer: a later one must not join a timer that already fired (it would never wake).
    ns.create_queue("q")
    world.latency = 0.0005
    async with ServiceBusClient(FQDN, Credential()) as client, client.get_queue_sender("q") as sender:
        async with asyncio.timeout(guard(30)):
            for _ in range(50):
                await sender.send_messages(ServiceBusMessage(b"x"))
    assert ns.queue("q").counts.sends == 50
