"""HealthServer over a real socket: /healthz follows the health callback, /metrics the registry."""

from __future__ import annotations

import aiohttp
from prometheus_client import CollectorRegistry, Counter

from pairedbus.service.health_server import HealthServer


async def _status(port: int, path: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{port}{path}") as response:
        return response.status, await response.text()


async def test_healthz_follows_the_health_callback_on_every_request() -> None:
    healthy = [True]
    async with HealthServer(
        is_healthy=lambda: healthy[0], registry=CollectorRegistry(), host="127.0.0.1", port=0
    ) as server:
        assert (await _status(server.port, "/healthz"))[0] == 200
        healthy[0] = False
        assert (await _status(server.port, "/healthz"))[0] == 503


async def test_metrics_render_the_registry_and_unknown_paths_are_404() -> None:
    registry = CollectorRegistry()
    Counter("probe_hits", "test counter", registry=registry).inc(2)
    async with HealthServer(is_healthy=lambda: True, registry=registry, host="127.0.0.1", port=0) as server:
        status, body = await _status(server.port, "/metrics")
        assert status == 200 and "probe_hits_total 2.0" in body
        assert (await _status(server.port, "/"))[0] == 404


async def test_leaving_the_context_closes_the_port() -> None:
    async with HealthServer(is_healthy=lambda: True, registry=CollectorRegistry(), host="127.0.0.1", port=0) as server:
        port = server.port
    try:
        await _status(port, "/healthz")
    except aiohttp.ClientConnectionError:
        return
    raise AssertionError("the port still answers after the server closed")


async def test_livez_and_readyz_are_separate_probes() -> None:
    ready, problem = [True], [None]
    async with HealthServer(
        is_healthy=lambda: ready[0],
        liveness_problem=lambda: problem[0],
        registry=CollectorRegistry(),
        host="127.0.0.1",
        port=0,
    ) as server:
        assert (await _status(server.port, "/livez"))[0] == 200
        assert (await _status(server.port, "/readyz"))[0] == 200
        ready[0] = False  # not ready (e.g. opening): live still
        assert (await _status(server.port, "/readyz"))[0] == 503
        assert (await _status(server.port, "/livez"))[0] == 200
        problem[0] = "no progress for 121 s with work pending"
        status, body = await _status(server.port, "/livez")
        assert status == 503 and "no progress" in body
