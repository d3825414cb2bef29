"""The emulator's AMQP servers: one `Broker` per namespace, each on its own loopback port, all on
one model (`ServiceBusWorld`), and the faults injected on their sockets (`WireFaults`).

A connection that opens with a TLS handshake is what the SDK sends to the same host and port both
when its administration client speaks HTTPS and when a data-plane client is built from a fully
qualified namespace (AMQP over TLS, as on the service's port 5671). When the broker has a TLS
context, it relays such a connection to its own TLS listener on another loopback port (asyncio
cannot start TLS on a stream it has already read from), which terminates TLS and reads the first
bytes in the clear: AMQP's protocol header (`AMQP` then 0 for AMQP, 3 for SASL) is served as AMQP
on that stream, anything else (HTTP) goes through `side_door` (the admin plane's). A plain
connection is read as AMQP, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Awaitable, Callable

from pairedbus.emulator.connection import Connection
from pairedbus.emulator.faults import WireFaults
from pairedbus.servicebus.world import Namespace, ServiceBusWorld

__all__ = ["DEFAULT_KEY", "DEFAULT_KEY_NAME", "LOOPBACK", "Broker", "SideDoor", "WireFaults", "relay_to"]

_LOG = logging.getLogger("pairedbus.emulator")

LOOPBACK = "127.0.0.1"
#: The key every emulated namespace accepts unless told otherwise (Microsoft's emulator's
#: convention: a well-known development key, never a secret).
DEFAULT_KEY_NAME = "RootManageSharedAccessKey"
DEFAULT_KEY = "SAS_KEY_VALUE"
#: The first byte of a TLS handshake record: what an administration client sends first.
TLS_HANDSHAKE = b"\x16"
#: What every AMQP protocol header starts with (plain `AMQP\x00...` or SASL `AMQP\x03...`).
AMQP_MAGIC = b"AMQP"
#: How long a new connection may take to send its first byte.
FIRST_BYTE_SECONDS = 30.0
#: Bound on relaying one connection's bytes at a time.
_PIPE_CHUNK = 65536

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
        #: Terminate TLS with this context (None: a TLS handshake goes to `side_door` as it is).
        self.tls: ssl.SSLContext | None = None
        self._server: asyncio.Server | None = None
        self._tls_server: asyncio.Server | None = None
        self._tls_door: SideDoor | None = None

    async def start(self, port: int = 0) -> int:
        self._server = await asyncio.start_server(self._accept, LOOPBACK, port)
        self.port = self._server.sockets[0].getsockname()[1]
        if self.tls is not None:
            self._tls_server = await asyncio.start_server(self._accept_decrypted, LOOPBACK, 0, ssl=self.tls)
            self._tls_door = relay_to(self._tls_server.sockets[0].getsockname()[1])
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
        if first == TLS_HANDSHAKE:
            door = self._tls_door or self.side_door
            if door is not None:
                await door(first, reader, writer)
                return
        await self._serve_amqp(reader, writer, first)

    async def _accept_decrypted(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """A connection relayed here with TLS now terminated: AMQP's header, or HTTP for the side door."""
        try:
            first = await asyncio.wait_for(reader.readexactly(len(AMQP_MAGIC)), FIRST_BYTE_SECONDS)
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            writer.transport.abort()
            return
        if first != AMQP_MAGIC and self.side_door is not None:
            await self.side_door(first, reader, writer)
            return
        await self._serve_amqp(reader, writer, first)

    async def _serve_amqp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, prefix: bytes) -> None:
        connection = Connection(self, reader, writer, prefix=prefix)
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
        servers = [s for s in (self._server, self._tls_server) if s is not None]
        self._server = self._tls_server = None
        self._tls_door = None
        for server in servers:
            server.close()
        for connection in list(self.connections):
            connection.drop()
        for server in servers:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 5)


def relay_to(port: int) -> SideDoor:
    """A side door that relays the connection, byte for byte, to a loopback port."""

    async def relay(first: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(LOOPBACK, port)
        except OSError:
            writer.transport.abort()
            return
        upstream_writer.write(first)
        try:
            await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))
        finally:
            for w in (writer, upstream_writer):
                w.close()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(w.wait_closed(), 5)

    return relay


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(_PIPE_CHUNK):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
        pass
    finally:
        with contextlib.suppress(Exception):
            if writer.can_write_eof():
                writer.write_eof()
