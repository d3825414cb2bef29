"""Receivers never hand a ping to application code."""

from __future__ import annotations

import pytest
from azure.core.credentials import AzureNamedKeyCredential
from azure.servicebus import ServiceBusMessage, ServiceBusReceiveMode
from azure.servicebus.aio import ServiceBusClient

from pairedbus import contract
from pairedbus.pairing.ping import is_ping, ping_message
from pairedbus.pairing.receive import PingSkippingReceiver, ping_filtered
from pairedbus.servicebus.world import ServiceBusWorld

FQDN = "contoso.servicebus.windows.net"
QUEUE = "orders"


@pytest.fixture
def world(servicebus_world: ServiceBusWorld) -> ServiceBusWorld:
    servicebus_world.namespace(FQDN).create_queue(QUEUE)
    return servicebus_world


async def _send_mix(client: ServiceBusClient) -> None:
    async with client.get_queue_sender(QUEUE) as sender:
        await sender.send_messages(
            [
                ping_message(session=False),
                ServiceBusMessage(b"a"),
                ping_message(session=False),
                ServiceBusMessage(b"b"),
                ping_message(session=False),
            ]
        )


def test_is_ping_is_the_content_type_and_nothing_else():
    assert is_ping(ServiceBusMessage(b"", content_type=contract.PING_CONTENT_TYPE))
    assert is_ping(ServiceBusMessage(b"payload", content_type=contract.PING_CONTENT_TYPE))
    assert not is_ping(ServiceBusMessage(b"", content_type="application/json"))
    assert not is_ping(ServiceBusMessage(b""))


async def test_receive_messages_completes_pings_and_returns_the_rest(world):
    async with ServiceBusClient(FQDN, AzureNamedKeyCredential("k", "v")) as client:
        await _send_mix(client)
        async with ping_filtered(client.get_queue_receiver(QUEUE, max_wait_time=0.05)) as receiver:
            got = await receiver.receive_messages(max_message_count=10, max_wait_time=0.05)
            assert [b"".join(m.body) for m in got] == [b"a", b"b"]
            for message in got:
                await receiver.complete_message(message)  # settlement goes to the wrapped receiver
            assert receiver.pings_skipped == 3
    counts = world.namespace(FQDN).queue(QUEUE).message_counts()
    assert counts["active"] == 0  # the pings were completed, not left to expire


async def test_async_iteration_skips_pings(world):
    async with ServiceBusClient(FQDN, AzureNamedKeyCredential("k", "v")) as client:
        await _send_mix(client)
        seen = []
        async with PingSkippingReceiver(client.get_queue_receiver(QUEUE, max_wait_time=0.05)) as receiver:
            async for message in receiver:
                seen.append(b"".join(message.body))
                await receiver.complete_message(message)
        assert seen == [b"a", b"b"]
        assert receiver.pings_skipped == 3


async def test_receive_and_delete_receivers_drop_pings_without_settling(world):
    async with ServiceBusClient(FQDN, AzureNamedKeyCredential("k", "v")) as client:
        await _send_mix(client)
        raw = client.get_queue_receiver(
            QUEUE, receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE, max_wait_time=0.05
        )
        async with ping_filtered(raw) as receiver:
            got = await receiver.receive_messages(max_message_count=10, max_wait_time=0.05)
        assert [b"".join(m.body) for m in got] == [b"a", b"b"]
    assert world.namespace(FQDN).queue(QUEUE).message_counts()["active"] == 0
