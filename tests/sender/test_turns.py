"""Calls on one SDK handler take turns, and a call the SDK never returns from is cut at its bound."""

from __future__ import annotations

import asyncio

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.exceptions import OperationTimeoutError

from pairedbus.pairing.ping import is_ping
from pairedbus.sender import turns
from pairedbus.sender.turns import Turns, Watchdog
from pairedbus.testing import sender as fake_sender
from tests.load import guard

from .conftest import BACKLOG, PRIMARY, QUEUE, SECONDARY, parked


@pytest.fixture(autouse=True)
def short_slack(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(turns, "CUT_SLACK", 0.05)
    monkeypatch.setattr(turns, "WATCH_INTERVAL", 0.02)


async def test_calls_on_one_handler_never_overlap() -> None:
    running: list[int] = []
    overlaps = 0

    async def call(_left: float | None) -> None:
        nonlocal overlaps
        running.append(1)
        overlaps += len(running) > 1
        await asyncio.sleep(0.001)
        running.pop()

    on_one = Turns(lambda _handler: None)
    await asyncio.gather(*(on_one.call("handler", call, 5.0, what="a send") for _ in range(20)))
    assert overlaps == 0


async def test_a_call_the_sdk_never_returns_from_is_cut_and_its_handler_reported() -> None:
    cut: list[object] = []

    async def never(_left: float | None) -> None:
        await asyncio.Event().wait()

    watchdog = Watchdog()
    on_one = Turns(cut.append, watchdog)
    watching = asyncio.create_task(watchdog.run())
    try:
        with pytest.raises(OperationTimeoutError, match=r"the SDK did not return within 0\.1 s"):
            await asyncio.wait_for(on_one.call("handler", never, 0.1, what="a send"), guard(10))
    finally:
        watching.cancel()
    assert cut == ["handler"] and on_one.cut == 1
    # the turn is free again: the next call runs
    assert await on_one.call("handler", _answer, 0.1, what="a send") == 42


async def _answer(_left: float | None) -> int:
    return 42


async def test_a_call_that_returns_in_time_is_never_cut() -> None:
    watchdog = Watchdog()
    on_one = Turns(lambda _handler: pytest.fail("cut"), watchdog)

    async def quick(_left: float | None) -> int:
        await asyncio.sleep(0.03)
        return 42

    watching = asyncio.create_task(watchdog.run())
    try:
        for _ in range(5):
            assert await on_one.call("handler", quick, 0.1, what="a send") == 42
    finally:
        watching.cancel()
    assert on_one.cut == 0


async def test_the_turn_s_wait_and_the_call_share_one_bound() -> None:
    given: list[float | None] = []

    async def slow(left: float | None) -> None:
        given.append(left)
        await asyncio.sleep(0.2)

    on_one = Turns(lambda _handler: None)
    first = asyncio.create_task(on_one.call("handler", slow, 5.0, what="a send"))
    await asyncio.sleep(0)
    with pytest.raises(OperationTimeoutError, match=r"the turn on its SDK handler did not come within 0\.05 s"):
        await on_one.call("handler", slow, 0.05, what="a send")
    await first
    assert len(given) == 1 and given[0] is not None and 4.9 < given[0] <= 5.0


async def test_a_primary_send_that_never_returns_is_parked_within_its_bound(
    world, make_client, gate, monkeypatch
) -> None:
    """What an SDK send that lost track of its delivery does to the caller: before, it waited for ever
    (the drill once saw a send hang 300 s); now it is cut at its timeout (+ the slack), counts as a
    timeout (the entity fails over, the message is parked) and the next send gets a fresh handler."""
    real_send = fake_sender.ServiceBusSender.send_messages
    hang = {PRIMARY}

    async def send(self, message, *, timeout=None, **kwargs):  # noqa: ASYNC109 (the SDK signature)
        if self.fully_qualified_namespace in hang:
            await asyncio.Event().wait()
        return await real_send(self, message, timeout=timeout, **kwargs)

    monkeypatch.setattr(fake_sender.ServiceBusSender, "send_messages", send)
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(QUEUE)
        await asyncio.wait_for(sender.send_messages(ServiceBusMessage(b"stuck"), timeout=0.2), guard(10))
        assert sender.switched and client.stats.calls_cut == 1
        hang.clear()
        await gate.release()  # a ping: answered, back to the primary
        assert not sender.switched
        await sender.send_messages(ServiceBusMessage(b"after"))  # on a fresh handler
    assert [b"".join(m.body) for m in parked(world)] == [b"stuck"]
    arrived = world.namespace(PRIMARY).queue(QUEUE).active_messages()
    assert [b"".join(m.body) for m in arrived if not is_ping(m)] == [b"after"]


async def test_a_backlog_send_that_never_returns_is_cut_and_another_queue_takes_it(
    world, make_client, monkeypatch
) -> None:
    from azure.servicebus.exceptions import ServiceBusCommunicationError

    real_send = fake_sender.ServiceBusSender.send_messages
    stuck: list[str] = []

    async def send(self, message, *, timeout=None, **kwargs):  # noqa: ASYNC109 (the SDK signature)
        if self.fully_qualified_namespace == SECONDARY and not stuck:
            stuck.append(self.entity_name)
            await asyncio.Event().wait()
        return await real_send(self, message, timeout=timeout, **kwargs)

    monkeypatch.setattr(fake_sender.ServiceBusSender, "send_messages", send)
    world.fail(PRIMARY, QUEUE, ServiceBusCommunicationError)
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(QUEUE)
        await asyncio.wait_for(sender.send_messages(ServiceBusMessage(b"parked"), timeout=0.2), guard(10))
        assert client.stats.calls_cut == 1 and client.stats.backlog_send_failures == 1
        assert stuck[0] not in client.rotation.in_rotation()
    [message] = parked(world)
    assert b"".join(message.body) == b"parked"
    assert len(BACKLOG) > 1  # so another queue could take it
