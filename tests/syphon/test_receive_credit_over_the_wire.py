"""The syphon's receive leaves no link credit open once it returned, over the wire with the unmodified SDK
(issue 34): with `prefetch_count=0` the SDK grants a receive's `max_message_count` as credit and leaves what
a receive that returned early did not use, and the broker locks messages on it that nobody receives."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient

from pairedbus.emulator.remote import EmulatorProcess
from pairedbus.syphon.pump import close_receiver, receive_leaving_no_credit

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


@pytest.fixture
def brokers() -> Iterator[EmulatorProcess]:
    with EmulatorProcess(["secondary"]) as process:
        process.create_queue("secondary", "backlog", lock_duration="PT30S")
        yield process


async def _send(client: ServiceBusClient, prefix: str, count: int) -> None:
    async with client.get_queue_sender("backlog") as sender:
        await sender.send_messages([ServiceBusMessage(b"x", message_id=f"{prefix}{i}") for i in range(count)])


async def test_messages_sent_after_a_receive_returned_early_are_not_locked_by_its_receiver(
    brokers: EmulatorProcess,
) -> None:
    """A receive of up to 10 returns the 3 messages there; 5 sent afterwards stay free while its receiver
    is open and not receiving. On the code before, all 5 were locked at once on the 7 credits left (peeked
    with a delivery count of 1: delivered to a receiver that never received them), until the SDK's
    keep-alive released them up to 5 s later and 2 were locked again on the credit still left."""
    connection_string = brokers.connection_string("secondary")
    async with (
        ServiceBusClient.from_connection_string(connection_string) as syphons,
        ServiceBusClient.from_connection_string(connection_string) as others,
    ):
        await _send(others, "early-", 3)
        async with syphons.get_queue_receiver("backlog", prefetch_count=0) as receiver:
            received = await receive_leaving_no_credit(receiver, 10, 10.0)
            assert len(received) == 3
            for message in received:
                await receiver.complete_message(message)
            await _send(others, "later-", 5)
            await asyncio.sleep(0.5)  # the broker transfers at once on open credit: long enough to see it
            async with others.get_queue_receiver("backlog") as watcher:
                peeked = await watcher.peek_messages(max_message_count=10)
        assert sorted((str(m.message_id), m.delivery_count) for m in peeked) == [(f"later-{i}", 0) for i in range(5)]


async def test_a_receiver_closed_after_a_receive_that_returned_before_its_transfers_leaves_none_locked() -> None:
    """A receive of up to 250 that returns before the broker's transfers arrive (its wait runs out first, as a
    drain's short wait did under load) takes back its credit; closed then, its receiver leaves every message it
    did not return free for the next receiver. On the code before, the SDK's close released nothing on a link
    with no credit, and the 250 transfers on the wire stayed locked for the lock duration (50 of 300 received
    next, in 4 runs of 4; the syphon's drains stalled 5 minutes)."""
    with EmulatorProcess(["secondary"]) as process:
        process.create_queue("secondary", "backlog", lock_duration="PT5M")
        async with ServiceBusClient.from_connection_string(process.connection_string("secondary")) as client:
            await _send(client, "parked-", 300)
            receiver = client.get_queue_receiver("backlog", prefetch_count=0)
            await receiver.__aenter__()
            returned = await receive_leaving_no_credit(receiver, 250, 0.001)
            await close_receiver(receiver, "backlog")
            free: list[object] = []
            async with client.get_queue_receiver("backlog", prefetch_count=0) as next_receiver:
                for _ in range(10):  # as many receives as the transfers take, each 300 at most
                    batch = await next_receiver.receive_messages(max_message_count=300, max_wait_time=1.0)
                    free.extend(batch)
                    if not batch or len(free) + len(returned) >= 300:
                        break
    assert len(returned) < 250  # the receive did return early
    assert len(free) == 300 - len(returned)
