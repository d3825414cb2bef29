"""AMQP over TLS on a broker's port: the unmodified SDK (aio and sync) built from a fully qualified
namespace and a token credential opens TLS (as on the service's port 5671); the broker terminates
it and serves AMQP, verified against the run's CA, refused without it.

7.15.0 drops the port of `fully_qualified_namespace` when it uses TLS (`strip_protocol_from_uri`,
`strip_port=use_tls`) and always connects to port 5671: these tests (and the samples runner over
the wire) map `localhost:5671` to the broker's port below the SDK (`emulator.redirect.amqps_to`)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from azure.core.credentials import AccessToken
from azure.servicebus import ServiceBusClient as SyncClient
from azure.servicebus import ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient
from azure.servicebus.exceptions import ServiceBusConnectionError

from pairedbus.emulator import Emulator
from pairedbus.emulator.redirect import amqps_to

pytestmark = pytest.mark.timeout(120)


class FakeCredential:
    """A bearer token the emulator's `$cbs` accepts (an Entra ID token it cannot verify offline)."""

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken("fake-entra-token", int(time.time()) + 3600)


class AsyncFakeCredential:
    async def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken("fake-entra-token", int(time.time()) + 3600)

    async def close(self) -> None:
        pass


@pytest.fixture
async def emulator() -> AsyncIterator[Emulator]:
    async with Emulator(["primary"]) as emu:
        emu.namespace("primary").create_queue("orders")
        with amqps_to(emu.broker("primary").port):
            yield emu


def _namespace(emu: Emulator) -> str:
    return f"localhost:{emu.broker('primary').port}"  # the SDK drops the port (see above)


async def test_the_aio_client_sends_and_receives_over_tls(emulator: Emulator) -> None:
    assert emulator.ca_file is not None
    async with ServiceBusClient(
        _namespace(emulator), AsyncFakeCredential(), connection_verify=str(emulator.ca_file), retry_total=0
    ) as sb:
        async with sb.get_queue_sender("orders") as sender:
            await sender.send_messages(ServiceBusMessage("over tls"))
        async with sb.get_queue_receiver("orders", max_wait_time=5) as receiver:
            received = await receiver.receive_messages(max_message_count=1, max_wait_time=5)
            assert [str(m) for m in received] == ["over tls"]
            await receiver.complete_message(received[0])
    assert emulator.namespace("primary").queue("orders").message_counts()["active"] == 0


async def test_the_sync_client_sends_and_receives_over_tls(emulator: Emulator) -> None:
    import asyncio

    assert emulator.ca_file is not None

    def work() -> list[str]:
        with SyncClient(
            _namespace(emulator), FakeCredential(), connection_verify=str(emulator.ca_file), retry_total=0
        ) as sb:
            with sb.get_queue_sender("orders") as sender:
                sender.send_messages(ServiceBusMessage("sync over tls"))
            with sb.get_queue_receiver("orders", max_wait_time=5) as receiver:
                got = receiver.receive_messages(max_message_count=1, max_wait_time=5)
                for m in got:
                    receiver.complete_message(m)
                return [str(m) for m in got]

    assert await asyncio.to_thread(work) == ["sync over tls"]


async def test_without_the_emulators_ca_the_tls_handshake_is_refused(emulator: Emulator) -> None:
    async with ServiceBusClient(_namespace(emulator), AsyncFakeCredential(), retry_total=0) as sb:
        with pytest.raises(ServiceBusConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
            async with sb.get_queue_sender("orders") as sender:
                await sender.send_messages(ServiceBusMessage("refused"))
    assert emulator.namespace("primary").queue("orders").message_counts()["active"] == 0
