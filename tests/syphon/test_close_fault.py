"""The close/fault rule: a namespace connection that closes or faults takes its partner with it."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from azure.servicebus import ServiceBusMessage

from pairedbus import contract
from pairedbus.pairing.connections import PRIMARY as PRIMARY_SIDE
from pairedbus.pairing.connections import SECONDARY as SECONDARY_SIDE
from pairedbus.pairing.connections import ConnectionPair
from pairedbus.servicebus.world import ServiceBusWorld
from pairedbus.syphon import SyphonFaulted
from pairedbus.syphon.close_fault import StopOnFault
from tests.load import guard

from .helpers import PRIMARY, SECONDARY, create_backlog_queues, eventually, make_syphon, park


async def test_secondary_fault_faults_the_primary_after_the_grace(world: ServiceBusWorld) -> None:
    create_backlog_queues(world, 2)
    stop = asyncio.Event()

    async with make_syphon(world) as syphon:
        running = asyncio.create_task(syphon.run(stop))
        await eventually(lambda: world.operations.get("receive", 0) >= 2)  # long-polling
        world.close_connections(SECONDARY)
        with pytest.raises(SyphonFaulted) as caught:
            await asyncio.wait_for(running, guard(10))
        assert world.open_clients(PRIMARY) == []
        assert not syphon.clients_open

    assert caught.value.side == SECONDARY_SIDE
    assert caught.value.partner_followed is False
    assert not stop.is_set()


async def test_primary_closed_by_someone_else_faults_the_secondary(world: ServiceBusWorld) -> None:
    create_backlog_queues(world, 1)
    stop = asyncio.Event()

    async with make_syphon(world) as syphon:
        running = asyncio.create_task(syphon.run(stop))
        await eventually(lambda: len(syphon.stats.backlog_depth) == 1)
        (primary_client,) = world.open_clients(PRIMARY)
        await primary_client.close()
        with pytest.raises(SyphonFaulted) as caught:
            await asyncio.wait_for(running, guard(10))
        assert world.open_clients(SECONDARY) == []

    assert (caught.value.side, caught.value.partner_followed) == (PRIMARY_SIDE, False)


async def test_primary_fault_seen_on_send_faults_the_syphon(world: ServiceBusWorld) -> None:
    create_backlog_queues(world, 1)
    orders = world.namespace(PRIMARY).create_queue("orders")
    stop = asyncio.Event()

    async with make_syphon(world) as syphon:
        world.close_connections(PRIMARY)  # the primary's connection breaks before anything is sent
        running = asyncio.create_task(syphon.run(stop))
        await park("orders", ServiceBusMessage(b"kept"))
        with pytest.raises(SyphonFaulted) as caught:
            await asyncio.wait_for(running, guard(10))

    assert caught.value.side == PRIMARY_SIDE
    # Nothing lost: the message is still in the backlog, for the next syphon.
    assert orders.active_messages() == []
    assert (
        world.namespace(SECONDARY).queue(contract.backlog_queue_name("contoso-primary", 0)).message_counts()["active"]
        == 1
    )


async def test_partner_that_follows_within_the_grace_is_not_faulted_by_the_syphon(world: ServiceBusWorld) -> None:
    create_backlog_queues(world, 1)
    stop = asyncio.Event()

    async with make_syphon(world, close_fault_grace=timedelta(seconds=5)) as syphon:
        running = asyncio.create_task(syphon.run(stop))
        await eventually(lambda: world.operations.get("receive", 0) >= 1)  # long-polling
        world.close_connections(SECONDARY)
        (primary_client,) = world.open_clients(PRIMARY)
        await primary_client.close()
        with pytest.raises(SyphonFaulted) as caught:
            await asyncio.wait_for(running, guard(10))

    assert caught.value.partner_followed is True


async def test_reported_fault_stops_drain_too(world: ServiceBusWorld) -> None:
    create_backlog_queues(world, 1)
    world.namespace(PRIMARY).create_queue("orders")

    async with make_syphon(world) as syphon:
        syphon.report_fault("secondary", "lost its connection")
        with pytest.raises(SyphonFaulted, match="lost its connection"):
            await asyncio.wait_for(syphon.drain(), guard(10))


async def test_own_shutdown_is_not_a_fault(world: ServiceBusWorld) -> None:
    create_backlog_queues(world, 1)
    async with make_syphon(world) as syphon:
        await syphon.drain()
    assert syphon._reaction.fault is None
    assert world.open_clients() == []


async def test_pair_watch_uses_the_grace_given() -> None:
    reaction = StopOnFault()
    pair = ConnectionPair(grace=0.01, reaction=reaction)
    watching = asyncio.create_task(reaction.watch(pair))
    pair.mark_down(PRIMARY_SIDE, "was closed")
    fault = await asyncio.wait_for(watching, guard(5))
    assert (fault.side, fault.partner_followed) == (PRIMARY_SIDE, False)
    assert "did not follow" in str(fault)


async def test_a_faulted_syphon_can_be_entered_again_with_fresh_connections(world: ServiceBusWorld) -> None:
    create_backlog_queues(world, 1)
    orders = world.namespace(PRIMARY).create_queue("orders")
    syphon = make_syphon(world)
    async with syphon:
        syphon.report_fault("primary")
        with pytest.raises(SyphonFaulted):
            await syphon.drain()

    await park("orders", ServiceBusMessage(b"after restart"))
    async with syphon:
        stats = await syphon.drain()

    assert stats.moved == 1
    assert [b"".join(m.body) for m in orders.active_messages()] == [b"after restart"]


async def test_a_syphon_stopped_by_the_rule_gives_back_what_it_holds_and_settles_none_of_it(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The primary faults while a send home hangs: before the rule closes the secondary, the syphon
    abandons the message it holds (redelivered now, not after its lock), and does not complete it
    when the send returns afterwards (its lock is gone; the redelivered copy is moved again and the
    destination's duplicate detection drops it). On the code before: no abandon, the lock kept."""
    from pairedbus.testing import aio_client

    create_backlog_queues(world, 1)
    world.namespace(PRIMARY).create_queue("orders")
    backlog = world.namespace(SECONDARY).queue(contract.backlog_queue_name("contoso-primary", 0))
    await park("orders", ServiceBusMessage(b"held", message_id="m1"))
    release = asyncio.Event()
    real_send = aio_client.ServiceBusSender.send_messages

    async def hanging_send(self: object, message: object, **kwargs: object) -> None:
        await release.wait()
        await real_send(self, message, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(aio_client.ServiceBusSender, "send_messages", hanging_send)
    async with make_syphon(world, close_fault_grace=timedelta(milliseconds=50)) as syphon:
        running = asyncio.create_task(syphon.run(asyncio.Event()))
        await eventually(lambda: syphon.in_flight == 1)
        syphon.report_fault(PRIMARY_SIDE)
        await eventually(lambda: backlog.counts.abandons == 1)
        release.set()
        with pytest.raises(SyphonFaulted):
            await asyncio.wait_for(running, guard(10))
    assert syphon.stats.given_back == 1
    assert syphon.stats.moved == 0  # its complete skipped: the broker has it back
    assert backlog.counts.completes == 0
    assert backlog.message_counts()["active"] == 1


async def test_a_fault_is_raised_though_the_work_ends_while_the_rule_still_gives_back(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CI (the syphon over the wire, load of two workers): the primary went down, the rule faulted the
    secondary, and the syphon ended "stopped", no SyphonFaulted. The rule halts the work before it gives
    back what is held; the work ended during the give-back (30 abandons by lock token), and the syphon
    cancelled the rule's watch before it had made its fault. Here the give-back takes 0.5 s: the fault is
    raised and the rule's close of the secondary done (the code before: the syphon returned, no fault)."""
    from pairedbus.syphon import syphon as syphon_module

    create_backlog_queues(world, 1)
    gave_back = asyncio.Event()

    async def slow_give_back(holders: object, stats: object, **_: object) -> tuple[int, int]:
        await asyncio.sleep(0.5)
        gave_back.set()
        return 0, 0

    monkeypatch.setattr(syphon_module, "give_back", slow_give_back)
    async with make_syphon(world, close_fault_grace=timedelta(milliseconds=50)) as syphon:
        running = asyncio.create_task(syphon.run(asyncio.Event()))
        await eventually(lambda: world.operations.get("receive", 0) >= 1)
        syphon.report_fault(PRIMARY_SIDE)
        with pytest.raises(SyphonFaulted) as caught:
            await asyncio.wait_for(running, guard(10))
        assert gave_back.is_set()
        assert world.open_clients(SECONDARY) == []  # the rule closed the partner it faulted
    assert (caught.value.side, caught.value.partner_followed) == (PRIMARY_SIDE, False)
