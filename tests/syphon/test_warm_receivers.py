"""Receivers opened ahead of drain()'s first listing: handed out once open, closed when not needed or when
their open failed (the pump then opens its own and meets the error the house way)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from azure.servicebus.exceptions import MessagingEntityNotFoundError, ServiceBusError

from pairedbus.syphon.warm_receivers import WarmReceivers
from tests.load import guard


class _Receiver:
    def __init__(self, queue: str, opened: asyncio.Future[None], kwargs: dict[str, Any]) -> None:
        self.queue, self.kwargs, self._opened = queue, kwargs, opened
        self.entered = self.closed = False

    async def __aenter__(self) -> _Receiver:
        self.entered = True
        await self._opened
        return self

    async def close(self) -> None:
        self.closed = True


class _Client:
    """Each receiver's open waits on a future the test resolves (or fails)."""

    def __init__(self) -> None:
        self.made: list[_Receiver] = []
        self.opens: list[asyncio.Future[None]] = []

    def get_queue_receiver(self, queue_name: str, **kwargs: Any) -> _Receiver:
        opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.opens.append(opened)
        self.made.append(_Receiver(queue_name, opened, kwargs))
        return self.made[-1]


async def test_an_opened_receiver_is_handed_out_once_for_its_queue_and_then_new_ones_are_made() -> None:
    client = _Client()
    warm = WarmReceivers(client, timeout=5)
    warm.open(["q/0", "q/1"], 2, prefetch_count=0)
    await asyncio.sleep(0)
    assert [r.entered for r in client.made] == [True] * 4  # all opening at once
    for opened in client.opens:
        opened.set_result(None)

    await warm.ready("q/0", halt=asyncio.Event())

    first, second = warm.get_queue_receiver("q/0", prefetch_count=0), warm.get_queue_receiver("q/0", prefetch_count=0)
    assert {first, second} == set(client.made[:2])
    third = warm.get_queue_receiver("q/0", prefetch_count=0)
    assert third not in client.made[:4] and third.queue == "q/0"
    assert warm.get_queue_receiver("q/1", prefetch_count=0) not in client.made[2:4]  # q/1 is not ready yet


async def test_a_receiver_asked_for_with_other_keywords_is_a_new_one() -> None:
    client = _Client()
    warm = WarmReceivers(client, timeout=5)
    warm.open(["q/0"], 1, prefetch_count=0)
    client.opens[0].set_result(None)
    await warm.ready("q/0", halt=asyncio.Event())

    other = warm.get_queue_receiver("q/0", prefetch_count=10)

    assert other is not client.made[0] and other.kwargs == {"prefetch_count": 10}


async def test_a_receiver_whose_open_failed_is_closed_and_never_handed_out() -> None:
    client = _Client()
    warm = WarmReceivers(client, timeout=5)
    warm.open(["q/0"], 2, prefetch_count=0)
    client.opens[0].set_result(None)
    client.opens[1].set_exception(MessagingEntityNotFoundError(message="no such queue"))

    await warm.ready("q/0", halt=asyncio.Event())

    assert client.made[1].closed and not client.made[0].closed
    assert warm.get_queue_receiver("q/0", prefetch_count=0) is client.made[0]
    assert warm.get_queue_receiver("q/0", prefetch_count=0) not in client.made[:2]


async def test_halting_ends_the_wait_for_opens_and_closes_the_receivers_still_opening() -> None:
    client = _Client()
    warm = WarmReceivers(client, timeout=5)
    warm.open(["q/0"], 1, prefetch_count=0)
    halt = asyncio.Event()
    ready = asyncio.create_task(warm.ready("q/0", halt=halt))
    await asyncio.sleep(0)
    assert not ready.done()

    halt.set()
    await asyncio.wait_for(ready, guard(1))

    assert client.made[0].closed and client.opens[0].cancelled()


async def test_an_open_that_outlasts_the_timeout_is_given_up() -> None:
    client = _Client()
    warm = WarmReceivers(client, timeout=0.01)
    warm.open(["q/0"], 1, prefetch_count=0)

    await asyncio.wait_for(warm.ready("q/0", halt=asyncio.Event()), guard(1))

    assert client.made[0].closed
    assert warm.get_queue_receiver("q/0", prefetch_count=0) is not client.made[0]


async def test_release_and_close_shut_every_receiver_not_handed_out() -> None:
    client = _Client()
    warm = WarmReceivers(client, timeout=5)
    warm.open(["q/0", "q/1", "q/2"], 2, prefetch_count=0)
    for opened in client.opens:
        opened.set_result(None)
    await warm.ready("q/0", halt=asyncio.Event())
    taken = warm.get_queue_receiver("q/0", prefetch_count=0)
    assert warm.queues == {"q/0", "q/1", "q/2"}

    await warm.release("q/1")  # e.g. not listed
    assert [r.closed for r in client.made[2:4]] == [True, True]
    await warm.close()

    assert warm.queues == set()
    assert [r.closed for r in client.made if r is not taken] == [True] * 5 and not taken.closed


async def test_a_failed_open_and_a_failed_close_are_logged_with_the_queue_and_the_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = _Client()
    warm = WarmReceivers(client, timeout=5)
    warm.open(["q/7"], 1, prefetch_count=0)
    client.opens[0].set_exception(MessagingEntityNotFoundError(message="no such queue"))
    await asyncio.sleep(0)  # the open runs and fails

    async def refuse() -> None:
        raise ServiceBusError("link already detached")

    client.made[0].close = refuse  # type: ignore[method-assign]

    with caplog.at_level(logging.DEBUG, logger="pairedbus.syphon"):
        await warm.release("q/7")

    logged = {r.getMessage(): (r.backlog_queue, r.error) for r in caplog.records}  # type: ignore[attr-defined]
    assert set(logged) == {"opening a backlog receiver ahead failed", "closing a backlog receiver failed"}
    opening, closing = logged["opening a backlog receiver ahead failed"], logged["closing a backlog receiver failed"]
    assert opening[0] == closing[0] == "q/7"
    assert "no such queue" in opening[1] and "link already detached" in closing[1]
