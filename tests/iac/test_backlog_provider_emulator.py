"""The backlog provider against the emulator's admin plane: the real azure-servicebus
`ServiceBusAdministrationClient` (its pipeline, XML serializer, requests transport, TLS with the
emulator's CA) creates, reads, diffs, updates and deletes a backlog queue held by the Service Bus
model (`ServiceBusWorld`) — the same model the in-process fake serves.

Only two things are swapped, as in `test_backlog_provider_wire.py`: the credential (a fixed bearer
token, which the emulator accepts as Microsoft's emulator does) and the host the client is
pointed at (the emulator's loopback port instead of `<namespace>.servicebus.windows.net`).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from azure.core.credentials import AccessToken
from azure.servicebus import ServiceBusMessage
from azure.servicebus.management import ServiceBusAdministrationClient

from pairedbus.emulator.admin_http import AdminPlane, serve_in_thread
from pairedbus.emulator.certificates import generate_certificates
from pairedbus.iac import backlog_provider as module
from pairedbus.iac.backlog_provider import BacklogQueueProvider, DataPlaneAuth, drifted_properties
from pairedbus.servicebus.world import ServiceBusWorld
from pairedbus.testing.sync_client import ServiceBusClient as FakeServiceBusClient

SECONDARY = "contoso-sec"
SECONDARY_FQDN = "contoso-sec.servicebus.windows.net"
NAME = "contoso/x-servicebus-transfer/0"
#: The spec's table in ARM names, written out as the spec states it.
INPUTS: dict[str, Any] = {
    "namespaceName": SECONDARY,
    "queueName": NAME,
    "maxSizeInMegabytes": 5120,
    "maxDeliveryCount": 2147483647,
    "defaultMessageTimeToLive": "P10675199DT2H48M5.4775807S",
    "autoDeleteOnIdle": "P10675199DT2H48M5.4775807S",
    "lockDuration": "PT1M",
    "deadLetteringOnMessageExpiration": True,
    "enableBatchedOperations": True,
}


class FakeCredential:
    """A TokenCredential that hands out a fixed token (tests never touch the default chain)."""

    def get_token(self, *_scopes: str, **_kwargs: Any) -> AccessToken:
        return AccessToken("emulator-token", int(time.time()) + 3600)


@pytest.fixture
def world() -> ServiceBusWorld:
    return ServiceBusWorld()


@pytest.fixture
def emulator(world: ServiceBusWorld, tmp_path_factory: pytest.TempPathFactory, monkeypatch) -> Iterator[AdminPlane]:
    directory = tmp_path_factory.mktemp("emulator-tls")
    tls = generate_certificates(directory)
    with serve_in_thread(AdminPlane(world, [SECONDARY_FQDN], tls=tls)) as plane:

        def admin_client_at_emulator(fqdn: str, credential: Any, **kwargs: Any) -> ServiceBusAdministrationClient:
            assert fqdn == SECONDARY_FQDN  # what the provider would dial
            return ServiceBusAdministrationClient(
                plane.address(fqdn), credential, connection_verify=str(tls.ca_path), retry_total=0, **kwargs
            )

        monkeypatch.setattr(module, "ServiceBusAdministrationClient", admin_client_at_emulator)
        monkeypatch.setattr("azure.identity.DefaultAzureCredential", FakeCredential)
        yield plane
    shutil.rmtree(directory)


def test_the_provider_creates_reads_diffs_updates_and_deletes_a_backlog_queue_on_the_emulator(
    emulator: AdminPlane, world: ServiceBusWorld
) -> None:
    provider = BacklogQueueProvider(DataPlaneAuth(), rbac_timeout=timedelta(0))

    # create: missing, so made with exactly the table, and read back as the table's literals
    created = provider.create(dict(INPUTS))
    assert created.id == NAME and created.outs["adopted"] is False
    assert {k: created.outs[k] for k in INPUTS} == INPUTS
    queue = world.namespace(SECONDARY_FQDN).queue(NAME)
    assert queue.settings.values["max_delivery_count"] == 2147483647
    assert queue.settings.values["max_size_in_megabytes"] == 5120

    # read: no drift
    read = provider.read(NAME, dict(INPUTS))
    assert read.id == NAME
    assert read.outs["defaultMessageTimeToLive"] == "P10675199DT2H48M5.4775807S"
    assert read.outs["autoDeleteOnIdle"] == "P10675199DT2H48M5.4775807S"
    assert read.outs["lockDuration"] == "PT1M"
    assert provider.diff(NAME, read.outs, dict(INPUTS)).changes is False

    # someone changes the queue behind the program's back: read shows it, diff reports it
    queue.settings.update({"max_delivery_count": 10, "lock_duration": timedelta(seconds=30)})
    drifted = provider.read(NAME, dict(INPUTS))
    assert (drifted.outs["maxDeliveryCount"], drifted.outs["lockDuration"]) == (10, "PT30S")
    diff = provider.diff(NAME, drifted.outs, dict(INPUTS))
    assert diff.changes is True and diff.replaces == []
    assert drifted_properties(module.desired_properties(INPUTS), drifted.outs) == ["maxDeliveryCount", "lockDuration"]

    # update restores the table (a PUT with If-Match: * on the wire)
    updated = provider.update(NAME, drifted.outs, dict(INPUTS))
    assert {k: updated.outs[k] for k in INPUTS} == INPUTS
    assert queue.settings.values["max_delivery_count"] == 2147483647
    assert provider.diff(NAME, provider.read(NAME, dict(INPUTS)).outs, dict(INPUTS)).changes is False

    # delete keeps a queue that holds a parked message (the runtime count comes over the wire)...
    with FakeServiceBusClient(SECONDARY_FQDN, "unused", _world=world) as client:
        with client.get_queue_sender(NAME) as sender:
            sender.send_messages(ServiceBusMessage("parked"))
        with pytest.raises(RuntimeError, match="holds 1 parked messages"):
            provider.delete(NAME, dict(INPUTS))
        assert NAME in world.namespace(SECONDARY_FQDN).entities
        with client.get_queue_receiver(NAME, receive_mode="receiveanddelete") as receiver:
            assert len(receiver.receive_messages(max_message_count=1, max_wait_time=5)) == 1

    # ...and deletes it once empty; reading it then says it is gone
    provider.delete(NAME, dict(INPUTS))
    assert NAME not in world.namespace(SECONDARY_FQDN).entities
    assert provider.read(NAME, dict(INPUTS)).id is None
    provider.delete(NAME, dict(INPUTS))  # deleting what is gone is no error
