"""Per-key order of one backlog queue's messages to each destination."""

from __future__ import annotations

import asyncio

from pairedbus.syphon.key_order import KeyOrder


async def test_a_key_waiting_holds_up_only_its_own_later_turns() -> None:
    order = KeyOrder()
    events: list[str] = []
    release = asyncio.Event()

    async def take(key: tuple[str, str], name: str, *, wait: bool = False) -> None:
        async with order.turn(key):
            events.append(name)
            if wait:
                await release.wait()  # e.g. backing off

    slow = asyncio.create_task(take(("orders", "a"), "a1", wait=True))
    later = [
        asyncio.create_task(take(("orders", "a"), "a2")),
        asyncio.create_task(take(("orders", "b"), "b1")),
        asyncio.create_task(take(("invoices", "a"), "invoices-a1")),
        asyncio.create_task(take(("orders", "a"), "a3")),
    ]
    for _ in range(5):
        await asyncio.sleep(0)
    assert events == ["a1", "b1", "invoices-a1"]  # another key, another destination: not held up
    release.set()
    await asyncio.gather(slow, *later)
    assert events == ["a1", "b1", "invoices-a1", "a2", "a3"]  # the key's own turns, in order


async def test_a_turn_nobody_holds_or_waits_for_is_forgotten() -> None:
    order = KeyOrder()
    async with order.turn(("orders", "session-1")):
        assert len(order) == 1
    assert len(order) == 0


async def test_a_waiter_cancelled_leaves_no_turn_behind() -> None:
    order = KeyOrder()
    entered = asyncio.Event()
    release = asyncio.Event()

    async def hold() -> None:
        async with order.turn("k"):
            entered.set()
            await release.wait()

    async def wait() -> None:
        async with order.turn("k"):
            raise AssertionError("a cancelled waiter never gets its turn")

    holder = asyncio.create_task(hold())
    await entered.wait()
    waiter = asyncio.create_task(wait())
    await asyncio.sleep(0)
    waiter.cancel()
    await asyncio.gather(waiter, return_exceptions=True)
    release.set()
    await holder
    assert len(order) == 0
