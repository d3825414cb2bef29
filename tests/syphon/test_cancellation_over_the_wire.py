"""A syphon cancelled mid-work, over the wire with the unmodified SDK, ends every time (issue 34: the
wire drill's killed syphons ran on in 7 and 4 of 20 kills and were left behind).

What ran on: Python 3.11's `asyncio.wait_for`, through which the SDK reads every frame, drops a
cancellation that arrives as its read completes (CPython gh-86296; `sdk.keep_cancellations`); a receive
that lost its cancellation went on into its 15-minute long poll, and the pump waited for it."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient

from pairedbus import contract
from pairedbus.drill.run import SYPHON_OPTIONS
from pairedbus.emulator.remote import EmulatorProcess
from pairedbus.pairing.aliasing import parked_copy
from pairedbus.pairing.endpoints import NamespaceEndpoint
from pairedbus.syphon import Syphon
from tests.load import guard

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]

COUNT = 4
BACKLOG = contract.backlog_queue_names("primary", COUNT)
KILLS = 10
#: Messages parked before each kill: enough that the syphon is receiving, sending and settling.
PARKED = 100


@pytest.fixture
def brokers() -> Iterator[EmulatorProcess]:
    with EmulatorProcess(["primary", "secondary"]) as process:
        for name in BACKLOG:
            process.create_queue("secondary", name, lock_duration="PT5S")
        process.create_queue("primary", "orders", requires_duplicate_detection=True)
        yield process


def _endpoint(brokers: EmulatorProcess, namespace: str) -> NamespaceEndpoint:
    return NamespaceEndpoint.from_connection_string(
        brokers.connection_string(namespace), name=namespace, connection_verify=brokers.ca_file
    )


async def _park(brokers: EmulatorProcess, first: int) -> None:
    async with ServiceBusClient.from_connection_string(brokers.connection_string("secondary")) as client:
        for q, name in enumerate(BACKLOG):
            async with client.get_queue_sender(name) as sender:
                await sender.send_messages(
                    [
                        parked_copy(ServiceBusMessage(b"x" * 64, message_id=f"m{first + i}"), "orders")
                        for i in range(q, PARKED, COUNT)
                    ]
                )


async def test_a_syphon_cancelled_mid_receive_or_mid_send_ends_every_time(brokers: EmulatorProcess) -> None:
    """Ten kills at random moments of the service loop (receiving, sending home, settling; half with the
    secondary's connections cut, as the drill's kills do): each cancelled syphon ends. On the code before,
    one kill in 5-20 left a syphon running past 15 s (a receive into its long poll)."""
    rng = random.Random(34)
    ran_on: list[int] = []
    for kill in range(KILLS):
        await _park(brokers, kill * PARKED)
        syphon = Syphon(
            primary=_endpoint(brokers, "primary"),
            secondary=_endpoint(brokers, "secondary"),
            credential=None,
            backlog_queue_count=COUNT,
            **SYPHON_OPTIONS,
        )
        stop = asyncio.Event()

        async def serve(syphon: Syphon = syphon, stop: asyncio.Event = stop) -> None:
            async with syphon:
                await syphon.run(stop)

        task = asyncio.create_task(serve())
        await asyncio.sleep(rng.uniform(0.5, 3.0))
        if kill % 2:
            await asyncio.to_thread(brokers.faults, "secondary", drop=True)
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=guard(30))  # a hang guard: 0.0-7 s here
        if not done:
            ran_on.append(kill)
            stop.set()  # let it go before the next kill (a stop is honoured: it is the cancel that was lost)
            await asyncio.wait({task}, timeout=guard(60))
        else:
            assert task.cancelled()
    assert ran_on == []
    home = brokers.queue("primary", "orders")
    assert len({m["message_id"] for m in home["active"]}) == len(home["active"])  # nothing doubled
