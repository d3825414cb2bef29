"""Point clients that insist on AMQP's TLS port at a broker's port: a loopback port mapping.

azure-servicebus 7.15.0 built from a fully qualified namespace and a token credential always
connects to port 5671 (`strip_protocol_from_uri(..., strip_port=use_tls)` drops a `:PORT`, and
pyamqp then uses its `SECURE_PORT`), unlike a connection string with `UseDevelopmentEmulator=true`,
which keeps its port and speaks plain AMQP. Rather than binding 5671 (one per machine, which
parallel runs would fight over), `amqps_to(port)` rewrites name resolution of `localhost:5671` to
`localhost:port` in this process, as a hosts entry plus a port mapping would, below the SDK:
its code runs unmodified, sync (`socket.create_connection`) and aio (`loop.getaddrinfo`) alike.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["AMQPS_PORT", "amqps_to"]

#: AMQP over TLS's registered port (IANA), what the SDK connects to for a fully qualified namespace.
AMQPS_PORT = 5671
#: The host names taken as this machine (the emulator's certificate names them too).
_LOCAL_NAMES = frozenset({"localhost", "127.0.0.1"})


@contextmanager
def amqps_to(port: int) -> Iterator[None]:
    """Within the block, connections to `localhost:5671` reach `localhost:port` instead."""
    original = socket.getaddrinfo

    def getaddrinfo(host: Any, service: Any, *args: Any, **kwargs: Any) -> Any:
        if host in _LOCAL_NAMES and str(service) == str(AMQPS_PORT):
            service = port
        return original(host, service, *args, **kwargs)

    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]  # same call, its signature loosened
    try:
        yield
    finally:
        socket.getaddrinfo = original
