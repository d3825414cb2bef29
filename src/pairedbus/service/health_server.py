"""The HTTP side of a service: `/readyz` (and `/healthz`) and `/livez` for Container Apps probes,
`/metrics` for Prometheus."""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Self

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from pairedbus.service.endpoints import DEFAULT_PORT, HEALTH_PATH, LIVENESS_PATH, METRICS_PATH, READINESS_PATH

#: A liveness check: None when live, else why not (shown in the 503 body).
LivenessCheck = Callable[[], str | None]


class HealthServer:
    """Serves `/readyz` and `/healthz` (200 while `is_healthy()`, else 503), `/livez` (200 while
    `liveness_problem()` is None, else 503 with the problem) and `/metrics` from `registry`.

    An async context manager: entering binds the port (0 picks a free one, see `port`), leaving
    closes it.
    """

    def __init__(
        self,
        *,
        is_healthy: Callable[[], bool],
        registry: CollectorRegistry,
        liveness_problem: LivenessCheck = lambda: None,
        host: str = "0.0.0.0",
        port: int = DEFAULT_PORT,
    ) -> None:
        self._is_healthy = is_healthy
        self._liveness_problem = liveness_problem
        self._registry = registry
        self._host = host
        self._requested_port = port
        app = web.Application()
        app.router.add_get(HEALTH_PATH, self._health)
        app.router.add_get(READINESS_PATH, self._health)
        app.router.add_get(LIVENESS_PATH, self._live)
        app.router.add_get(METRICS_PATH, self._metrics)
        # Probes hit /healthz every few seconds: no access log, or it drowns the syphon's own lines.
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)

    @property
    def port(self) -> int:
        """The bound port (the real one when 0 was asked for)."""
        addresses = self._runner.addresses
        if not addresses:
            raise RuntimeError("HealthServer is not started")
        return int(addresses[0][1])

    async def __aenter__(self) -> Self:
        await self._runner.setup()
        try:
            await web.TCPSite(self._runner, self._host, self._requested_port).start()
        except BaseException:
            await self._runner.cleanup()
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._runner.cleanup()

    async def _health(self, request: web.Request) -> web.Response:
        if self._is_healthy():
            return web.json_response({"status": "ok"})
        return web.json_response({"status": "unavailable"}, status=503)

    async def _live(self, request: web.Request) -> web.Response:
        problem = self._liveness_problem()
        if problem is None:
            return web.json_response({"status": "ok"})
        return web.json_response({"status": "failing", "problem": problem}, status=503)

    async def _metrics(self, request: web.Request) -> web.Response:
        return web.Response(body=generate_latest(self._registry), headers={"Content-Type": CONTENT_TYPE_LATEST})
