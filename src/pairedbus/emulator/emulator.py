"""`Emulator`: namespaces served on loopback, one port each, on one model. Each port speaks AMQP
1.0 to the data-plane SDKs, plain or over TLS, and HTTPS to their administration clients (the
broker terminates TLS with a certificate generated for the run and hands HTTP to the admin plane
through its side door), so a connection string serves both clients as the service's own host
name does.

    async with Emulator(["primary", "secondary"]) as emulator:
        conn_str = emulator.connection_string("primary")   # for the unmodified SDK
        emulator.namespace("primary").create_queue("orders")
        emulator.broker("primary").faults.down()           # connections refused, open ones cut
        ServiceBusAdministrationClient.from_connection_string(conn_str, connection_verify=emulator.ca_file)
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path

from pairedbus import contract
from pairedbus.emulator.admin_http import AdminPlane
from pairedbus.emulator.certificates import generate_certificates
from pairedbus.emulator.server import Broker, relay_to
from pairedbus.servicebus.world import Namespace, ServiceBusWorld

__all__ = ["Emulator"]


class Emulator:
    """Namespaces served on loopback ports, on one model; `admin=False` serves AMQP alone."""

    def __init__(
        self,
        namespaces: Iterable[str] = ("primary", "secondary"),
        *,
        world: ServiceBusWorld | None = None,
        keys: dict[str, str] | None = None,
        accept_entra_tokens: bool = True,
        admin: bool = True,
    ) -> None:
        self.world = world or ServiceBusWorld(strict_namespaces=True)
        self.brokers: dict[str, Broker] = {}
        for name in namespaces:
            ns = self.world.namespace(name if "." in name else contract.service_bus_fqdn(name))
            self.brokers[name] = Broker(self.world, ns, keys=keys, accept_entra_tokens=accept_entra_tokens)
        self._admin_wanted = admin
        self.admin: AdminPlane | None = None
        #: The CA certificate the admin plane's certificate is signed with (`connection_verify`).
        self.ca_file: Path | None = None
        self._tls_dir: tempfile.TemporaryDirectory[str] | None = None

    def broker(self, name: str) -> Broker:
        return self.brokers[name]

    def namespace(self, name: str) -> Namespace:
        return self.brokers[name].namespace

    def connection_string(self, name: str) -> str:
        return self.brokers[name].connection_string()

    async def start(self, first_port: int = 0) -> None:
        try:
            if self._admin_wanted:
                await self._start_admin()
            for i, broker in enumerate(self.brokers.values()):
                await broker.start(first_port + i if first_port else 0)
        except BaseException:
            await self.stop()
            raise

    async def _start_admin(self) -> None:
        # The brokers terminate TLS (AMQP over TLS and the admin client's HTTPS on one port), so
        # the admin plane behind them speaks plain HTTP on loopback ports of its own.
        self._tls_dir = tempfile.TemporaryDirectory(prefix="pairedbus-emulator-tls-")
        tls = generate_certificates(Path(self._tls_dir.name))
        self.ca_file = tls.ca_path
        self.admin = AdminPlane.beside(self.world, self.brokers.values())
        await self.admin.start()
        context = tls.server_context()
        for broker in self.brokers.values():
            broker.tls = context
            broker.side_door = relay_to(self.admin.port_of(broker.fqdn))

    async def stop(self) -> None:
        for broker in self.brokers.values():
            broker.side_door = None
            broker.tls = None
            await broker.stop()
        if self.admin is not None:
            await self.admin.stop()
            self.admin = None
        if self._tls_dir is not None:
            self._tls_dir.cleanup()
            self._tls_dir = None

    async def __aenter__(self) -> Emulator:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
