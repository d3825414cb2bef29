"""Lock renewal of backlog messages while their hop to the primary is slow."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from azure.servicebus import ServiceBusMessage

from pairedbus import contract
from pairedbus.servicebus.world import ServiceBusWorld
from pairedbus.testing import aio_client
from tests.load import guard

from .helpers import (
    PRIMARY,
    PRIMARY_NAME,
    SECONDARY,
    backlog_depth,
    create_backlog_queues,
    eventually,
    make_syphon,
    park,
)


async def test_lock_is_renewed_while_a_slow_send_runs(world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    lock = timedelta(seconds=5)
    create_backlog_queues(world, 1, lock_duration=lock)
    orders = world.namespace(PRIMARY).create_queue("orders")  # no duplicate detection: a redelivery would show
    await park("orders", ServiceBusMessage(b"slow"))
    release = asyncio.Event()
    real_send = aio_client.ServiceBusSender.send_messages

    async def slow_send(self: Any, message: Any, **kwargs: Any) -> None:
        if self.fully_qualified_namespace == PRIMARY:
            await release.wait()
        await real_send(self, message, **kwargs)

    monkeypatch.setattr(aio_client.ServiceBusSender, "send_messages", slow_send)
    stop = asyncio.Event()

    async with make_syphon(world, lock_duration=lock, lock_renewal_fraction=0.01) as syphon:
        running = asyncio.create_task(syphon.run(stop))
        await eventually(lambda: syphon.in_flight == 1)
        # Four lock durations pass while the send hangs; the lock is renewed between steps.
        for _ in range(10):
            renewed = syphon.stats.lock_renewals
            await eventually(lambda renewed=renewed: syphon.stats.lock_renewals > renewed)
            world.clock.advance(lock * 0.6)
        release.set()
        await eventually(lambda: syphon.stats.moved == 1)
        stop.set()
        await asyncio.wait_for(running, guard(30))

    assert [b"".join(m.body) for m in orders.active_messages()] == [b"slow"]
    assert syphon.stats.errors == {}
    assert world.namespace(SECONDARY).queue(contract.backlog_queue_name("contoso-primary", 0)).counts.receives == 1
    assert backlog_depth(world) == 0


async def test_a_message_waiting_for_its_keys_turn_keeps_its_lock(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two messages of one session in two batches: while the first one's send hangs, the second
    waits for the session's turn, and four lock durations pass. Both locks are renewed; each
    message is received once, moved once and completed (before, the waiting one's lock lapsed: it
    was redelivered and sent twice, and its first copy's complete failed with a lost lock)."""
    lock = timedelta(seconds=5)
    create_backlog_queues(world, 1, lock_duration=lock)
    orders = world.namespace(PRIMARY).create_queue("orders", requires_session=True)  # a redelivery would show
    await park("orders", *(ServiceBusMessage(body, session_id="one") for body in (b"first", b"second")))
    release = asyncio.Event()
    real_send = aio_client.ServiceBusSender.send_messages

    async def slow_send(self: Any, message: Any, **kwargs: Any) -> None:
        if self.fully_qualified_namespace == PRIMARY:
            await release.wait()
        await real_send(self, message, **kwargs)

    monkeypatch.setattr(aio_client.ServiceBusSender, "send_messages", slow_send)
    stop = asyncio.Event()

    async with make_syphon(world, lock_duration=lock, lock_renewal_fraction=0.01, receive_batch_size=1) as syphon:
        running = asyncio.create_task(syphon.run(stop))
        await eventually(lambda: syphon.in_flight == 2)  # the second batch waits for the session's turn
        for _ in range(10):
            renewed = syphon.stats.lock_renewals
            # A whole round of renewals (both messages) after the last step, then 0.6 lock durations pass.
            await eventually(lambda renewed=renewed: syphon.stats.lock_renewals >= renewed + 3)
            world.clock.advance(lock * 0.6)
        release.set()
        await eventually(lambda: syphon.stats.moved == 2)
        stop.set()
        await asyncio.wait_for(running, guard(30))

    assert [b"".join(m.body) for m in orders.active_messages()] == [b"first", b"second"]
    assert syphon.stats.errors == {}
    backlog = world.namespace(SECONDARY).queue(contract.backlog_queue_name(PRIMARY_NAME, 0))
    assert (backlog.counts.receives, backlog.counts.completes) == (2, 2)
    assert backlog_depth(world) == 0


class _Renewals:
    """A receiver that records lock renewals and lets the test wait for them."""

    def __init__(self) -> None:
        self.renewed: list[str] = []

    async def renew_message_lock(self, message: Any, **_options: Any) -> None:
        self.renewed.append(message.message_id)


class _Message:
    def __init__(self, message_id: str) -> None:
        self.message_id = message_id


async def test_every_held_message_is_renewed_until_it_is_released() -> None:
    """What the keeper holds from the receive is renewed, whether worked on or waiting for its turn;
    a released message (settled, or left locked) is renewed no more."""
    from pairedbus.pairing.connections import ConnectionPair
    from pairedbus.syphon.close_fault import StopOnFault
    from pairedbus.syphon.lock_keeper import LockKeeper
    from pairedbus.syphon.stats import SyphonStats

    receiver = _Renewals()
    settled, waiting = _Message("settled"), _Message("waiting")
    keeper = LockKeeper(receiver, [settled, waiting], 0.001, SyphonStats(), ConnectionPair(1.0, StopOnFault()))
    running = asyncio.create_task(keeper.run())
    await eventually(lambda: receiver.renewed.count("settled") >= 3)
    keeper.release(settled)
    seen = receiver.renewed.count("settled")
    await eventually(lambda: receiver.renewed.count("waiting") >= seen + 3)  # renewal intervals pass
    running.cancel()
    await asyncio.gather(running, return_exceptions=True)
    assert receiver.renewed.count("settled") in (seen, seen + 1)  # at most the renewal on the wire at its release


async def test_a_renewal_answered_lock_lost_marks_the_message_lost_and_only_that_answer() -> None:
    """A message whose renewal the broker answered lock-lost is `lost` (not to be settled: the
    broker made it available again); one whose renewal failed otherwise (its lock may still hold)
    is not. Each failure is counted once."""
    from azure.servicebus.exceptions import MessageLockLostError, ServiceBusConnectionError

    from pairedbus.pairing.connections import ConnectionPair
    from pairedbus.syphon.close_fault import StopOnFault
    from pairedbus.syphon.lock_keeper import LockKeeper
    from pairedbus.syphon.stats import SyphonStats

    answers = {"lost": MessageLockLostError(message="lost"), "cut": ServiceBusConnectionError(message="cut")}

    class _Failing(_Renewals):
        async def renew_message_lock(self, message: Any, **_options: Any) -> None:
            self.renewed.append(message.message_id)
            if message.message_id in answers:
                raise answers[message.message_id]
            if self.renewed.count("held") > 2:
                await asyncio.Event().wait()  # the third round stays on the wire: the keeper is still

    receiver = _Failing()
    stats = SyphonStats()
    messages = [_Message("lost"), _Message("cut"), _Message("held")]
    keeper = LockKeeper(receiver, messages, 0.001, stats, ConnectionPair(1.0, StopOnFault()))
    running = asyncio.create_task(keeper.run())
    # The failed ones are renewed no more; two rounds of "held" answered, the third unanswered (a round is
    # counted when all its answers are in, so a cancel while one is on the wire counts none of it).
    await eventually(lambda: receiver.renewed.count("held") == 3)
    running.cancel()
    await asyncio.gather(running, return_exceptions=True)
    assert receiver.renewed.count("lost") == receiver.renewed.count("cut") == 1
    assert [keeper.lost(m) for m in messages] == [True, False, False]
    assert stats.errors == {"MessageLockLostError": 1, "ServiceBusConnectionError": 1}
    assert stats.lock_renewals == 2


class _Abandoning:
    """A receiver that records what it is asked to abandon."""

    def __init__(self) -> None:
        self.abandoned: list[Any] = []

    async def abandon_message(self, message: Any) -> None:
        self.abandoned.append(message)


async def test_a_stop_gives_back_what_is_held_and_what_was_left_once_a_side_went_down() -> None:
    """Left locked while both sides are up: left to its lock (a destination backing off). Left once a
    side is down (the close/fault rule will stop the syphon): given back with the held ones, which are
    then not settled (their lock is gone)."""
    from types import SimpleNamespace

    from pairedbus.pairing.connections import ConnectionPair
    from pairedbus.syphon.close_fault import StopOnFault, give_back
    from pairedbus.syphon.lock_keeper import LockKeeper
    from pairedbus.syphon.stats import SyphonStats

    pair = ConnectionPair(60.0, StopOnFault())
    receiver = _Abandoning()
    backing_off, left_stopping, held = (SimpleNamespace(message_id=n) for n in ("a", "b", "c"))
    holders: set[LockKeeper[Any]] = set()
    stats = SyphonStats()
    keeper: LockKeeper[Any] = LockKeeper(
        receiver,  # type: ignore[arg-type]
        [backing_off, left_stopping, held],
        1.0,
        stats,
        pair,
        holders=holders,
    )
    keeper.leave(backing_off)
    pair.mark_down("primary", "faulted")
    keeper.leave(left_stopping)
    try:
        assert await give_back(holders, stats) == (2, 2)
    finally:
        await pair.shut_down()
    assert receiver.abandoned == [held, left_stopping]
    assert keeper.lost(held) and not keeper.lost(backing_off)
    assert holders == set() and stats.given_back == 2
