"""The emulator's AMQP servers: one `Broker` per namespace, each on its own loopback port, all on
one model (`ServiceBusWorld`), and the faults injected on their sockets (`WireFaults`).

A connection that opens with a TLS handshake (what the SDK's administration client sends to the
same host and port: it always speaks HTTPS) goes through the broker's `side_door` when one is set
(the admin plane's); anything else is read as AMQP.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from pairedbus.emulator.connection import Connection
from pairedbus.emulator.faults import WireFaults
from pairedbus.servicebus.world import Namespace, ServiceBusWorld

__all__ = ["DEFAULT_KEY", "DEFAULT_KEY_NAME", "LOOPBACK", "Broker", "SideDoor", "WireFaults"]

_LOG = logging.getLogger("pairedbus.emulator")

LOOPBACK = "127.0.0.1"
#: The key every emulated namespace accepts unless told otherwise (Microsoft's emulator's
#: convention: a well-known development key, never a secret).
DEFAULT_KEY_NAME = "RootManageSharedAccessKey"
DEFAULT_KEY = "SAS_KEY_VALUE"
#: The first byte of a TLS handshake record: what an administration client sends first.
TLS_HANDSHAKE = b"\x16"
#: How long a new connection may take to send its first byte.
FIRST_BYTE_SECONDS = 30.0

#: Takes a connection that is not AMQP: (the bytes read so far, reader, writer).
SideDoor = Callable[[bytes, asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


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
        #: Where a connection that does not start with AMQP's header goes (None: it is closed).
        self.side_door: SideDoor | None = None
        self._server: asyncio.Server | None = None

    async def start(self, port: int = 0) -> int:
        self._server = await asyncio.start_server(self._accept, LOOPBACK, port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.faults.is_down:
            writer.transport.abort()
            return
        try:
            first = await asyncio.wait_for(reader.readexactly(1), FIRST_BYTE_SECONDS)
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
            writer.transport.abort()
            return
        if first == TLS_HANDSHAKE and self.side_door is not None:
            await self.side_door(first, reader, writer)
            return
        connection = Connection(self, reader, writer, prefix=first)
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
