"""The syphon as a service: the process a container runs (`pairedbus syphon`).

Around the syphon loop it adds what hosting needs and nothing else: a managed-identity credential,
`/healthz` for probes, Prometheus `/metrics`, JSON logs, and a graceful stop. SIGTERM or SIGINT
sets the stop event; the syphon settles what it has in flight and the process exits 0. A syphon
fault (the close/fault rule tripped) or a loop that ends on its own exits non-zero, so the
platform restarts the replica. Its options are parsed from flags and the environment in
`pairedbus.commands.syphon_options`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from prometheus_client import CollectorRegistry

from pairedbus.errors import UserError
from pairedbus.pairing.endpoints import NamespaceEndpoint
from pairedbus.service.endpoints import DEFAULT_PORT, ENV_AZURE_CLIENT_ID
from pairedbus.service.health_server import HealthServer
from pairedbus.service.logs import configure_json_logging
from pairedbus.service.metrics import SyphonCollector
from pairedbus.service.signals import install_stop_signals
from pairedbus.syphon import SyphonFaulted
from pairedbus.syphon.stats import SyphonStats
from pairedbus.syphon.syphon import Syphon

#: The name the service's log lines have always carried (dashboards and alerts filter on it).
log = logging.getLogger("pairedbus.syphon.service")

EXIT_STOPPED = 0
EXIT_FAILED = 1


@dataclass(frozen=True)
class ServiceOptions:
    #: Fully qualified namespaces (Entra ID), or endpoints from connection strings.
    primary: str | NamespaceEndpoint
    secondary: str | NamespaceEndpoint
    host: str = "0.0.0.0"
    port: int = DEFAULT_PORT
    log_level: str = "INFO"
    #: Set in Azure: backlog queues are listed through ARM with Reader (see backlog_directory.py).
    secondary_resource_id: str | None = None
    #: Liveness fails after this long with only failures no retry can fix (authentication,
    #: authorization, a missing namespace)...
    unfixable_after: float = 60.0
    #: ...or after this long without a successful call to Service Bus while there is work.
    stall_after: float = 120.0


# --- What the service needs from the syphon --------------------------------------------------


class RunnableSyphon(Protocol):
    """The face of `pairedbus.syphon.Syphon` the service drives and reads."""

    async def __aenter__(self) -> Any: ...

    async def __aexit__(self, *exc_info: Any) -> Any: ...

    async def run(self, stop: asyncio.Event) -> None: ...

    @property
    def stats(self) -> SyphonStats: ...

    @property
    def clients_open(self) -> bool: ...

    @property
    def in_flight(self) -> int: ...


SyphonFactory = Callable[..., RunnableSyphon]
CredentialFactory = Callable[[], AbstractAsyncContextManager[Any]]


# --- The service -----------------------------------------------------------------------------


def default_credential() -> AbstractAsyncContextManager[Any]:
    """Managed identity in Azure; a user-assigned one is picked by AZURE_CLIENT_ID."""
    import os

    from azure.identity.aio import DefaultAzureCredential

    return DefaultAzureCredential(managed_identity_client_id=os.environ.get(ENV_AZURE_CLIENT_ID))


def default_syphon(
    *,
    primary: str | NamespaceEndpoint,
    secondary: str | NamespaceEndpoint,
    credential: Any,
    secondary_resource_id: str | None = None,
) -> RunnableSyphon:
    return Syphon(
        primary=primary, secondary=secondary, credential=credential, secondary_resource_id=secondary_resource_id
    )


class SyphonService:
    """Runs one syphon behind `/healthz` and `/metrics` until stopped or faulted."""

    def __init__(
        self,
        options: ServiceOptions,
        *,
        syphon_factory: SyphonFactory = default_syphon,
        credential_factory: CredentialFactory = default_credential,
        registry: CollectorRegistry | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.options = options
        self._clock = clock
        self._reported_problem: str | None = None
        self._syphon_factory = syphon_factory
        self._credential_factory = credential_factory
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=False)
        self.registry.register(SyphonCollector(self))
        self._syphon: RunnableSyphon | None = None
        self._looping = False
        self.port: int | None = None
        #: Set once `/healthz` and `/metrics` are served (`port` is then known).
        self.listening = asyncio.Event()
        #: Set once the syphon's clients are open and its loop has started.
        self.started = asyncio.Event()

    def healthy(self) -> bool:
        """Ready: the loop runs with its clients open, and is not failing for good."""
        return (
            self._looping
            and self._syphon is not None
            and self._syphon.clients_open
            and self._syphon.stats.unfixable_since is None
        )

    def liveness_problem(self) -> str | None:
        """Why the replica should be restarted, or None (see ServiceOptions for the thresholds).
        Before the syphon exists (signing in, opening) the process counts as live."""
        if self._syphon is None:
            return None
        problem = self._syphon.stats.liveness_problem(
            now=self._clock(),
            stall_after=self.options.stall_after,
            unfixable_after=self.options.unfixable_after,
            in_flight=self._syphon.in_flight,
        )
        if problem is not None and problem != self._reported_problem:
            log.error("syphon not live", extra={"problem": problem})
        self._reported_problem = problem
        return problem

    def stats(self) -> SyphonStats | None:
        """The syphon's counters now, read at scrape time (None before the syphon exists)."""
        return self._syphon.stats if self._syphon is not None else None

    def _log_fields(self) -> dict[str, object]:
        return (self.stats() or SyphonStats()).log_fields()

    def in_flight(self) -> int:
        return self._syphon.in_flight if self._syphon is not None else 0

    async def run(self, stop: asyncio.Event) -> int:
        """Serve until `stop` is set (exit 0 once in-flight work is settled) or the syphon fails."""
        async with self._http_server() as server, self._credential_factory() as credential:
            self.port = server.port
            self.listening.set()
            log.info(
                "syphon service listening",
                extra={
                    "port": server.port,
                    "primary": str(self.options.primary),
                    "secondary": str(self.options.secondary),
                },
            )
            listing = (
                {"secondary_resource_id": self.options.secondary_resource_id}
                if self.options.secondary_resource_id
                else {}
            )
            syphon = self._syphon_factory(
                primary=self.options.primary, secondary=self.options.secondary, credential=credential, **listing
            )
            self._syphon = syphon
            try:
                async with syphon:
                    self._looping = True
                    self.started.set()
                    try:
                        await syphon.run(stop)
                    finally:
                        self._looping = False
            except SyphonFaulted as exc:
                log.error("syphon faulted", extra={"error": str(exc), **self._log_fields()})
                return EXIT_FAILED
            if not stop.is_set():
                log.error("syphon loop ended without a stop request", extra=self._log_fields())
                return EXIT_FAILED
            log.info("syphon service stopped", extra=self._log_fields())
            return EXIT_STOPPED

    @asynccontextmanager
    async def _http_server(self) -> AsyncIterator[HealthServer]:
        server = HealthServer(
            is_healthy=self.healthy,
            liveness_problem=self.liveness_problem,
            registry=self.registry,
            host=self.options.host,
            port=self.options.port,
        )
        try:
            await server.__aenter__()
        except OSError as exc:
            raise UserError(
                f"--port: cannot listen on {self.options.host}:{self.options.port} ({exc.strerror or exc})"
            ) from None
        try:
            yield server
        finally:
            await server.__aexit__(None, None, None)


async def serve(options: ServiceOptions, **service_kwargs: Any) -> int:
    """Run the service with stop signals installed; the process entry point's async half."""
    stop = asyncio.Event()
    remove_signals = install_stop_signals(stop, log)
    try:
        return await SyphonService(options, **service_kwargs).run(stop)
    finally:
        remove_signals()


def run_service(options: ServiceOptions, **service_kwargs: Any) -> int:
    """Configure JSON logging and run the service to its exit code."""
    configure_json_logging(options.log_level)
    try:
        return asyncio.run(serve(options, **service_kwargs))
    except UserError:
        raise
    except Exception:
        log.exception("syphon service failed")
        return EXIT_FAILED
