"""The emulator's AMQP servers: one `Broker` per namespace, each on its own loopback port, all on
one model (`ServiceBusWorld`), and the faults injected on their sockets.

    async with Emulator(["primary", "secondary"]) as emulator:
        conn_str = emulator.connection_string("primary")   # for the unmodified SDK
        emulator.world.namespace(...).create_queue("orders")
        emulator.broker("primary").faults.down()           # connections refused, open ones cut
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from azure.servicebus.exceptions import ServiceBusServerBusyError

from pairedbus import contract
from pairedbus.emulator.connection import Connection
from pairedbus.testing.world import Namespace, ServiceBusWorld

__all__ = ["DEFAULT_KEY", "DEFAULT_KEY_NAME", "LOOPBACK", "Broker", "Emulator", "WireFaults"]

_LOG = logging.getLogger("pairedbus.emulator")

LOOPBACK = "127.0.0.1"
#: The key every emulated namespace accepts unless told otherwise (Microsoft's emulator's
#: convention: a well-known development key, never a secret).
DEFAULT_KEY_NAME = "RootManageSharedAccessKey"
DEFAULT_KEY = "SAS_KEY_VALUE"


@dataclass
class WireFaults:
    """What goes wrong on one namespace's sockets, changed at any time while it runs.

    - `down()`: new connections are closed at once, open ones cut (a regional outage).
    - `busy`: "attach" refuses links, "reject" rejects each sent message, "detach" detaches a
      sender link with a send pending, each with `com.microsoft:server-busy`.
    - `latency`: seconds slept before each frame is handled.
    """

    is_down: bool = False
    busy: set[str] = field(default_factory=set)
    latency: float = 0.0
    broker: Broker | None = None

    def down(self) -> None:
        self.is_down = True
        if self.broker is not None:
            self.broker.drop_connections()

    def up(self) -> None:
        self.is_down = False

    def heal(self) -> None:
        self.is_down = False
        self.busy.clear()
        self.latency = 0.0

    def check_attach(self) -> None:
        if "attach" in self.busy:
            raise _busy()

    def check_receive(self) -> None:
        if "receive" in self.busy:
            raise _busy()

    def check_send(self, link: Any) -> None:
        if "reject" in self.busy:
            raise _busy()
        if "detach" in self.busy:
            from pairedbus.emulator import conditions

            link.detach(conditions.error_of(_busy()))
            raise _busy()


def _busy() -> ServiceBusServerBusyError:
    return ServiceBusServerBusyError(message="The server is busy (injected on the wire).")


class Broker:
    """One namespace's AMQP endpoint."""

    def __init__(
        self,
        world: ServiceBusWorld,
        namespace: Namespace,
        *,
        keys: dict[str, str] | None = None,
        accept_entra_tokens: bool = True,
    ) -> None:
        self.world = world
        self.namespace = namespace
        self.fqdn = namespace.fqdn
        self.keys = keys if keys is not None else {DEFAULT_KEY_NAME: DEFAULT_KEY}
        self.accept_entra_tokens = accept_entra_tokens
        self.faults = WireFaults(broker=self)
        self.connections: set[Connection] = set()
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self, port: int = 0) -> int:
        self._server = await asyncio.start_server(self._accept, LOOPBACK, port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.faults.is_down:
            writer.transport.abort()
            return
        connection = Connection(self, reader, writer)
        self.connections.add(connection)
        await connection.serve()

    def forget(self, connection: Connection) -> None:
        self.connections.discard(connection)

    def drop_connections(self) -> int:
        """Cut every open connection (no close frame): what a network failure does."""
        dropped = list(self.connections)
        for connection in dropped:
            connection.drop()
        return len(dropped)

    def close_connections(self, condition: str = "amqp:connection:forced", description: str = "") -> int:
        """Close every open connection with an error (the service restarting a gateway)."""
        closed = list(self.connections)
        for connection in closed:
            connection.close_with(condition, description or "The connection was closed by the service.")
            connection.drop()
        return len(closed)

    def connection_string(self, key_name: str | None = None) -> str:
        name = key_name or next(iter(self.keys))
        return (
            f"Endpoint=sb://localhost:{self.port};SharedAccessKeyName={name};"
            f"SharedAccessKey={self.keys[name]};UseDevelopmentEmulator=true"
        )

    async def stop(self) -> None:
        server = self._server
        self._server = None
        if server is not None:
            server.close()
        for connection in list(self.connections):
            connection.drop()
        if server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 5)


class Emulator:
    """Namespaces served over AMQP on loopback ports, on one model."""

    def __init__(
        self,
        namespaces: Iterable[str] = ("primary", "secondary"),
        *,
        world: ServiceBusWorld | None = None,
        keys: dict[str, str] | None = None,
        accept_entra_tokens: bool = True,
    ) -> None:
        self.world = world or ServiceBusWorld(strict_namespaces=True)
        self.brokers: dict[str, Broker] = {}
        for name in namespaces:
            ns = self.world.namespace(name if "." in name else contract.service_bus_fqdn(name))
            self.brokers[name] = Broker(self.world, ns, keys=keys, accept_entra_tokens=accept_entra_tokens)

    def broker(self, name: str) -> Broker:
        return self.brokers[name]

    def namespace(self, name: str) -> Namespace:
        return self.brokers[name].namespace

    def connection_string(self, name: str) -> str:
        return self.brokers[name].connection_string()

    async def start(self, first_port: int = 0) -> None:
        for i, broker in enumerate(self.brokers.values()):
            await broker.start(first_port + i if first_port else 0)

    async def stop(self) -> None:
        for broker in self.brokers.values():
            await broker.stop()

    async def __aenter__(self) -> Emulator:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
