"""The syphon-wide bound on received-but-unsettled messages."""

from __future__ import annotations

import asyncio

import pytest

from pairedbus.syphon.in_flight import InFlightBudget


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
    assert await asyncio.wait_for(waiting, 5) == 1


async def test_idle_waits_for_every_settlement() -> None:
    budget = InFlightBudget(3)
    await budget.received(await budget.acquire(3), 3)
    idle = asyncio.create_task(budget.idle())
    await budget.settled(2)
    await asyncio.sleep(0)
    assert not idle.done()
    await budget.settled(1)
    await asyncio.wait_for(idle, 5)


async def test_releasing_more_than_taken_is_a_bug() -> None:
    budget = InFlightBudget(1)
    with pytest.raises(RuntimeError):
        await budget.release(1)


def test_capacity_must_be_positive() -> None:
    with pytest.raises(ValueError):
        InFlightBudget(0)


def test_pumps_share_half_the_capacity_for_their_receives() -> None:
    budget = InFlightBudget(40)
    assert budget.share == 20
    for _ in range(10):
        budget.join()
    assert budget.share == 2
    for _ in range(20):
        budget.join()
    assert budget.share == 1
    for _ in range(30):
        budget.leave()
    assert budget.share == 20
