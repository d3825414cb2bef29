"""The syphon as a service: the process a container runs (`pairedbus syphon`).

Around the syphon loop it adds what hosting needs and nothing else: a managed-identity credential,
`/healthz` for probes, Prometheus `/metrics`, JSON logs, and a graceful stop. SIGTERM or SIGINT
sets the stop event; the syphon settles what it has in flight and the process exits 0. A syphon
fault (the close/fault rule tripped) or a loop that ends on its own exits non-zero, so the
platform restarts the replica.
"""

from __future__ import annotations

import asyncio
import logging
import re
import signal
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from pairedbus import contract
from pairedbus.errors import UserError
from pairedbus.service.endpoints import (
    DEFAULT_PORT,
    ENV_AZURE_CLIENT_ID,
    ENV_LOG_LEVEL,
    ENV_PRIMARY,
    ENV_SECONDARY,
    ENV_SECONDARY_RESOURCE_ID,
)
from pairedbus.service.health_server import HealthServer
from pairedbus.service.logs import LOG_LEVELS, configure_json_logging
from pairedbus.syphon.backlog_directory import validate_namespace_resource_id
from pairedbus.syphon.close_fault import SyphonFaulted
from pairedbus.syphon.stats import SyphonStats
from pairedbus.syphon.syphon import Syphon

log = logging.getLogger("pairedbus.syphon.service")

EXIT_STOPPED = 0
EXIT_FAILED = 1
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
METRIC_PREFIX = "pairedbus_syphon"

_DNS_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_FQDN_MAX = 253


# --- Options ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServiceOptions:
    primary: str
    secondary: str
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


def namespace_fqdn(source: str, value: str | None) -> str:
    """A fully qualified Service Bus namespace host, lower-cased; `source` names the flag or env var."""
    example = contract.service_bus_fqdn("contoso")
    if not value or not value.strip():
        raise UserError(f"{source}: expected a fully qualified namespace such as {example}, got nothing")
    fqdn = value.strip().lower()
    labels = fqdn.split(".")
    if len(fqdn) > _FQDN_MAX or len(labels) < 2 or not all(_DNS_LABEL.match(label) for label in labels):
        raise UserError(
            f"{source}: expected a fully qualified namespace host such as {example} (no scheme, port or path), got {value!r}"
        )
    namespace = contract.namespace_from_fqdn(fqdn)
    if (
        not contract.NAMESPACE_NAME_MIN <= len(namespace) <= contract.NAMESPACE_NAME_MAX
        or not contract.NAMESPACE_NAME_PATTERN.match(namespace)
        or namespace.endswith(contract.NAMESPACE_NAME_FORBIDDEN_SUFFIXES)
    ):
        raise UserError(
            f"{source}: expected its first label to be a namespace name ({contract.NAMESPACE_NAME_MIN}-"
            f"{contract.NAMESPACE_NAME_MAX} letters, digits or '-', starting with a letter), got {namespace!r}"
        )
    return fqdn


def _port(source: str, value: str | int) -> int:
    try:
        port = int(value)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise UserError(f"{source}: expected a TCP port 0-65535 (0 picks a free one), got {value!r}")
    return port


def _log_level(source: str, value: str) -> str:
    level = value.strip().upper()
    if level not in LOG_LEVELS:
        raise UserError(f"{source}: expected one of {', '.join(LOG_LEVELS)}, got {value!r}")
    return level


def _given(flag: str, flag_value: str | None, env_name: str, env: Mapping[str, str]) -> tuple[str, str | None]:
    """(where the value came from, the value): the flag wins over the environment variable."""
    if flag_value:
        return flag, flag_value
    if env.get(env_name):
        return env_name, env[env_name]
    return f"{flag} (or {env_name})", None


def options_from(
    *,
    primary: str | None,
    secondary: str | None,
    port: str | int | None,
    log_level: str | None,
    host: str,
    env: Mapping[str, str],
    secondary_resource_id: str | None = None,
) -> ServiceOptions:
    """Validated options from flags, falling back to the environment the container app sets."""
    primary_source, primary_value = _given("--primary", primary, ENV_PRIMARY, env)
    secondary_source, secondary_value = _given("--secondary", secondary, ENV_SECONDARY, env)
    level_source, level_value = _given("--log-level", log_level, ENV_LOG_LEVEL, env)
    arm_source, arm_value = _given("--secondary-resource-id", secondary_resource_id, ENV_SECONDARY_RESOURCE_ID, env)
    if arm_value is not None:
        try:
            validate_namespace_resource_id(arm_value)
        except ValueError as exc:
            raise UserError(f"{arm_source}: {exc}, got {arm_value!r}") from None
    options = ServiceOptions(
        secondary_resource_id=arm_value,
        primary=namespace_fqdn(primary_source, primary_value),
        secondary=namespace_fqdn(secondary_source, secondary_value),
        host=host,
        port=_port("--port", DEFAULT_PORT if port is None else port),
        log_level=_log_level(level_source, level_value or "INFO"),
    )
    if options.primary == options.secondary:
        raise UserError(f"{secondary_source}: expected a namespace other than the primary ({options.primary})")
    return options


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


class SyphonCollector(Collector):
    def __init__(self, service: SyphonService) -> None:
        self._service = service

    def collect(self) -> Iterable[Metric]:
        up = GaugeMetricFamily(
            f"{METRIC_PREFIX}_up", "1 while the syphon loop runs with its clients open and is not failing for good."
        )
        up.add_metric([], 1.0 if self._service.healthy() else 0.0)
        yield up
        live = GaugeMetricFamily(f"{METRIC_PREFIX}_live", "1 while the liveness probe passes (see /livez).")
        live.add_metric([], 0.0 if self._service.liveness_problem() is not None else 1.0)
        yield live
        stats = self._service.stats()
        if stats is None:
            return
        yield CounterMetricFamily(
            f"{METRIC_PREFIX}_messages_moved", "Backlog messages delivered to the primary.", value=stats.moved
        )
        yield CounterMetricFamily(
            f"{METRIC_PREFIX}_messages_dead_lettered",
            "Backlog messages dead-lettered (e.g. their time to live ran out in the backlog).",
            value=stats.dead_lettered,
        )
        reasons = CounterMetricFamily(
            f"{METRIC_PREFIX}_dead_letters",
            "Backlog messages dead-lettered, by reason (DestinationNotFound, SendRejected, MessageSizeExceeded, "
            "TTLExpiredInBacklog, MissingPath, ...). Alert on any increase: each is a message a sender was told "
            "was sent and that never reached its destination.",
            labels=["reason"],
        )
        for reason, count in sorted(stats.dead_letter_reasons.items()):
            reasons.add_metric([reason], count)
        yield reasons
        yield CounterMetricFamily(
            f"{METRIC_PREFIX}_pings_dropped", "Pings found in the backlog and dropped.", value=stats.dropped_pings
        )
        yield CounterMetricFamily(
            f"{METRIC_PREFIX}_messages_left_locked",
            "Messages left locked for redelivery (destination backing off, or stopping).",
            value=stats.left_locked,
        )
        yield CounterMetricFamily(
            f"{METRIC_PREFIX}_send_retries", "Sends retried in place after a retryable failure.", value=stats.retries
        )
        in_flight = GaugeMetricFamily(f"{METRIC_PREFIX}_in_flight", "Messages received and not yet settled.")
        in_flight.add_metric([], self._service.in_flight())
        yield in_flight
        errors = CounterMetricFamily(f"{METRIC_PREFIX}_errors", "Errors by kind.", labels=["kind"])
        for kind, count in sorted(stats.errors.items()):
            errors.add_metric([kind], count)
        yield errors
        depth = GaugeMetricFamily(
            f"{METRIC_PREFIX}_backlog_depth", "Messages waiting in each backlog queue.", labels=["queue"]
        )
        for queue, count in sorted(stats.backlog_depth.items()):
            depth.add_metric([queue], count)
        yield depth


# --- The service -----------------------------------------------------------------------------


def default_credential() -> AbstractAsyncContextManager[Any]:
    """Managed identity in Azure; a user-assigned one is picked by AZURE_CLIENT_ID."""
    import os

    from azure.identity.aio import DefaultAzureCredential

    return DefaultAzureCredential(managed_identity_client_id=os.environ.get(ENV_AZURE_CLIENT_ID))


def default_syphon(
    *, primary: str, secondary: str, credential: Any, secondary_resource_id: str | None = None
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
                extra={"port": server.port, "primary": self.options.primary, "secondary": self.options.secondary},
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


def install_stop_signals(stop: asyncio.Event) -> Callable[[], None]:
    """SIGTERM/SIGINT set `stop`; returns the function that puts the previous handlers back."""
    loop = asyncio.get_running_loop()
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}

    def request_stop(signum: signal.Signals) -> None:
        log.info("stop requested", extra={"signal": signum.name})
        stop.set()

    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, request_stop, signum)

    def restore() -> None:
        for signum, handler in previous.items():
            loop.remove_signal_handler(signum)
            signal.signal(signum, handler)

    return restore


async def serve(options: ServiceOptions, **service_kwargs: Any) -> int:
    """Run the service with stop signals installed; the process entry point's async half."""
    stop = asyncio.Event()
    remove_signals = install_stop_signals(stop)
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
