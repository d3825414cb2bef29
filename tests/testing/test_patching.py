"""mock_servicebus() swaps the SDK's clients everywhere they are bound, and restores them."""

from __future__ import annotations

import azure.servicebus
import azure.servicebus.aio
import azure.servicebus.aio.management
import azure.servicebus.management
import pytest
from azure.servicebus import ServiceBusMessage

from pairedbus.testing import active_world, aio_client, mock_servicebus
from pairedbus.testing import admin as fake_admin
from pairedbus.testing import sync_client as fake_sync

from . import early_import
from .conftest import FQDN, Credential

REAL_AIO_CLIENT = azure.servicebus.aio.ServiceBusClient
REAL_SYNC_CLIENT = azure.servicebus.ServiceBusClient
REAL_AIO_ADMIN = azure.servicebus.aio.management.ServiceBusAdministrationClient
REAL_SYNC_ADMIN = azure.servicebus.management.ServiceBusAdministrationClient


def test_module_that_imported_the_client_before_the_patch_gets_the_fake() -> None:
    assert early_import.ServiceBusClient is REAL_AIO_CLIENT
    with mock_servicebus():
        assert early_import.ServiceBusClient is aio_client.ServiceBusClient
        assert early_import.SyncServiceBusClient is fake_sync.ServiceBusClient
        assert early_import.ServiceBusAdministrationClient is fake_admin.AsyncServiceBusAdministrationClient
        assert azure.servicebus.aio.ServiceBusClient is aio_client.ServiceBusClient
        assert azure.servicebus.management.ServiceBusAdministrationClient is fake_admin.ServiceBusAdministrationClient
    assert early_import.ServiceBusClient is REAL_AIO_CLIENT
    assert early_import.SyncServiceBusClient is REAL_SYNC_CLIENT
    assert early_import.ServiceBusAdministrationClient is REAL_AIO_ADMIN
    assert azure.servicebus.management.ServiceBusAdministrationClient is REAL_SYNC_ADMIN


async def test_early_imported_client_talks_to_the_fake_world() -> None:
    with mock_servicebus() as world:
        world.namespace(FQDN).create_queue("q")
        async with early_import.ServiceBusClient(FQDN, Credential()) as client:
            async with client.get_queue_sender("q") as sender:
                await sender.send_messages(ServiceBusMessage(b"x"))
        assert world.namespace(FQDN).queue("q").counts.sends == 1


def test_patch_is_restored_even_when_the_block_raises() -> None:
    with pytest.raises(RuntimeError), mock_servicebus():
        raise RuntimeError("boom")
    assert early_import.ServiceBusClient is REAL_AIO_CLIENT
    with pytest.raises(RuntimeError, match="no Service Bus fake is active"):
        active_world()
