"""The in-flight budget's byte accounting and cancellation, pinned (issue 22): bytes given back
with unused or settled slots, a grant cancelled just as it is given, waiters served in order."""

from __future__ import annotations

import asyncio

import pytest

from pairedbus.syphon.in_flight import Hold, InFlightBudget
from tests.load import guard


async def turns(n: int = 5) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


async def test_bytes_given_back_by_a_hold_leave_the_budget_as_it_was() -> None:
    budget = InFlightBudget(100, max_bytes=1_000_000)
    granted = await budget.acquire(10)
    await budget.received(granted, 4, 4_000)
    assert (budget.held, budget.held_bytes, budget.taken) == (4, 4_000, 4)
    hold = Hold(budget, 4, 4_000)
    await hold.give_back(1)
    assert (budget.held, budget.held_bytes, budget.taken) == (3, 3_000, 3)
    await hold.give_back(10)  # more than it holds: only what it holds
    assert (budget.held, budget.held_bytes, budget.taken) == (0, 0, 0)
    await hold.give_back_rest()
    assert (budget.held, budget.held_bytes, budget.taken) == (0, 0, 0)


async def test_give_back_rest_returns_the_remainder_of_uneven_bytes() -> None:
    budget = InFlightBudget(10, max_bytes=1_000)
    await budget.received(await budget.acquire(3), 3, 100)
    hold = Hold(budget, 3, 100)  # 33 bytes a message, 1 byte of remainder
    await hold.give_back(2)
    assert budget.held_bytes == 34
    await hold.give_back_rest()
    assert (budget.held, budget.held_bytes, budget.free) == (0, 0, 10)


async def test_a_long_run_of_receives_keeps_granting_full_receives() -> None:
    # Held bytes that never came down would shrink every grant to one message.
    budget = InFlightBudget(100, max_bytes=40_000)
    for _ in range(20):
        granted = await budget.acquire(10)
        assert granted == 10
        await budget.received(granted, 10, 1_000 * 10)
        hold = Hold(budget, 10, 10_000)
        await hold.give_back_rest()
    assert (budget.held, budget.held_bytes, budget.free) == (0, 0, 100)


async def test_a_grant_is_cut_to_the_bytes_that_fit() -> None:
    budget = InFlightBudget(100, max_bytes=40_000)
    await budget.received(await budget.acquire(10), 10, 10_000)  # typical size 1,000 bytes
    # 30,000 bytes of room, but one receive may expect at most a quarter of the bound: 10 messages.
    assert await budget.acquire(50) == 10
    # Those 10 are expected to bring 10,000 bytes: 20,000 of room left.
    assert await budget.acquire(50) == 10


async def test_settled_bytes_alone_wake_a_receive_waiting_on_the_byte_bound() -> None:
    budget = InFlightBudget(100, max_bytes=10_000)
    await budget.received(await budget.acquire(10), 10, 10_000)  # the byte bound is reached
    waiting = asyncio.create_task(budget.acquire(5))
    await turns()
    assert not waiting.done()
    await budget.settled(0, 5_000)  # bytes freed, no slot
    assert await asyncio.wait_for(waiting, guard(5)) >= 1


async def test_a_grant_cancelled_as_it_is_given_is_given_back() -> None:
    budget = InFlightBudget(2)
    await budget.received(await budget.acquire(2), 2)
    waiter = asyncio.create_task(budget.acquire(2))
    await turns()
    await budget.settled(2)  # the waiter is granted 2 slots ...
    waiter.cancel()  # ... and cancelled before it could take them
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert (budget.free, budget.taken) == (2, 0)
    assert await budget.acquire(2) == 2  # nothing leaked


async def test_a_waiter_cancelled_before_its_grant_lets_the_next_one_be_served() -> None:
    budget = InFlightBudget(1)
    await budget.received(await budget.acquire(1), 1)
    first = asyncio.create_task(budget.acquire(1))
    second = asyncio.create_task(budget.acquire(1))
    await turns()
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    await budget.settled(1)
    assert await asyncio.wait_for(second, guard(5)) == 1
    assert budget.free == 0


async def test_waiters_are_served_first_come_first_served() -> None:
    budget = InFlightBudget(3)
    await budget.received(await budget.acquire(3), 3)
    order: list[str] = []

    async def take(name: str, wanted: int) -> int:
        granted = await budget.acquire(wanted)
        order.append(name)
        return granted

    tasks = [asyncio.create_task(take(name, 1)) for name in ("a", "b", "c")]
    await turns()
    await budget.settled(1)
    await turns()
    assert order == ["a"]
    await budget.settled(2)
    await asyncio.gather(*tasks)
    assert order == ["a", "b", "c"]


async def test_a_new_acquirer_waits_behind_earlier_waiters() -> None:
    budget = InFlightBudget(2)
    await budget.received(await budget.acquire(2), 2)
    early = asyncio.create_task(budget.acquire(2))
    await turns()
    await budget.settled(1)  # one slot free: the early waiter takes it
    late = asyncio.create_task(budget.acquire(1))
    await turns()
    assert await asyncio.wait_for(early, guard(5)) == 1
    assert not late.done()
    await budget.settled(1)
    assert await asyncio.wait_for(late, guard(5)) == 1


async def test_releasing_more_than_was_taken_is_an_error() -> None:
    budget = InFlightBudget(2)
    await budget.acquire(1)
    with pytest.raises(RuntimeError, match="released more in-flight slots than were acquired"):
        await budget.release(2)


def test_the_probe_shrinks_with_the_number_of_pumps() -> None:
    budget = InFlightBudget(64)
    assert budget.probe == 16
    for _ in range(4):
        budget.join()
    assert budget.probe == 8  # 64 // (2 * 4)
    for _ in range(60):
        budget.join()
    assert budget.probe == 1
    for _ in range(64):
        budget.leave()
    assert budget.probe == 16


async def test_an_idle_pump_asks_for_the_probe_and_a_busy_one_for_what_is_free() -> None:
    budget = InFlightBudget(100)
    assert budget.ask(busy=False, limit=50) == 16
    assert budget.ask(busy=False, limit=4) == 4
    assert budget.ask(busy=True, limit=50) == 50
    await budget.acquire(95)
    assert budget.ask(busy=True, limit=50) == 16  # 5 free, but at least a probe
    assert budget.ask(busy=True, limit=3) == 3


@pytest.mark.parametrize(("capacity", "max_bytes"), [(0, None), (1, 0)])
def test_a_budget_needs_room(capacity: int, max_bytes: int | None) -> None:
    with pytest.raises(ValueError, match=">= 1"):
        InFlightBudget(capacity, max_bytes=max_bytes)


async def test_the_listed_message_size_bounds_the_first_grant_by_bytes() -> None:
    budget = InFlightBudget(2_000, max_bytes=64 * 1024 * 1024)
    budget.expect_message_size(200 * 1024)

    # A quarter of 64 MiB at 200 KB a message: 81, not the 500 asked.
    assert await budget.acquire(500) == 81


async def test_a_measured_message_size_wins_over_the_listed_one() -> None:
    budget = InFlightBudget(100, max_bytes=40_000)
    await budget.received(await budget.acquire(10), 10, 10_000)  # measured: 1,000 bytes a message
    budget.expect_message_size(20_000)  # the listing's guess comes too late to count
    await budget.release(0)

    assert await budget.acquire(50) == 10  # a quarter of the bound at 1,000 bytes, as before


def test_a_receive_is_limited_to_a_quarter_of_the_byte_bound_at_the_typical_size() -> None:
    budget = InFlightBudget(2_000, max_bytes=64 * 1024 * 1024)
    assert budget.receive_limit == 2_000  # no size known yet
    budget.expect_message_size(200 * 1024)
    assert budget.receive_limit == 81
    assert InFlightBudget(2_000).receive_limit == 2_000  # no byte bound


def test_each_refusal_says_exactly_what_is_wrong() -> None:
    with pytest.raises(ValueError, match=r"^capacity must be >= 1$"):
        InFlightBudget(0)
    with pytest.raises(ValueError, match=r"^max_bytes must be >= 1$"):
        InFlightBudget(1, max_bytes=0)


async def test_releasing_too_much_says_exactly_what_went_wrong() -> None:
    budget = InFlightBudget(1)
    with pytest.raises(RuntimeError, match=r"^released more in-flight slots than were acquired$"):
        await budget.release(1)


async def test_byte_room_of_exactly_one_typical_message_lets_a_receive_start() -> None:
    budget = InFlightBudget(10, max_bytes=1_000)
    await budget.received(await budget.acquire(1), 1, 500)  # typical 500 bytes, 500 of 1,000 held
    receiving = asyncio.create_task(budget.acquire(5))
    await turns()
    assert receiving.done() and receiving.result() == 1  # room for exactly one more


async def test_a_partial_release_does_not_wake_whoever_waits_for_idle() -> None:
    budget = InFlightBudget(3)
    await budget.received(await budget.acquire(3), 3)
    idle = asyncio.create_task(budget.idle())
    await budget.settled(2)
    await turns()
    assert not idle.done()  # one message still in flight
    await budget.settled(1)
    await turns()
    assert idle.done()
