"""The fake ServiceBusSender (`testing/sender.py`): lists and batches in order, message and batch size limits,
and what a send refuses before it reaches the entity."""

from __future__ import annotations

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient
from azure.servicebus.exceptions import MessageSizeExceededError, ServiceBusError

from pairedbus import contract
from pairedbus.testing import Namespace, ServiceBusWorld

from .conftest import FQDN, body

BACKLOG = contract.backlog_queue_name("contoso", 0)


async def test_list_and_batch_sends_keep_order_and_sequence_numbers(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages([ServiceBusMessage(b"a"), ServiceBusMessage(b"b")])
        batch = await sender.create_message_batch()
        batch.add_message(ServiceBusMessage(b"c"))
        batch.add_message(ServiceBusMessage(b"d"))
        assert len(batch) == 2
        await sender.send_messages(batch)
        await sender.send_messages([])
    async with client.get_queue_receiver("q") as receiver:
        got = await receiver.receive_messages(max_message_count=10, max_wait_time=1)
    assert [body(m) for m in got] == [b"a", b"b", b"c", b"d"]
    assert [m.sequence_number for m in got] == [1, 2, 3, 4]


async def test_message_over_256_kb_raises_message_size_exceeded(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x" * (contract.MAX_MESSAGE_SIZE_BYTES - 1024)))
        with pytest.raises(MessageSizeExceededError) as caught:
            await sender.send_messages(ServiceBusMessage(b"x" * contract.MAX_MESSAGE_SIZE_BYTES))
        with pytest.raises(MessageSizeExceededError):
            await sender.send_messages([ServiceBusMessage(b"x" * 200_000), ServiceBusMessage(b"x" * 100_000)])
    assert caught.value._retryable is False
    assert ns.queue("q").counts.sends == 1


async def test_message_just_under_the_limit_is_measured_exactly(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    overhead = 61  # the SDK's encoded size of an empty-bodied message is body + ~61 bytes
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x" * (contract.MAX_MESSAGE_SIZE_BYTES - overhead - 16)))
        with pytest.raises(MessageSizeExceededError):
            await sender.send_messages(
                ServiceBusMessage(
                    b"x" * (contract.MAX_MESSAGE_SIZE_BYTES - overhead - 16),
                    application_properties={"x-ms-path": "o" * 64},
                )
            )


async def test_batch_add_message_raises_when_full(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        batch = await sender.create_message_batch()
        added = 0
        with pytest.raises(MessageSizeExceededError):
            while True:
                batch.add_message(ServiceBusMessage(b"x" * 10_000))
                added += 1
        assert added == 25
        assert batch.size_in_bytes <= batch.max_size_in_bytes == contract.MAX_MESSAGE_SIZE_BYTES
        await sender.send_messages(batch)
        with pytest.raises(ValueError):
            await sender.create_message_batch(max_size_in_bytes=contract.MAX_MESSAGE_SIZE_BYTES + 1)
    assert ns.queue("q").counts.sends == 25


async def test_premium_namespace_allows_larger_messages(world: ServiceBusWorld, client: ServiceBusClient) -> None:
    world.namespace(FQDN, sku=contract.SKU_PREMIUM).create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x" * 500_000))


async def test_resending_a_received_message_forwards_its_content(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue(BACKLOG)
    ns.create_queue("orders")
    async with client.get_queue_sender(BACKLOG) as sender:
        await sender.send_messages(ServiceBusMessage(b"x", message_id="m", application_properties={"k": "v"}))
    async with client.get_queue_receiver(BACKLOG) as receiver, client.get_queue_sender("orders") as forward:
        [message] = await receiver.receive_messages(max_wait_time=1)
        message.session_id = None
        await forward.send_messages(message)
        await receiver.complete_message(message)
    [moved] = ns.queue("orders").active_messages()
    assert (moved.message_id, moved.application_properties) == ("m", {b"k": b"v"})


async def test_partition_key_differing_from_session_id_is_rejected(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    message = ServiceBusMessage(b"x", partition_key="p")
    message.session_id = "s"  # the SDK only checks the other order client-side
    async with client.get_queue_sender("q") as sender:
        with pytest.raises(ServiceBusError, match="PartitionKey"):
            await sender.send_messages(message)
    assert ns.queue("q").counts.sends == 0
