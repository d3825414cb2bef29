"""A task sending through the failover sender, cancelled mid-send over the wire with the unmodified SDK,
ends every time (issue 34).

What ran on: Python 3.11's `asyncio.wait_for`, through which the SDK reads every frame, drops a
cancellation that arrives as its read completes (CPython gh-86296). The syphon mended the SDK's modules
(`sdk.keep_cancellations`) when it opened; the sender's client did not, so in a process without a syphon a
cancelled send could return as if nothing happened and its caller went on sending."""

from __future__ import annotations

import asyncio
import importlib
import random
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from azure.servicebus import ServiceBusMessage

from pairedbus import contract, sdk
from pairedbus.emulator.remote import EmulatorProcess
from pairedbus.sender import PairedNamespaceClient, PairedSender, SendAvailabilityOptions
from tests.load import guard

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]

COUNT = 2
BACKLOG = contract.backlog_queue_names("primary", COUNT)
KILLS = 10


@pytest.fixture
def brokers() -> Iterator[EmulatorProcess]:
    with EmulatorProcess(["primary", "secondary"]) as process:
        for name in BACKLOG:
            process.create_queue("secondary", name)
        process.create_queue("primary", "orders")
        yield process


@pytest.fixture
def sdk_as_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's modules with the process's own `asyncio` (as before anything in this process mended them:
    another test may have); restored afterwards."""
    for name in sdk.WAIT_FOR_CALLERS:
        monkeypatch.setattr(importlib.import_module(name), "asyncio", asyncio)


@pytest.fixture
def cancel_as_a_read_completes(monkeypatch: pytest.MonkeyPatch) -> Callable[[asyncio.Task[None]], None]:
    """Arms a cancellation of a task that lands as the SDK's next frame read completes: the window CPython
    gh-86296 drops it in, here every time instead of by chance. The hook is on the SDK's transport (a
    private class), where its `receive_frame` awaits the read under `wait_for`."""
    transport = importlib.import_module("azure.servicebus._pyamqp.aio._transport_async").AsyncTransport
    original = transport.read
    armed: list[asyncio.Task[None]] = []

    async def read(self: Any, **kwargs: Any) -> Any:
        frame = await original(self, **kwargs)
        while armed:
            armed.pop().cancel()
        return frame

    monkeypatch.setattr(transport, "read", read)
    return armed.append


async def _send_until_cancelled(sender: PairedSender, first: str, sent: asyncio.Event, stop: asyncio.Event) -> None:
    """Send until cancelled (or, once its cancellation was lost, until `stop`)."""
    number = 0
    while not stop.is_set():
        await sender.send_messages(ServiceBusMessage(b"x" * 64, message_id=f"{first}-{number}"))
        number += 1
        sent.set()


@pytest.mark.usefixtures("sdk_as_installed")
async def test_a_task_cancelled_as_a_read_of_its_send_completes_ends_every_time(
    brokers: EmulatorProcess, cancel_as_a_read_completes: Callable[[asyncio.Task[None]], None]
) -> None:
    """A task sending in a loop, cancelled ten times at random moments, each time as the SDK's next frame
    read completes: each cancelled task ends. On the code before (the client did not mend the SDK's
    modules), 10 of 10 went on sending."""
    rng = random.Random(34)
    ran_on: list[int] = []
    async with PairedNamespaceClient.from_connection_strings(
        brokers.connection_string("primary"),
        brokers.connection_string("secondary"),
        primary_name="primary",
        connection_verify=brokers.ca_file,
        options=SendAvailabilityOptions(backlog_queue_count=COUNT, failover_interval=timedelta(seconds=1)),
    ) as client:
        sender = client.get_queue_sender("orders")  # its link opened once: then every read is a send's
        for kill in range(KILLS):
            sent, stop = asyncio.Event(), asyncio.Event()
            task = asyncio.create_task(_send_until_cancelled(sender, f"k{kill}", sent, stop))
            await asyncio.wait_for(sent.wait(), guard(60))
            await asyncio.sleep(rng.uniform(0.0, 0.2))
            cancel_as_a_read_completes(task)
            done, _ = await asyncio.wait({task}, timeout=guard(5))  # a hang guard: it ends at once
            if not done or not task.cancelled():
                ran_on.append(kill)
                stop.set()  # let it go before the next kill
                await asyncio.wait({task}, timeout=guard(30))
    assert ran_on == []
