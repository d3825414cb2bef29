"""The emulator's control endpoint (HTTP, loopback only): faults while it runs, entities, counts.

A test or drill whose brokers run in another process drives them here:

    GET  /health                                    {"status": "ok", "namespaces": {name: port}}
    POST /namespaces/{ns}/faults                    {"down": true} | {"busy": ["attach", "reject", "detach",
                                                    "receive"]} | {"latency": 0.05} | {"drop": true} |
                                                    {"ambiguous_sends": n}: the next n sends stored, then
                                                    the connection cut before the answer |
                                                    {"throttle": rate}: at most rate operations a second
                                                    (attach, send, receive), the rest server-busy (50009) |
                                                    {"quota_exceeded": entity}: the queue or topic is full
                                                    (amqp:resource-limit-exceeded on its links) until healed |
                                                    {"busy_dispositions": n}: the next n dispositions on
                                                    receive links answered server-busy (the lock kept)
    POST /namespaces/{ns}/heal                      every wire fault and model fault of the namespace cleared
    PUT  /namespaces/{ns}/queues/{name}             create a queue; body: properties (SDK names)
    PUT  /namespaces/{ns}/topics/{name}             create a topic; body: properties
    PUT  /namespaces/{ns}/topics/{t}/subscriptions/{s}
    GET  /namespaces/{ns}/queues/{name}             counts and the active and dead-lettered messages
    GET  /namespaces/{ns}/topics/{t}/subscriptions/{s}
    GET  /namespaces/{ns}/entities[?messages=true]  every queue, topic and subscription in one answer: counts
                                                    and duplicates dropped; with messages, what each holds
                                                    (`waiting`: active, locked, scheduled, deferred) and its
                                                    dead letters, bodies left out
    GET  /world                                     the random faults of every namespace served here, and how
                                                    many of each fired (`injected`)
    POST /world                                     {"seed": n, "fault_rate": p, "ambiguous_send_rate": p,
                                                    "late_lock_loss_rate": p} (0 <= p < 1): the model's random
                                                    faults, answered on the wire (server-busy; stored, then the
                                                    connection cut; a complete that finds its lock lost)
    POST /namespaces/{ns}/lost-renewals             {"count": n}: the next n renew-lock requests find
                                                    the lock lost (the message available again)

Queue names may hold `/` (backlog queues): the last path parameter takes the rest of the path.
A bad request is a 400 with one line naming the field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Container
from typing import Any

from aiohttp import web

from pairedbus.emulator.emulator import Emulator
from pairedbus.emulator.server import LOOPBACK
from pairedbus.servicebus.content import BodyType
from pairedbus.servicebus.errors import ErrorKind

__all__ = ["CA_LINE", "CONTROL_LINE", "ControlEndpoint"]

#: The first field of the line `pairedbus emulator serve` prints for this endpoint (no namespace
#: name starts with `@`).
CONTROL_LINE = "@control"
#: The first field of the line naming the CA certificate of the admin plane's TLS.
CA_LINE = "@ca"

_BUSY_MODES = frozenset({"attach", "reject", "detach", "receive"})
_FAULTS = frozenset(
    {"down", "busy", "busy_dispositions", "latency", "drop", "ambiguous_sends", "throttle", "quota_exceeded"}
)
#: The world's random faults `POST /world` sets (the model draws them from its seeded generator).
_RATES = ("fault_rate", "ambiguous_send_rate", "late_lock_loss_rate")


def _bad(message: str) -> web.HTTPBadRequest:
    return web.HTTPBadRequest(text=json.dumps({"error": message}), content_type="application/json")


def _message_view(record: Any) -> dict[str, Any]:
    content = record.content
    body = b"".join(content.body) if content.body_type is BodyType.DATA else repr(content.body).encode()
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


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, (bytes, bytearray)) else str(value)


def _held_view(record: Any, state: str) -> dict[str, Any]:
    """What an audit needs of a held message: no body (a drill's audit reads tens of thousands)."""
    content = record.content
    return {
        "message_id": None if content.message_id is None else _text(content.message_id),
        "sequence_number": record.sequence_number,
        "content_type": content.content_type,
        "state": state,
        "application_properties": {_text(k): _text(v) for k, v in (content.filter_properties() or {}).items()},
        "dead_letter_reason": record.dl_reason,
    }


def _holding(entity: Any, now: float, *, messages: bool) -> dict[str, Any]:
    """Counts of a queue or subscription; with `messages`, what it holds and its dead letters."""
    view: dict[str, Any] = {"counts": entity.message_counts()}
    if messages:
        store = entity.store
        view["waiting"] = [
            *(_held_view(r, "active") for r in store.queued_records(now)),
            *(_held_view(r, "scheduled") for r in sorted(store.scheduled.values(), key=_sequence)),
            *(_held_view(r, "deferred") for r in sorted(store.deferred.values(), key=_sequence)),
        ]
        view["dead_letter"] = [_held_view(r, "dead-lettered") for r in entity.dead_letter_store.queued_records(now)]
    return view


def _sequence(record: Any) -> int:
    return int(record.sequence_number)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check_count(name: str, value: Any, low: int) -> None:
    """The 400 naming `name` unless `value` is absent or a count from `low` to 1,000,000."""
    if value is not None and not (isinstance(value, int) and not isinstance(value, bool) and low <= value <= 1_000_000):
        raise _bad(f"{name}: expected a count from {low} to 1000000, got {value!r}")


def _checked_faults(body: dict[str, Any], entities: Container[str]) -> dict[str, Any]:
    """`body` when every fault in it is well formed; else the 400 naming the first that is not
    (nothing applied)."""
    unknown = sorted(set(body) - _FAULTS)
    if unknown:
        raise _bad(f"{unknown[0]}: not a fault ({', '.join(sorted(_FAULTS))})")
    ambiguous, busy, latency, throttle, full = (
        body.get(name) for name in ("ambiguous_sends", "busy", "latency", "throttle", "quota_exceeded")
    )
    _check_count("ambiguous_sends", ambiguous, 1)
    _check_count("busy_dispositions", body.get("busy_dispositions"), 0)
    if busy is not None and (not isinstance(busy, list) or not set(busy) <= _BUSY_MODES):
        raise _bad(f"busy: expected a list of {sorted(_BUSY_MODES)}, got {busy!r}")
    if latency is not None and not (_number(latency) and 0 <= latency <= 60):
        raise _bad(f"latency: expected seconds from 0 to 60, got {latency!r}")
    if throttle is not None and not (_number(throttle) and 0 < throttle <= 1_000_000):
        raise _bad(f"throttle: expected operations per second above 0, up to 1000000, got {throttle!r}")
    if full is not None and not (isinstance(full, str) and full in entities):
        raise _bad(f"quota_exceeded: expected the name of a queue or topic of this namespace, got {full!r}")
    return body


def _rate(name: str, value: Any) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value < 1:
        raise _bad(f"{name}: expected a probability, 0 <= p < 1, got {value!r}")
    return float(value)


class ControlEndpoint:
    def __init__(self, emulator: Emulator) -> None:
        self.emulator = emulator
        self.port = 0
        #: The seed `POST /world` last gave the model's generator (None: never).
        self.seed: int | None = None
        self._runner: web.AppRunner | None = None
        #: The entities `quota_exceeded` filled, by namespace: healed with it.
        self._full: dict[str, set[str]] = {}

    def app(self) -> web.Application:
        app = web.Application(client_max_size=1 << 20)
        app.router.add_get("/health", self._health)
        app.router.add_get("/world", self._get_world)
        app.router.add_post("/world", self._post_world)
        app.router.add_get("/namespaces/{ns}/entities", self._entities)
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

    def _world_view(self) -> dict[str, Any]:
        world = self.emulator.world
        return {
            "seed": self.seed,
            **{name: getattr(world, name) for name in _RATES},
            "injected": dict(world.injected),
        }

    async def _get_world(self, request: web.Request) -> web.Response:
        return web.json_response(self._world_view())

    async def _post_world(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        unknown = sorted(set(body) - {"seed", *_RATES})
        if unknown:
            raise _bad(f"{unknown[0]}: not a world setting (seed, {', '.join(_RATES)})")
        seed = body.get("seed")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise _bad(f"seed: expected an integer, got {seed!r}")
        rates = {name: _rate(name, body[name]) for name in _RATES if name in body}  # all checked before any is set
        world = self.emulator.world
        if seed is not None:
            world.seed(seed)
            self.seed = seed
        for name, value in rates.items():
            setattr(world, name, value)
        return web.json_response(self._world_view())

    async def _entities(self, request: web.Request) -> web.Response:
        ns = self._broker(request).namespace
        flag = request.query.get("messages", "false")
        if flag not in ("true", "false"):
            raise _bad(f"messages: expected true or false, got {flag!r}")
        messages = flag == "true"
        now = self.emulator.world.clock.time()
        queues = {
            q.name: {**_holding(q, now, messages=messages), "duplicates_dropped": q.counts.duplicates_dropped}
            for q in ns.queues()
        }
        topics = {
            t.name: {
                "duplicates_dropped": t.counts.duplicates_dropped,
                "subscriptions": {s.name: _holding(s, now, messages=messages) for s in t.receivables()},
            }
            for t in ns.topics()
        }
        return web.json_response({"queues": queues, "topics": topics})

    async def _faults(self, request: web.Request) -> web.Response:
        broker = self._broker(request)
        body = _checked_faults(await self._body(request), self.emulator.world.namespace(broker.fqdn).entities)
        ambiguous, busy, latency, throttle, full = (
            body.get(name) for name in ("ambiguous_sends", "busy", "latency", "throttle", "quota_exceeded")
        )
        faults = broker.faults
        if full is not None:
            self.emulator.world.fail(broker.fqdn, full, ErrorKind.QUOTA_EXCEEDED)
            self._full.setdefault(broker.fqdn, set()).add(full)
        if throttle is not None:
            faults.throttle(throttle)
        if busy is not None:
            faults.busy = set(busy)
        if body.get("busy_dispositions") is not None:
            faults.busy_dispositions = body["busy_dispositions"]
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
            {
                "down": faults.is_down,
                "busy": sorted(faults.busy),
                "latency": faults.latency,
                "throttle": faults.throttle_rate,
                "quota_exceeded": sorted(self._full.get(broker.fqdn, ())),
                "busy_dispositions": faults.busy_dispositions,
                "dropped": dropped,
            }
        )

    async def _heal(self, request: web.Request) -> web.Response:
        broker = self._broker(request)
        broker.faults.heal()
        self.emulator.world.heal(broker.fqdn)
        for entity in self._full.pop(broker.fqdn, ()):
            self.emulator.world.heal(broker.fqdn, entity)
        return web.json_response({"down": False, "busy": [], "latency": 0.0, "throttle": None, "quota_exceeded": []})

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
