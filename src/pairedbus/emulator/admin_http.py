"""The Service Bus admin plane over HTTP(S): the Atom REST API `ServiceBusAdministrationClient`
(sync and aio, unmodified) calls, served on the in-process model (`pairedbus.servicebus.world`).

Each namespace gets its own port, as in the AMQP front-end (the client addresses a namespace by
host and port only). Every request but `GET /health` must carry a shared access signature made
with one of the namespace's keys. Requests become calls of the model's management operations
(`pairedbus.servicebus.admin.AdminOperations`: the same operations, rules and errors the in-process
fake client's `pairedbus.testing.admin` calls), and their records and errors go back as the service
writes them (`pairedbus.emulator.atom`):

| request | operation |
|---|---|
| `GET /$namespaceinfo` | `get_namespace_properties` |
| `GET /$Resources/queues?$skip=&$top=` (and `topics`) | `list_queues` / `list_topics` with runtime counts |
| `PUT /{entity}` (`If-Match: *` updates) | `create_queue`/`create_topic` or `update_*` by the body's description |
| `GET /{entity}` / `DELETE /{entity}` | `get_queue`/`get_topic` (an empty feed when absent) / `delete_*` |
| `GET /{topic}/Subscriptions[/{sub}]`, `PUT`, `DELETE` | subscriptions |
| `GET /{topic}/Subscriptions/{sub}/Rules[/{rule}]`, `PUT`, `DELETE` | rules |

Entity names may hold `/` (backlog queues: `<primary>/<transfer segment>/<index>`, see `contract.backlog_queue_name`): the Python client
sends them as one `%2F`-encoded segment, the .NET client with literal slashes; both are read.
Only loopback addresses are served.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import threading
import urllib.parse
import uuid
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Final

from aiohttp import web
from azure.core.exceptions import HttpResponseError
from azure.core.pipeline.transport import AioHttpTransport, RequestsTransport
from azure.servicebus.exceptions import ServiceBusError, ServiceBusServerBusyError

from pairedbus import contract
from pairedbus.emulator import atom, conditions
from pairedbus.emulator.cbs import SAS_PREFIX, audience_path, check_token
from pairedbus.emulator.certificates import TlsFiles
from pairedbus.emulator.server import DEFAULT_KEY, DEFAULT_KEY_NAME, Broker
from pairedbus.servicebus.admin import AdminOperations, EntityProperties, RuntimeProperties
from pairedbus.servicebus.clock import to_datetime
from pairedbus.servicebus.entities import Queue, Topic
from pairedbus.servicebus.errors import ErrorKind, ServiceError, bad_request
from pairedbus.servicebus.filters import Rule
from pairedbus.servicebus.world import ServiceBusWorld, normalize_fqdn

#: Microsoft's emulator serves its management endpoint (and `/health`) on this port, over HTTP.
EMULATOR_MANAGEMENT_PORT: Final = 5300
#: The API version the service writes into the links it returns.
API_VERSION: Final = "2021-05"
DEFAULT_PAGE_SIZE: Final = 100
STOP_TIMEOUT_SECONDS: Final = 10.0


@dataclass(frozen=True)
class AdminNamespace:
    """One namespace of the world, served on its own port: the keys (name -> key) its SAS tokens
    must be signed with, as the AMQP `Broker` takes them; an Entra ID (bearer) token cannot be
    checked offline and is accepted when `accept_entra_tokens`, as Microsoft's emulator accepts it."""

    fqdn: str
    keys: Mapping[str, str] = field(default_factory=lambda: {DEFAULT_KEY_NAME: DEFAULT_KEY})
    accept_entra_tokens: bool = True


class TokenRefused(Exception):
    """A request the service answers 401: no token, or one that does not grant access."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class _Item:
    """One entity as an Atom entry: its name (the entry's title), its path below the namespace,
    its description, and when it was created and last updated."""

    title: str
    path: str
    content: str
    published: datetime.datetime | None
    updated: datetime.datetime | None


@dataclass
class _Request:
    """What every handler needs: the request's own host and scheme, and the namespace's operations."""

    http: web.Request
    ops: AdminOperations
    author: str

    def url(self, path: str, query: str = "") -> str:
        suffix = f"?{query}&api-version={API_VERSION}" if query else f"?api-version={API_VERSION}"
        return f"{self.http.scheme}://{self.http.host}/{path}{suffix}"

    def entity_uri(self, name: str) -> str:
        return f"sb://{self.http.host}/{name}"

    def entry(self, item: _Item) -> str:
        return atom.entry(
            url=self.url(item.path),
            title=item.title,
            content=item.content,
            author=self.author,
            published=_instant(item.published),
            updated=_instant(item.updated),
        )


def _now() -> str:
    return atom.datetime_text(datetime.datetime.now(datetime.UTC).replace(microsecond=0))


def _instant(value: datetime.datetime | None) -> str:
    """An entry's published/updated: the instant to the second, as the service writes them."""
    return _now() if value is None else atom.datetime_text(value.replace(microsecond=0))


def _quoted(*names: str) -> str:
    """A path of entity names, each one segment (`a/b` -> `a%2Fb`)."""
    return "/".join(urllib.parse.quote(name, safe="") for name in names)


def _tracking(http: web.Request) -> str:
    return f" TrackingId:{uuid.uuid4()}_G0, SystemTracker:{http.host}:{http.path}, Timestamp:{_now()}"


def _error_response(http: web.Request, status: int, detail: str) -> web.Response:
    return web.Response(
        status=status,
        text=atom.error(status, detail + _tracking(http)),
        content_type="application/xml",
        charset="utf-8",
    )


#: The HTTP status the service answers for the model's refusals, and what it adds to the text
#: (anything else: 500).
_HTTP_STATUS = {
    ErrorKind.BAD_REQUEST: (400, ""),
    ErrorKind.INVALID_OPERATION: (400, ""),
    ErrorKind.NAMESPACE_QUOTA_EXCEEDED: (403, ""),
    ErrorKind.RESOURCE_NOT_FOUND: (404, " SubCode=40400."),
    ErrorKind.RESOURCE_EXISTS: (409, " SubCode=40900. Conflict."),
}


def _status_of(exc: BaseException) -> tuple[int, str]:
    """The HTTP status the service answers for an operation's error."""
    exc = conditions.made(exc)
    message = getattr(exc, "message", None) or str(exc)
    kind = exc.kind if isinstance(exc, ServiceError) else None
    if kind is ErrorKind.SERVER_BUSY:
        return 503, f"ServerBusy: {message}"
    if kind in _HTTP_STATUS:
        status, suffix = _HTTP_STATUS[kind]
        return status, message + suffix
    if isinstance(exc, HttpResponseError):
        return exc.status_code or 400, message
    if isinstance(exc, ServiceBusServerBusyError):
        return 503, f"ServerBusy: {message}"
    return 500, message


def _entry_response(body: str, *, status: int = 200) -> web.Response:
    return web.Response(status=status, text=body, headers={"Content-Type": atom.ENTRY_CONTENT_TYPE})


def _feed_response(body: str) -> web.Response:
    return web.Response(status=200, text=body, headers={"Content-Type": atom.FEED_CONTENT_TYPE})


def _segments(raw_path: str) -> list[str]:
    """The path's segments, each decoded: `a%2Fb` stays one segment `a/b`, a literal `/` splits."""
    path = raw_path.split("?", 1)[0].strip("/")
    return [urllib.parse.unquote(part) for part in path.split("/")] if path else []


def _token_audience(token: str) -> str | None:
    """The `sr` of a SAS token (still URL-encoded), None for a bearer token."""
    if not token.startswith(SAS_PREFIX):
        return None
    fields = dict(part.partition("=")[::2] for part in token[len(SAS_PREFIX) :].split("&"))
    return fields.get("sr")


def _resolve(segments: list[str], method: str) -> tuple[str, tuple[str, ...]]:
    """Which route a path and method take (`_Handlers._route`), and the names the path holds."""
    lowered = [s.lower() for s in segments]
    if not segments:
        return "root", ()
    if method == "GET" and lowered == ["$namespaceinfo"]:
        return "namespace", ()
    if method == "GET" and len(lowered) == 2 and lowered[0] == "$resources" and lowered[1] in ("queues", "topics"):
        return lowered[1], ()
    if "subscriptions" in lowered[1:]:
        return _subscription_route(segments, lowered.index("subscriptions", 1), method)
    return "entity", ("/".join(segments),)


def _subscription_route(segments: list[str], index: int, method: str) -> tuple[str, tuple[str, ...]]:
    """`{topic}/Subscriptions[/{sub}[/Rules[/{rule}]]]`: the topic's name may hold slashes."""
    topic, rest = "/".join(segments[:index]), segments[index + 1 :]
    rules = len(rest) >= 2 and rest[1].lower() == "rules"
    if not rest and method == "GET":
        return "subscriptions", (topic,)
    if len(rest) == 1:
        return "subscription", (topic, rest[0])
    if len(rest) == 2 and rules and method == "GET":
        return "rules", (topic, rest[0])
    if len(rest) == 3 and rules:
        return "rule", (topic, rest[0], rest[2])
    raise bad_request(f"Unsupported management path '{'/'.join(segments)}'.")


def _page(http: web.Request) -> tuple[int, int]:
    try:
        skip = int(http.query.get("$skip", "0"))
        top = int(http.query.get("$top", str(DEFAULT_PAGE_SIZE)))
    except ValueError:
        raise bad_request("$skip and $top must be integers.") from None
    if skip < 0 or top < 1:
        raise bad_request("$skip must be >= 0 and $top >= 1.")
    return skip, top


class _Handlers:
    """The routes of one namespace: each turns a request into `AdminOperations` calls."""

    def __init__(self, world: ServiceBusWorld, namespace: AdminNamespace) -> None:
        self.world = world
        self.namespace = namespace
        self.ops = AdminOperations(world, namespace.fqdn)
        self.author = contract.namespace_from_fqdn(namespace.fqdn)

    # --- dispatch -------------------------------------------------------------------------------

    async def handle(self, http: web.Request) -> web.StreamResponse:
        if http.method == "GET" and http.path == "/health" and "Authorization" not in http.headers:
            return web.json_response({"status": "Healthy"})
        segments = _segments(http.raw_path)
        try:
            self._authorize(http, segments)
            body = await http.read() if http.method == "PUT" else b""
            return self._route(_Request(http, self.ops, self.author), segments, body)
        except TokenRefused as refused:
            return _error_response(http, 401, str(refused))
        except (HttpResponseError, ServiceBusError, ServiceError) as exc:
            status, detail = _status_of(exc)
            return _error_response(http, status, detail)

    def _authorize(self, http: web.Request, segments: list[str]) -> None:
        """The token's signature, key and expiry as `$cbs` checks them (`cbs.check_token`); and,
        as the service does, its audience must be the namespace or a path above the resource."""
        token = http.headers.get("Authorization")
        if token is None:
            raise TokenRefused("MissingToken: The request has no authorization header.")
        namespace = self.namespace
        check = check_token(token, dict(namespace.keys), accept_entra_tokens=namespace.accept_entra_tokens)
        if not check.ok:
            raise TokenRefused(check.description)
        audience = _token_audience(token)
        if audience is not None:
            scope, path = audience_path(audience).lower(), "/".join(segments).lower()  # names ignore case
            if scope and path != scope and not path.startswith(scope + "/"):
                raise TokenRefused(f"InvalidAudience: The token audience '{scope}' does not grant access to '{path}'.")

    def _route(self, request: _Request, segments: list[str], body: bytes) -> web.StreamResponse:
        route, names = _resolve(segments, request.http.method)
        handlers: dict[str, Callable[[], web.StreamResponse]] = {
            "root": lambda: self._root(request),
            "namespace": lambda: self._namespace_info(request),
            "queues": lambda: self._list_queues(request),
            "topics": lambda: self._list_topics(request),
            "entity": lambda: self._entity(request, request.http.method, names[0], body),
            "subscriptions": lambda: self._list_subscriptions(request, names[0]),
            "subscription": lambda: self._subscription(request, request.http.method, names[0], names[1], body),
            "rules": lambda: self._list_rules(request, names[0], names[1]),
            "rule": lambda: self._rule(request, request.http.method, names[0], names[1], names[2], body),
        }
        return handlers[route]()

    @staticmethod
    def _root(request: _Request) -> web.Response:
        if request.http.method == "GET":
            return _feed_response(atom.empty_feed(_now()))
        raise bad_request("No entity path supplied.")

    # --- namespace ------------------------------------------------------------------------------

    def _namespace_info(self, request: _Request) -> web.Response:
        properties = self.ops.get_namespace_properties()
        sku = contract.SKU_PREMIUM if properties.sku == contract.SKU_PREMIUM else contract.SKU_STANDARD
        content = atom.namespace_info_xml(properties.name, sku=sku, messaging_units=properties.messaging_units)
        item = _Item(properties.name, "$namespaceinfo", content, None, None)
        return _entry_response(request.entry(item))

    # --- queues and topics ----------------------------------------------------------------------

    def _model_entity(self, name: str) -> Any:
        return self.world.resolve(self.namespace.fqdn).entities.get(name)

    def _entity_item(self, request: _Request, entity: Queue | Topic) -> _Item:
        settings: EntityProperties
        runtime: RuntimeProperties
        if isinstance(entity, Queue):
            kind, settings, runtime = atom.Kind.QUEUE, self.ops.queue_properties(entity), self.ops.queue_runtime(entity)
        else:
            kind, settings, runtime = atom.Kind.TOPIC, self.ops.topic_properties(entity), self.ops.topic_runtime(entity)
        content = atom.description_xml(kind, settings.values, runtime, entity_uri=request.entity_uri)
        return _Item(entity.name, _quoted(entity.name), content, runtime.created_at_utc, runtime.updated_at_utc)

    def _entity(self, request: _Request, method: str, name: str, body: bytes) -> web.Response:
        entity = self._model_entity(name)
        if method == "GET":
            if isinstance(entity, Topic):
                self.ops.get_topic(name)
            else:
                try:
                    self.ops.get_queue(name)  # faults first, as for any operation
                except ServiceError as error:
                    if error.kind is not ErrorKind.RESOURCE_NOT_FOUND:
                        raise
                    return _feed_response(atom.empty_feed(_now()))
            return _entry_response(request.entry(self._entity_item(request, self._model_entity(name))))
        if method == "DELETE":
            if isinstance(entity, Topic):
                self.ops.delete_topic(name)
            else:
                self.ops.delete_queue(name)
            return web.Response(status=200)
        if method == "PUT":
            description = atom.parse_entry(body)
            kind = atom.description_kind(description)
            updating = request.http.headers.get("If-Match") is not None
            values = atom.parse_description(description, replacing=updating)
            if kind is atom.Kind.QUEUE:
                if updating:
                    self.ops.update_queue(name, values)
                else:
                    self.ops.create_queue(name, values)
            elif kind is atom.Kind.TOPIC:
                if updating:
                    self.ops.update_topic(name, values)
                else:
                    self.ops.create_topic(name, values)
            else:
                raise bad_request(f"A {kind.value} cannot be put at '{name}'.")
            item = self._entity_item(request, self._model_entity(name))
            return _entry_response(request.entry(item), status=200 if updating else 201)
        raise bad_request(f"Unsupported method {method}.")

    def _feed(self, request: _Request, path: str, title: str, items: Sequence[_Item]) -> web.Response:
        """A page of items as the service pages a list: `$skip`/`$top`, a `next` link while more remain."""
        skip, top = _page(request.http)
        entries = [request.entry(item) for item in items[skip : skip + top]]
        more = skip + top < len(items)
        next_url = request.url(path, f"%24skip={skip + top}&%24top={top}") if more else None
        url = request.url(path, f"%24skip={skip}&%24top={top}")
        return _feed_response(atom.feed(url=url, title=title, entries=entries, updated=_now(), next_url=next_url))

    def _list_queues(self, request: _Request) -> web.Response:
        ns = self.world.resolve(self.namespace.fqdn)
        items = [self._entity_item(request, ns.queue(q.name)) for q in self.ops.list_queues()]
        return self._feed(request, "$Resources/queues", "Queues", items)

    def _list_topics(self, request: _Request) -> web.Response:
        ns = self.world.resolve(self.namespace.fqdn)
        items = [self._entity_item(request, ns.topic(t.name)) for t in self.ops.list_topics()]
        return self._feed(request, "$Resources/topics", "Topics", items)

    # --- subscriptions --------------------------------------------------------------------------

    def _subscription_item(self, request: _Request, topic: str, name: str) -> _Item:
        sub = self.world.resolve(self.namespace.fqdn).subscription(topic, name)
        runtime = self.ops.subscription_runtime(sub)
        content = atom.description_xml(
            atom.Kind.SUBSCRIPTION, self.ops.subscription_properties(sub).values, runtime, entity_uri=request.entity_uri
        )
        path = f"{_quoted(topic)}/Subscriptions/{_quoted(name)}"
        return _Item(name, path, content, runtime.created_at_utc, runtime.updated_at_utc)

    def _subscription(self, request: _Request, method: str, topic: str, name: str, body: bytes) -> web.Response:
        if method == "GET":
            self.ops.get_subscription(topic, name)
            return _entry_response(request.entry(self._subscription_item(request, topic, name)))
        if method == "DELETE":
            self.ops.delete_subscription(topic, name)
            return web.Response(status=200)
        if method == "PUT":
            description = atom.parse_entry(body)
            if atom.description_kind(description) is not atom.Kind.SUBSCRIPTION:
                raise bad_request("A subscription is put with a SubscriptionDescription.")
            updating = request.http.headers.get("If-Match") is not None
            values = atom.parse_description(description, replacing=updating)
            if updating:
                self.ops.update_subscription(topic, name, values)
            else:
                self.ops.create_subscription(topic, name, values, default_rule=atom.default_rule(description))
            item = self._subscription_item(request, topic, name)
            return _entry_response(request.entry(item), status=200 if updating else 201)
        raise bad_request(f"Unsupported method {method}.")

    def _list_subscriptions(self, request: _Request, topic: str) -> web.Response:
        items = [self._subscription_item(request, topic, s.name) for s in self.ops.list_subscriptions(topic)]
        return self._feed(request, f"{_quoted(topic)}/Subscriptions", "Subscriptions", items)

    # --- rules ----------------------------------------------------------------------------------

    @staticmethod
    def _rule_item(topic: str, sub: str, rule: Rule) -> _Item:
        path = f"{_quoted(topic)}/Subscriptions/{_quoted(sub)}/Rules/{_quoted(rule.name)}"
        created = None if rule.created_at is None else to_datetime(rule.created_at)
        return _Item(rule.name, path, atom.rule_xml(rule), created, created)

    def _rule(self, request: _Request, method: str, topic: str, sub: str, name: str, body: bytes) -> web.Response:
        if method == "GET":
            return _entry_response(request.entry(self._rule_item(topic, sub, self.ops.get_rule(topic, sub, name))))
        if method == "DELETE":
            self.ops.delete_rule(topic, sub, name)
            return web.Response(status=200)
        if method == "PUT":
            description = atom.parse_entry(body)
            if atom.description_kind(description) is not atom.Kind.RULE:
                raise bad_request("A rule is put with a RuleDescription.")
            rule_filter, action = atom.parse_rule(description)
            if request.http.headers.get("If-Match") is not None:
                rule = self.ops.update_rule(topic, sub, name, rule_filter, action)
                return _entry_response(request.entry(self._rule_item(topic, sub, rule)))
            rule = self.ops.create_rule(topic, sub, name, rule_filter, action)
            return _entry_response(request.entry(self._rule_item(topic, sub, rule)), status=201)
        raise bad_request(f"Unsupported method {method}.")

    def _list_rules(self, request: _Request, topic: str, sub: str) -> web.Response:
        items = [self._rule_item(topic, sub, rule) for rule in self.ops.list_rules(topic, sub)]
        return self._feed(request, f"{_quoted(topic)}/Subscriptions/{_quoted(sub)}/Rules", "Rules", items)


@dataclass
class _Site:
    namespace: AdminNamespace
    runner: web.AppRunner
    port: int


@dataclass
class AdminPlane:
    """The admin plane of some namespaces of `world`, each on its own loopback port.

    `port` is the first namespace's port (0: any free port for each); the next namespaces take
    the following ports. `tls`: serve HTTPS with these files (see `certificates.generate_certificates`),
    else plain HTTP as Microsoft's emulator does on port 5300. Use `async with` or `start`/`stop`;
    `serve_in_thread` runs it beside synchronous code.
    """

    world: ServiceBusWorld
    namespaces: Sequence[AdminNamespace | str]
    host: str = "127.0.0.1"
    port: int = 0
    tls: TlsFiles | None = None
    _sites: list[_Site] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        if not is_loopback(self.host):
            raise ValueError(f"the admin plane serves loopback addresses only, not {self.host!r}")
        served = [AdminNamespace(n) if isinstance(n, str) else n for n in self.namespaces]
        # bare names become the world's fully qualified ones (created there if missing)
        self.namespaces = [replace(n, fqdn=self.world.namespace(n.fqdn).fqdn) for n in served]

    @classmethod
    def beside(
        cls, world: ServiceBusWorld, brokers: Iterable[Broker], *, port: int = 0, tls: TlsFiles | None = None
    ) -> AdminPlane:
        """The admin plane of AMQP brokers' namespaces: the same world, the same keys, its own ports."""
        namespaces = [AdminNamespace(b.fqdn, dict(b.keys), b.accept_entra_tokens) for b in brokers]
        return cls(world, namespaces, port=port, tls=tls)

    @property
    def scheme(self) -> str:
        return "http" if self.tls is None else "https"

    async def start(self) -> None:
        if self._sites:
            raise RuntimeError("the admin plane is already started")
        context = None if self.tls is None else self.tls.server_context()
        try:
            for offset, namespace in enumerate(self.namespaces):
                assert isinstance(namespace, AdminNamespace)
                handlers = _Handlers(self.world, namespace)
                app = web.Application()
                app.router.add_route("*", "/{tail:.*}", handlers.handle)
                runner = web.AppRunner(app, access_log=None)
                await runner.setup()
                site = web.TCPSite(runner, self.host, self.port + offset if self.port else 0, ssl_context=context)
                await site.start()
                sockets = runner.addresses
                self._sites.append(_Site(namespace, runner, int(sockets[0][1])))
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        sites, self._sites = self._sites, []
        for site in sites:
            await asyncio.wait_for(site.runner.cleanup(), STOP_TIMEOUT_SECONDS)

    async def __aenter__(self) -> AdminPlane:
        await self.start()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.stop()

    def _site(self, fqdn: str) -> _Site:
        key = normalize_fqdn(fqdn if "." in fqdn else contract.service_bus_fqdn(fqdn))
        for site in self._sites:
            if normalize_fqdn(site.namespace.fqdn) == key:
                return site
        raise KeyError(f"{fqdn} is not served (or the admin plane is not started)")

    def port_of(self, fqdn: str) -> int:
        return self._site(fqdn).port

    def address(self, fqdn: str) -> str:
        """`localhost:PORT`: what the admin client takes as `fully_qualified_namespace`."""
        return f"localhost:{self.port_of(fqdn)}"

    def connection_string(self, fqdn: str) -> str:
        """The namespace's connection string with its first key (`UseDevelopmentEmulator=true`
        keeps the port, as for the AMQP front-end)."""
        site = self._site(fqdn)
        name, key = next(iter(site.namespace.keys.items()))
        return (
            f"Endpoint=sb://localhost:{site.port};SharedAccessKeyName={name};"
            f"SharedAccessKey={key};UseDevelopmentEmulator=true"
        )


def _run(loop: asyncio.AbstractEventLoop, work: Callable[[], Awaitable[None]], timeout: float) -> None:
    async def call() -> None:
        await work()

    asyncio.run_coroutine_threadsafe(call(), loop).result(timeout)


@contextmanager
def serve_in_thread(plane: AdminPlane, *, timeout: float = STOP_TIMEOUT_SECONDS) -> Iterator[AdminPlane]:
    """Run `plane` on an event loop of its own thread while the block runs (for synchronous
    clients, which block the calling thread). The world is not locked: touch it from the block
    only between requests, as a synchronous client does."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    thread = threading.Thread(
        target=lambda: (ready.set(), loop.run_forever()), name="pairedbus-admin-plane", daemon=True
    )
    thread.start()
    ready.wait(timeout)
    try:
        _run(loop, plane.start, timeout)
        yield plane
    finally:
        try:
            _run(loop, plane.stop, timeout)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
            loop.close()


class PlainHttpTransport(RequestsTransport):
    """azure-core's requests transport sending the client's `https://` URLs as `http://`.

    `ServiceBusAdministrationClient` 7.15.0 always builds `https://<namespace>`; given this
    transport (a public keyword, `transport=PlainHttpTransport()`) the unmodified client reaches a
    plain-HTTP admin plane such as Microsoft's emulator port 5300. The token it signs still names
    the https address; the admin plane ignores the scheme of a token's audience, as the service does."""

    def send(self, request: Any, **kwargs: Any) -> Any:
        if request.url.startswith("https://"):
            request.url = "http://" + request.url[len("https://") :]
        return super().send(request, **kwargs)


class AsyncPlainHttpTransport(AioHttpTransport):
    """The aio twin of `PlainHttpTransport` (azure-core's aiohttp transport)."""

    async def send(self, request: Any, **kwargs: Any) -> Any:
        if request.url.startswith("https://"):
            request.url = "http://" + request.url[len("https://") :]
        return await super().send(request, **kwargs)
