"""Partitioned entities have fragments (issue 12; spec: partitioning.md).

Observable facts used here: a partitioned entity's sequence numbers carry the fragment in their
top 16 bits (https://learn.microsoft.com/azure/service-bus-messaging/message-sequencing), so a
test can see where a message went without asking the fake's model.
"""

from __future__ import annotations

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient
from azure.servicebus.exceptions import ServiceBusServerBusyError

from pairedbus.testing import Namespace, ServiceBusWorld
from tests.testing.conftest import FQDN


def fragment(sequence_number: int) -> int:
    return sequence_number >> 48


async def _send_and_peek(client: ServiceBusClient, queue: str, messages: list[ServiceBusMessage]) -> list[int]:
    async with client.get_queue_sender(queue) as sender:
        await sender.send_messages(messages)
    async with client.get_queue_receiver(queue) as receiver:
        peeked = await receiver.peek_messages(len(messages) + 1, sequence_number=1)
    return [m.sequence_number for m in peeked]


async def test_a_standard_partitioned_queue_has_16_fragments_and_unkeyed_messages_use_them_all(
    ns: Namespace, client: ServiceBusClient
) -> None:
    ns.create_queue("q", enable_partitioning=True)
    numbers = await _send_and_peek(client, "q", [ServiceBusMessage(str(i)) for i in range(32)])
    assert sorted({fragment(n) for n in numbers}) == list(range(16))


async def test_a_premium_partitioned_queue_has_the_namespace_partition_count(
    world: ServiceBusWorld, client: ServiceBusClient
) -> None:
    premium = world.namespace(FQDN, sku="Premium", messaging_partitions=4)
    premium.create_queue("q")  # every Premium entity is partitioned in a partitioned namespace
    numbers = await _send_and_peek(client, "q", [ServiceBusMessage(str(i)) for i in range(12)])
    assert sorted({fragment(n) for n in numbers}) == [0, 1, 2, 3]


async def test_a_non_partitioned_queue_has_one_fragment(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    numbers = await _send_and_peek(client, "q", [ServiceBusMessage(str(i)) for i in range(5)])
    assert numbers == [1, 2, 3, 4, 5]


async def test_session_id_and_partition_key_pin_messages_to_one_fragment(
    ns: Namespace, client: ServiceBusClient
) -> None:
    ns.create_queue("q", enable_partitioning=True)
    numbers = await _send_and_peek(
        client, "q", [ServiceBusMessage(str(i), partition_key="tenant-7") for i in range(10)]
    )
    assert len({fragment(n) for n in numbers}) == 1
    ns.create_queue("sq", enable_partitioning=True, requires_session=True)
    async with client.get_queue_sender("sq") as sender:
        await sender.send_messages([ServiceBusMessage(str(i), session_id="s-1") for i in range(10)])
    async with client.get_queue_receiver("sq", session_id="s-1") as receiver:
        got = await receiver.peek_messages(20)
    assert len({fragment(m.sequence_number) for m in got}) == 1


async def test_message_id_is_the_key_only_under_duplicate_detection(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("dedup", enable_partitioning=True, requires_duplicate_detection=True)
    ns.create_queue("plain", enable_partitioning=True)
    same_id = [ServiceBusMessage(str(i), message_id=f"id-{i % 2}") for i in range(2)]
    pinned = await _send_and_peek(client, "dedup", [*same_id, ServiceBusMessage("again", message_id="id-0")])
    assert len(pinned) == 2  # the third was a duplicate
    spread = await _send_and_peek(client, "plain", [ServiceBusMessage(str(i), message_id="same") for i in range(16)])
    assert len({fragment(n) for n in spread}) == 16  # no key: round-robin despite equal ids


async def test_a_failed_fragment_fails_only_the_keys_it_holds(
    ns: Namespace, world: ServiceBusWorld, client: ServiceBusClient
) -> None:
    ns.create_queue("q", enable_partitioning=True)
    keys = [f"key-{i}" for i in range(40)]
    async with client.get_queue_sender("q") as sender:
        for key in keys:
            await sender.send_messages(ServiceBusMessage(f"{key}/0", partition_key=key))
    async with client.get_queue_receiver("q") as receiver:
        first = await receiver.peek_messages(len(keys), sequence_number=1)
    where = {str(m).split("/")[0]: fragment(m.sequence_number) for m in first}
    victim = where["key-0"]
    world.fail_partition(FQDN, "q", victim)
    pinned = [k for k in keys if where[k] == victim]
    free = [k for k in keys if where[k] != victim]
    assert pinned and free
    async with client.get_queue_sender("q") as sender:
        for key in pinned:
            with pytest.raises(ServiceBusServerBusyError):
                await sender.send_messages(ServiceBusMessage(f"{key}/1", partition_key=key))
        for key in free:
            await sender.send_messages(ServiceBusMessage(f"{key}/1", partition_key=key))
        for i in range(20):  # unkeyed traffic is never refused while any fragment is up
            await sender.send_messages(ServiceBusMessage(f"free-{i}/0"))
    async with client.get_queue_receiver("q", max_wait_time=0.5) as receiver:
        got = []
        while batch := await receiver.receive_messages(100):
            got.extend(batch)
            for m in batch:
                await receiver.complete_message(m)
        assert not any(fragment(m.sequence_number) == victim for m in got)  # held by the failed fragment
        assert {str(m) for m in got} >= {f"{k}/1" for k in free}
        world.heal_partition(FQDN, "q", victim)
        rest = await receiver.receive_messages(100)
    assert sorted(str(m) for m in rest) == sorted(f"{k}/0" for k in pinned)


async def test_order_holds_per_key(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q", enable_partitioning=True)
    async with client.get_queue_sender("q") as sender:
        for i in range(30):
            await sender.send_messages(ServiceBusMessage(f"{i % 3}:{i}", partition_key=f"k{i % 3}"))
    async with client.get_queue_receiver("q", max_wait_time=0.5) as receiver:
        got = await receiver.receive_messages(100)
    for key in "012":
        seen = [int(str(m).split(":")[1]) for m in got if str(m).startswith(f"{key}:")]
        assert seen == sorted(seen) and len(seen) == 10


def test_fail_partition_checks_the_fragment_exists(ns: Namespace, world: ServiceBusWorld) -> None:
    ns.create_queue("q")
    with pytest.raises(ValueError, match="1 partition"):
        world.fail_partition(FQDN, "q", 3)
