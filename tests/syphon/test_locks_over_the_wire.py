"""The syphon's locks over the wire, with the unmodified SDK against two emulated namespaces in
another process: a renewal the broker answers with lock-lost, and a backlog message that reached
its queue's MaxDeliveryCount."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient

from pairedbus import contract
from pairedbus.emulator.remote import EmulatorProcess
from pairedbus.pairing.aliasing import parked_copy
from pairedbus.pairing.endpoints import NamespaceEndpoint
from pairedbus.syphon import Syphon
from tests.load import guard

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

BACKLOG = contract.backlog_queue_names("primary", 1)[0]
COUNT = 6


@pytest.fixture
def brokers() -> Iterator[EmulatorProcess]:
    with EmulatorProcess(["primary", "secondary"]) as process:
        process.create_queue("secondary", BACKLOG, lock_duration="PT5S")
        process.create_queue(
            "primary", "orders", requires_duplicate_detection=True, duplicate_detection_history_time_window="PT10M"
        )
        yield process


def _syphon(brokers: EmulatorProcess, **options: Any) -> Syphon:
    primary, secondary = (
        NamespaceEndpoint.from_connection_string(
            brokers.connection_string(n), name=n, connection_verify=brokers.ca_file
        )
        for n in ("primary", "secondary")
    )
    # retry_total=0: a send the busy primary rejects fails at once, not after the SDK's own retries
    defaults: dict[str, Any] = {
        "backlog_queue_count": 1,
        "client_kwargs": {"retry_total": 0},
        "drain_wait": timedelta(milliseconds=200),
    }
    return Syphon(primary=primary, secondary=secondary, credential=None, **{**defaults, **options})


async def _park(brokers: EmulatorProcess, count: int) -> None:
    async with (
        ServiceBusClient.from_connection_string(brokers.connection_string("secondary")) as client,
        client.get_queue_sender(BACKLOG) as sender,
    ):
        await sender.send_messages(
            [parked_copy(ServiceBusMessage(f"body {i}", message_id=f"m{i}"), "orders") for i in range(count)]
        )


class _Unretrieved:
    """The loop's exception handler, recording what asyncio reports instead of raising (a task that
    died with nobody awaiting it: "Task exception was never retrieved")."""

    def __init__(self) -> None:
        self.reports: list[str] = []

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        self.reports.append(f"{context.get('message')}: {context.get('exception')!r}")
        loop.default_exception_handler(context)


async def test_a_renewal_that_finds_the_lock_lost_leaves_the_message_to_its_redelivery(
    brokers: EmulatorProcess,
) -> None:
    """The primary rejects every send (server busy), so the syphon retries in place and renews the
    locks it holds; the broker answers two renewals with lock-lost and makes those messages
    available again. The syphon must not settle a message whose lock it lost (the complete would
    be refused: MessageLockLostError counted once per renewal, never again for the complete); the
    redelivered copies are moved, and the destination's duplicate detection keeps one of each. No
    renewal task dies unobserved ("Task exception was never retrieved")."""
    unretrieved = _Unretrieved()
    asyncio.get_running_loop().set_exception_handler(unretrieved)
    await _park(brokers, COUNT)
    brokers.faults("primary", busy=["reject"])
    brokers.lose_renewals("secondary", 2)
    async with _syphon(
        brokers,
        lock_duration=timedelta(seconds=5),
        lock_renewal_fraction=0.2,  # renewed every second
        retry_hold=timedelta(seconds=1),
        backoff_initial=timedelta(milliseconds=200),
        backoff_max=timedelta(milliseconds=200),
    ) as syphon:
        draining = asyncio.ensure_future(syphon.drain())
        try:
            for _ in range(600):  # bounded: 30 s; it took about 1 s here
                if syphon.stats.errors["MessageLockLostError"] >= 2 or draining.done():
                    break
                await asyncio.sleep(0.05)
            brokers.heal("primary")
            stats = await asyncio.wait_for(draining, guard(60))
        finally:
            draining.cancel()
    gc.collect()  # a task that died unobserved is reported when it is collected
    await asyncio.sleep(0)
    home = brokers.queue("primary", "orders")
    assert sorted(m["message_id"] for m in home["active"]) == sorted(f"m{i}" for i in range(COUNT))
    assert home["duplicates_dropped"] == 2  # the redelivered copies of the two sent before their lock was lost
    assert stats.errors["MessageLockLostError"] == 2  # the renewals; no complete was tried on a lost lock
    assert stats.moved == COUNT
    backlog = brokers.queue("secondary", BACKLOG)
    assert backlog["counts"]["active"] == 0 and backlog["dead_letter"] == []
    assert [r for r in unretrieved.reports if "never retrieved" in r] == []


async def test_max_delivery_count_reached_on_a_backlog_queue_dead_letters_it_there_and_nothing_is_lost(
    brokers: EmulatorProcess,
) -> None:
    """A backlog message whose destination stays unavailable is left locked and comes back each
    time its lock runs out, its delivery count one higher (settlement.md). On a queue with the spec's
    MaxDeliveryCount (int.MaxValue, paired-namespaces.md) it comes back until it is moved home; on a
    queue drifted to MaxDeliveryCount 1 the broker dead-letters it after that one delivery
    (MaxDeliveryCountExceeded), in the backlog queue's own dead-letter queue, where it stays whole:
    the syphon does not move, complete or drop it, and counts it as neither moved nor dead-lettered
    by itself."""
    spec, drifted = contract.backlog_queue_names("mdc", 2)
    brokers.create_queue("secondary", spec, lock_duration="PT5S", max_delivery_count=2_147_483_647)
    brokers.create_queue("secondary", drifted, lock_duration="PT5S", max_delivery_count=1)
    async with ServiceBusClient.from_connection_string(brokers.connection_string("secondary")) as client:
        for name, message_id in ((spec, "kept"), (drifted, "exhausted")):
            async with client.get_queue_sender(name) as sender:
                await sender.send_messages(parked_copy(ServiceBusMessage(message_id, message_id=message_id), "orders"))
    brokers.faults("primary", busy=["reject"])
    async with _syphon(
        brokers,
        backlog_prefix="mdc",
        backlog_queue_count=2,
        lock_duration=timedelta(seconds=5),
        retry_hold=timedelta(seconds=1),
        backoff_initial=timedelta(seconds=2),  # over the retry hold: left locked at the first failure
        backoff_max=timedelta(seconds=2),
    ) as syphon:
        draining = asyncio.ensure_future(syphon.drain())
        try:
            for _ in range(600):  # bounded: 30 s
                if syphon.stats.left_locked >= 2 or draining.done():
                    break
                await asyncio.sleep(0.05)
            brokers.heal("primary")  # both come back when their 5 s locks run out
            stats = await asyncio.wait_for(draining, guard(60))
        finally:
            draining.cancel()
    home = brokers.queue("primary", "orders")["active"]
    assert [m["message_id"] for m in home] == ["kept"]
    assert home[0]["delivery_count"] == 0
    kept = brokers.queue("secondary", spec)
    assert kept["counts"]["active"] == 0 and kept["dead_letter"] == []
    exhausted = brokers.queue("secondary", drifted)
    assert exhausted["counts"]["active"] == 0
    [dead] = exhausted["dead_letter"]
    assert (dead["message_id"], dead["body"], dead["dead_letter_reason"]) == (
        "exhausted",
        "exhausted",
        "MaxDeliveryCountExceeded",
    )
    assert dead["application_properties"]  # its routing kept: it can still be moved home by hand
    assert stats.moved == 1 and stats.dead_lettered == 0 and stats.left_locked >= 2
