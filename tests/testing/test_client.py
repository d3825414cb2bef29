"""The fake ServiceBusClient (`testing/client.py`): how it finds its namespace and entities, and what closing
the world's connections does to its open handlers."""

from __future__ import annotations

import asyncio

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient
from azure.servicebus.exceptions import MessagingEntityNotFoundError, ServiceBusConnectionError

from pairedbus.testing import Namespace, ServiceBusWorld
from tests.load import guard

from .conftest import FQDN, Credential


async def test_unknown_entity_raises_messaging_entity_not_found(client: ServiceBusClient) -> None:
    async with client.get_queue_sender("missing") as sender:
        with pytest.raises(MessagingEntityNotFoundError):
            await sender.send_messages(ServiceBusMessage(b"x"))
    with pytest.raises(MessagingEntityNotFoundError):
        async with client.get_queue_receiver("missing"):
            pass


async def test_from_connection_string_uses_endpoint_and_entity_path(ns: Namespace) -> None:
    ns.create_queue("q")
    conn = f"Endpoint=sb://{FQDN}/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=abc=;EntityPath=q"
    async with ServiceBusClient.from_connection_string(conn) as client:
        assert client.fully_qualified_namespace == FQDN
        with pytest.raises(ValueError, match="EntityPath"):
            client.get_queue_sender("other")
        async with client.get_queue_sender("q") as sender:
            await sender.send_messages(ServiceBusMessage(b"x"))
    assert ns.queue("q").counts.sends == 1


async def test_close_connections_faults_open_clients_and_wakes_receivers(ns: Namespace, world: ServiceBusWorld) -> None:
    ns.create_queue("q")
    async with ServiceBusClient(FQDN, Credential()) as faulted:
        receiver = faulted.get_queue_receiver("q")
        sender = faulted.get_queue_sender("q")
        waiting = asyncio.create_task(receiver.receive_messages(max_wait_time=600))
        await asyncio.sleep(0)
        assert world.close_connections(FQDN) == 1
        with pytest.raises(ServiceBusConnectionError) as caught:
            await asyncio.wait_for(waiting, guard(5))
        assert caught.value._retryable is True
        with pytest.raises(ServiceBusConnectionError):
            await sender.send_messages(ServiceBusMessage(b"x"))
    async with ServiceBusClient(FQDN, Credential()) as fresh, fresh.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))
