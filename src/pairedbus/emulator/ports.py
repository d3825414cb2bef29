"""What the emulator's lower modules need of the objects above them, as Protocols: a link of its
session and connection, a `$management` operation of its connection, a connection of its broker.
The concrete classes (`connection.Session`, `connection.Connection`, `server.Broker`) satisfy
them; naming the Protocols here keeps the imports pointing one way."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, Protocol

from pairedbus.emulator.faults import WireFaults
from pairedbus.servicebus.world import Namespace, ServiceBusWorld

__all__ = ["BrokerPort", "ConnectionPort", "SessionPort"]


class BrokerPort(Protocol):
    world: ServiceBusWorld
    namespace: Namespace
    fqdn: str
    keys: dict[str, str]
    accept_entra_tokens: bool
    faults: WireFaults

    def forget(self, connection: Any) -> None: ...


class ConnectionPort(Protocol):
    @property  # read-only here, so that a concrete class's own broker type satisfies it
    def broker(self) -> BrokerPort: ...

    authorized: set[str]
    #: lock token -> (store, record, session lock, receiver link) of a delivery still locked
    locks: dict[int, Any]
    peer_max_frame_size: int

    def send(self, channel: int, code: int, fields: list[Any], payload: bytes = b"") -> None: ...

    def spawn(self, coro: Coroutine[Any, Any, None]) -> Any: ...

    def all_links(self) -> list[Any]: ...

    def drop(self) -> None: ...


class SessionPort(Protocol):
    @property  # read-only here, so that a concrete class's own connection type satisfies it
    def connection(self) -> ConnectionPort: ...

    links: dict[int, Any]

    def send(self, code: int, fields: list[Any], payload: bytes = b"") -> None: ...

    def send_transfer(self, fields: list[Any], payload: bytes) -> None: ...

    def flow_fields(self, link: Any = None) -> list[Any]: ...

    def new_delivery_id(self) -> int: ...

    def find_reply_link(self, reply_to: str | None, node_address: str) -> Any: ...
