"""The emulator's control endpoint (HTTP, loopback only): faults while it runs, entities, counts.

A test or drill whose brokers run in another process drives them here:

    GET  /health                                    {"status": "ok", "namespaces": {name: port}}
    POST /namespaces/{ns}/faults                    {"down": true} | {"busy": ["attach", "reject", "detach",
                                                    "receive"]} | {"latency": 0.05} | {"drop": true} |
                                                    {"ambiguous_sends": n}: the next n sends stored, then
                                                    the connection cut before the answer
    POST /namespaces/{ns}/heal                      every wire fault and model fault of the namespace cleared
    PUT  /namespaces/{ns}/queues/{name}             create a queue; body: properties (SDK names)
    PUT  /namespaces/{ns}/topics/{name}             create a topic; body: properties
    PUT  /namespaces/{ns}/topics/{t}/subscriptions/{s}
    GET  /namespaces/{ns}/queues/{name}             counts and the active and dead-lettered messages
    GET  /namespaces/{ns}/topics/{t}/subscriptions/{s}
    POST /namespaces/{ns}/lost-renewals             {"count": n}: the next n renew-lock requests find
                                                    the lock lost (the message available again)

Queue names may hold `/` (backlog queues): the last path parameter takes the rest of the path.
A bad request is a 400 with one line naming the field.
"""

from __future__ import annotations

import json
import math
from typing import Any

from aiohttp import web

from pairedbus.emulator.emulator import Emulator
from pairedbus.emulator.server import LOOPBACK

__all__ = ["CA_LINE", "CONTROL_LINE", "ControlEndpoint"]

#: The first field of the line `pairedbus emulator serve` prints for this endpoint (no namespace
#: name starts with `@`).
CONTROL_LINE = "@control"
#: The first field of the line naming the CA certificate of the admin plane's TLS.
CA_LINE = "@ca"

_BUSY_MODES = frozenset({"attach", "reject", "detach", "receive"})
_FAULTS = frozenset({"down", "busy", "latency", "drop", "ambiguous_sends"})


def _bad(message: str) -> web.HTTPBadRequest:
    return web.HTTPBadRequest(text=json.dumps({"error": message}), content_type="application/json")


def _message_view(record: Any) -> dict[str, Any]:
    content = record.content
    body = (
        b"".join(content.body)
        if isinstance(content.body, list) and all(isinstance(b, (bytes, bytearray)) for b in content.body)
        else repr(content.body).encode()
    )
    return {
        "sequence_number": record.sequence_number,
        "message_id": content.message_id,
        "session_id": content.session_id,
        "content_type": content.content_type,
        "body": body.decode("utf-8", "replace"),
        "application_properties": {str(k): str(v) for k, v in (content.filter_properties() or {}).items()},
        "delivery_count": record.deliveries,
        "dead_letter_reason": record.dl_reason,
    }


class ControlEndpoint:
    def __init__(self, emulator: Emulator) -> None:
        self.emulator = emulator
        self.port = 0
        self._runner: web.AppRunner | None = None

    def app(self) -> web.Application:
        app = web.Application(client_max_size=1 << 20)
        app.router.add_get("/health", self._health)
        app.router.add_post("/namespaces/{ns}/faults", self._faults)
        app.router.add_post("/namespaces/{ns}/heal", self._heal)
        app.router.add_put("/namespaces/{ns}/topics/{topic}/subscriptions/{name}", self._put_subscription)
        app.router.add_get("/namespaces/{ns}/topics/{topic}/subscriptions/{name}", self._get_subscription)
        app.router.add_put("/namespaces/{ns}/queues/{name:.+}", self._put_queue)
        app.router.add_put("/namespaces/{ns}/topics/{name:.+}", self._put_topic)
        app.router.add_get("/namespaces/{ns}/queues/{name:.+}", self._get_queue)
        app.router.add_post("/namespaces/{ns}/lost-renewals", self._lost_renewals)
        return app

    async def start(self, port: int = 0) -> int:
        self._runner = web.AppRunner(self.app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, LOOPBACK, port)
        await site.start()
        server = site._server  # aiohttp keeps the listening socket here; no public accessor
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]  # aiohttp types its private _server as AbstractServer; asyncio's Server has the sockets
        return self.port

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # --- handlers -------------------------------------------------------------------------------

    def _broker(self, request: web.Request) -> Any:
        name = request.match_info["ns"]
        broker = self.emulator.brokers.get(name)
        if broker is None:
            raise web.HTTPNotFound(text=json.dumps({"error": f"ns: no namespace {name!r}"}))
        return broker

    async def _body(self, request: web.Request) -> dict[str, Any]:
        if not request.can_read_body:
            return {}
        try:
            body = json.loads(await request.read())
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise _bad(f"body: not JSON ({exc})") from None
        if not isinstance(body, dict):
            raise _bad("body: expected a JSON object")
        return body

    async def _health(self, request: web.Request) -> web.Response:
        ports = {name: broker.port for name, broker in self.emulator.brokers.items()}
        return web.json_response({"status": "ok", "namespaces": ports})

    async def _faults(self, request: web.Request) -> web.Response:
        broker = self._broker(request)
        body = await self._body(request)
        unknown = sorted(set(body) - _FAULTS)
        if unknown:
            raise _bad(f"{unknown[0]}: not a fault ({', '.join(sorted(_FAULTS))})")
        ambiguous = body.get("ambiguous_sends")
        if ambiguous is not None and (
            not isinstance(ambiguous, int) or isinstance(ambiguous, bool) or not 1 <= ambiguous <= 1_000_000
        ):
            raise _bad(f"ambiguous_sends: expected a count from 1 to 1000000, got {ambiguous!r}")
        busy = body.get("busy")
        if busy is not None and (not isinstance(busy, list) or not set(busy) <= _BUSY_MODES):
            raise _bad(f"busy: expected a list of {sorted(_BUSY_MODES)}, got {busy!r}")
        latency = body.get("latency")
        if latency is not None and (
            not isinstance(latency, (int, float))
            or isinstance(latency, bool)
            or not math.isfinite(latency)
            or not 0 <= latency <= 60
        ):
            raise _bad(f"latency: expected seconds from 0 to 60, got {latency!r}")
        faults = broker.faults
        if busy is not None:
            faults.busy = set(busy)
        if latency is not None:
            faults.latency = float(latency)
        if body.get("down") is True:
            faults.down()
        elif body.get("down") is False:
            faults.up()
        if ambiguous is not None:
            # the next sends are stored and then the connection is cut before the answer
            self.emulator.world.ambiguous_sends(broker.fqdn, times=ambiguous)
        dropped = broker.drop_connections() if body.get("drop") is True else 0
        return web.json_response(
            {"down": faults.is_down, "busy": sorted(faults.busy), "latency": faults.latency, "dropped": dropped}
        )

    async def _heal(self, request: web.Request) -> web.Response:
        broker = self._broker(request)
        broker.faults.heal()
        self.emulator.world.heal(broker.fqdn)
        return web.json_response({"down": False, "busy": [], "latency": 0.0})

    async def _create(self, request: web.Request, create: Any) -> web.Response:
        body = await self._body(request)
        try:
            create(**body)
        except Exception as exc:
            raise _bad(str(getattr(exc, "message", exc))) from None
        return web.json_response({"created": True}, status=201)

    async def _put_queue(self, request: web.Request) -> web.Response:
        ns = self._broker(request).namespace
        return await self._create(request, lambda **p: ns.create_queue(request.match_info["name"], **p))

    async def _put_topic(self, request: web.Request) -> web.Response:
        ns = self._broker(request).namespace
        return await self._create(request, lambda **p: ns.create_topic(request.match_info["name"], **p))

    async def _put_subscription(self, request: web.Request) -> web.Response:
        ns = self._broker(request).namespace
        topic, name = request.match_info["topic"], request.match_info["name"]
        return await self._create(request, lambda **p: ns.create_subscription(topic, name, **p))

    def _view(self, entity: Any) -> web.Response:
        now = self.emulator.world.clock.time()
        return web.json_response(
            {
                "counts": entity.message_counts(),
                "duplicates_dropped": getattr(getattr(entity, "counts", None), "duplicates_dropped", 0),
                "active": [_message_view(r) for r in entity.store.all_records(now)],
                "dead_letter": [_message_view(r) for r in entity.dead_letter_store.all_records(now)],
            }
        )

    async def _get_queue(self, request: web.Request) -> web.Response:
        ns = self._broker(request).namespace
        try:
            return self._view(ns.receivable(request.match_info["name"]))
        except Exception as exc:
            raise web.HTTPNotFound(text=json.dumps({"error": str(getattr(exc, "message", exc))})) from None

    async def _get_subscription(self, request: web.Request) -> web.Response:
        ns = self._broker(request).namespace
        try:
            return self._view(ns.receivable(request.match_info["topic"], request.match_info["name"]))
        except Exception as exc:
            raise web.HTTPNotFound(text=json.dumps({"error": str(getattr(exc, "message", exc))})) from None

    async def _lost_renewals(self, request: web.Request) -> web.Response:
        broker = self._broker(request)
        count = (await self._body(request)).get("count")
        if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= 1_000_000:
            raise _bad(f"count: expected a count from 0 to 1000000, got {count!r}")
        broker.faults.lost_renewals = count
        return web.json_response({"lost_renewals": count})
