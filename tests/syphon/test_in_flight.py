"""The syphon-wide bound on received-but-unsettled messages."""

from __future__ import annotations

import asyncio

import pytest

from pairedbus.syphon.in_flight import InFlightBudget
from tests.load import guard


async def test_grants_what_is_free_up_to_what_is_asked() -> None:
    budget = InFlightBudget(10)
    assert await budget.acquire(4) == 4
    assert await budget.acquire(100) == 6
    assert budget.taken == 10


async def test_received_keeps_the_messages_and_frees_the_rest_of_the_grant() -> None:
    budget = InFlightBudget(10)
    granted = await budget.acquire(10)
    await budget.received(granted, 3)
    assert (budget.held, budget.taken) == (3, 3)
    await budget.settled(3)
    assert (budget.held, budget.taken) == (0, 0)


async def test_a_full_budget_makes_the_next_receive_wait_until_a_settlement() -> None:
    budget = InFlightBudget(2)
    await budget.received(await budget.acquire(2), 2)
    waiting = asyncio.create_task(budget.acquire(5))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not waiting.done()
    await budget.settled(1)
    assert await asyncio.wait_for(waiting, guard(5)) == 1


async def test_take_free_takes_what_is_free_now_and_never_ahead_of_a_waiter() -> None:
    budget = InFlightBudget(10)
    await budget.received(await budget.acquire(6), 6)
    assert budget.take_free(8) == 4  # what is free, without waiting
    assert budget.take_free(1) == 0  # nothing left
    waiting = asyncio.create_task(budget.acquire(10))
    await asyncio.sleep(0)
    await budget.settled(6)
    assert budget.take_free(5) == 0  # the waiter comes first
    assert await asyncio.wait_for(waiting, guard(5)) == 6


async def test_idle_waits_for_every_settlement() -> None:
    budget = InFlightBudget(3)
    await budget.received(await budget.acquire(3), 3)
    idle = asyncio.create_task(budget.idle())
    await budget.settled(2)
    await asyncio.sleep(0)
    assert not idle.done()
    await budget.settled(1)
    await asyncio.wait_for(idle, guard(5))


async def test_releasing_more_than_taken_is_a_bug() -> None:
    budget = InFlightBudget(1)
    with pytest.raises(RuntimeError):
        await budget.release(1)


def test_capacity_must_be_positive() -> None:
    with pytest.raises(ValueError):
        InFlightBudget(0)


async def test_idle_pumps_ask_for_a_probe_and_busy_ones_for_what_is_free() -> None:
    budget = InFlightBudget(2000)
    for _ in range(10):
        budget.join()
    assert budget.ask(busy=False, limit=1000) == 16  # idle: a probe, whatever is free
    assert budget.ask(busy=True, limit=1000) == 1000  # busy: up to its receive size
    await budget.acquire(1700)
    assert budget.ask(busy=True, limit=1000) == 300  # what is free
    assert budget.ask(busy=False, limit=1000) == 16
    for _ in range(200):
        budget.join()
    assert budget.probe == 4  # many pumps for the capacity: smaller probes


async def test_no_receive_starts_while_the_held_bytes_reach_the_byte_bound() -> None:
    budget = InFlightBudget(100, max_bytes=1000)
    await budget.received(await budget.acquire(10), 5, 1000)  # 5 messages of 200 bytes
    waiting = asyncio.create_task(budget.acquire(10))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not waiting.done()  # 95 slots free, but the bytes are at the bound
    await budget.settled(5, 1000)
    assert await asyncio.wait_for(waiting, guard(5)) == 1  # a quarter of the 1,000 bytes: one of 200


async def test_grants_are_cut_to_what_the_byte_bound_fits_at_the_typical_size() -> None:
    budget = InFlightBudget(2000, max_bytes=64 * 1024 * 1024)
    assert await budget.acquire(500) == 500  # no size seen yet: the count decides
    await budget.received(500, 10, 10 * 200 * 1024)  # messages of 200 KB
    # 64 MiB hold 327 of them; one receive may expect a quarter of the bound: 81.
    grants = [await budget.acquire(500) for _ in range(3)]
    assert grants == [81, 81, 81]
    assert await budget.acquire(500) == 74  # what is left: 327 - 10 held - 243 being received
    waiting = asyncio.create_task(budget.acquire(500))
    await asyncio.sleep(0)
    assert not waiting.done()  # the slots being received count at 200 KB each
    await budget.received(81, 0)  # one receive came back empty
    assert await asyncio.wait_for(waiting, guard(5)) == 81


async def test_a_busy_pump_finding_nothing_free_asks_for_a_whole_receive() -> None:
    budget = InFlightBudget(2000)
    await budget.acquire(2000)
    assert budget.ask(busy=True, limit=500) == 500  # not a probe: its grant comes from later releases
    assert budget.ask(busy=False, limit=500) == 16


async def test_releases_of_one_turn_are_granted_together_to_the_first_waiter() -> None:
    budget = InFlightBudget(100)
    await budget.received(await budget.acquire(100), 100)
    first = asyncio.create_task(budget.acquire(50))
    second = asyncio.create_task(budget.acquire(50))
    for _ in range(3):
        await asyncio.sleep(0)
    for _ in range(5):  # five sends' completions arriving in one turn, given back one by one
        await budget.settled(6)
    assert await asyncio.wait_for(first, guard(5)) == 30  # all 30, not the first release's 6
    for _ in range(3):
        await asyncio.sleep(0)
    assert not second.done()
    await budget.settled(20)
    assert await asyncio.wait_for(second, guard(5)) == 20


async def test_a_grant_made_but_not_yet_taken_when_cancelled_is_given_back() -> None:
    budget = InFlightBudget(4)
    await budget.received(await budget.acquire(4), 4)
    waiter = asyncio.create_task(budget.acquire(4))
    await asyncio.sleep(0)
    await budget.settled(4)
    await asyncio.sleep(0)  # the serve of that turn ran: the grant is set, the waiter not yet resumed
    assert budget.free == 0
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert (budget.free, budget.taken) == (4, 0)


def test_queues_listed_with_work_share_the_receivers_the_capacity_warrants() -> None:
    budget = InFlightBudget(2000)
    assert budget.receivers_share(500) == 4  # nothing joined yet: as if one queue
    budget.join(busy=True)
    assert budget.receivers_share(500) == 4  # one busy queue: 4 receives of 500 ask for the capacity
    for _ in range(2):
        budget.join(busy=True)
    budget.join()  # an idle queue does not count
    assert budget.receivers_share(500) == 2  # three busy queues: 2 each (6 x 500 >= 2,000)
    for _ in range(7):
        budget.join(busy=True)
    assert budget.receivers_share(500) == 1  # ten: one each
    budget.leave(busy=True)
    assert budget.receivers_share(100) == 3  # nine busy queues, receives of 100: 3 each (27 x 100 >= 2,000)


def test_receives_of_queues_listed_with_work_ask_for_a_64th_of_the_capacity_unless_too_few_to_fill_it() -> None:
    """One busy queue's receivers, or one receiver of each of several busy queues, fill the capacity. On the
    code before, several busy queues' receivers were 4 each: 40 receivers of 50 at 10 queues (over the wire
    40 connections, each read by its completes and receives in turn)."""
    budget = InFlightBudget(2000)
    assert budget.receive_share(4) == 500  # nothing joined yet: as if one queue, its 4 receivers share 2,000
    budget.join(busy=True)
    assert budget.receive_share(4) == 500  # one busy queue: 4 receives of 500
    assert budget.receive_share(8) == 250  # 8 receivers: 250 each
    budget.join(busy=True)
    budget.join()  # an idle queue does not count
    assert budget.receive_share(4) == 1000  # two busy queues: a receiver each, of 1,000 (receive_batch_size cuts it)
    for _ in range(8):
        budget.join(busy=True)
    assert budget.receive_share(4) == 200  # ten: 10 receivers of 200 fill it
    for _ in range(40):
        budget.join(busy=True)
    assert budget.receive_share(4) == 40  # fifty: 50 receivers of 40
    assert InFlightBudget(100).receive_share(4) == 25  # one queue of a small budget: its 4 receivers fill it
    small = InFlightBudget(100)
    for _ in range(10):
        small.join(busy=True)
    assert small.receive_share(4) == 16  # at least a probe, not 10 at a time
    assert InFlightBudget(4).receive_share(1) == 4  # never more than the capacity


def test_the_receive_share_can_be_planned_for_queues_not_yet_joined() -> None:
    budget = InFlightBudget(2000)
    assert budget.receive_share(4, busy=10) == 200  # ten busy queues' 10 receivers fill 2,000 with 200 each
    assert budget.receive_share(4, busy=100) == 31  # a hundred: a 64th each, not the 20 that would fill it
    assert budget.receive_share(4) == 500  # and the plan joined nothing
