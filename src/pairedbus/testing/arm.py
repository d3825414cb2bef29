"""The ARM plane of the fake: `azure-mgmt-servicebus` served from the same world as the data plane.

Like moto, the fake answers at the HTTP boundary: `mock_servicebus()` swaps
`azure.mgmt.servicebus[.aio].ServiceBusManagementClient` for subclasses of the real clients whose
transport is a `requests` adapter answering ARM's REST paths from the world. So paging, the
long-running-operation poller, model deserialization and error mapping are the real SDK's own,
and an entity created through one plane is seen through the other. Served: namespaces (list,
list by resource group, get, create or update, delete, list keys of a namespace authorization
rule), queues, topics and subscriptions (list, get, create or update, delete), with ARM's `~` for
the `/` of entity names, `countDetails`, and ARM's error bodies (`ResourceNotFound` for a missing
namespace, `NotFound` for a missing entity, `BadRequest` for refused properties), which the SDK
raises as `ResourceNotFoundError` / `HttpResponseError` with `error.code` set.

Resource names come from the generated models (`sdk.rest_names`), not from a list here.
Namespaces carry `subscription_id`, `resource_group` and `location`; ones created through the
data plane get `DEFAULT_SUBSCRIPTION_ID`, `DEFAULT_RESOURCE_GROUP` and `DEFAULT_LOCATION`.
"""

from __future__ import annotations

import io
import json
import re
import threading
import time
from datetime import UTC, datetime, timedelta
from enum import Enum
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests
from azure.core.credentials import AccessToken
from azure.core.exceptions import HttpResponseError
from azure.core.pipeline.transport import AsyncioRequestsTransport, RequestsTransport
from azure.mgmt.servicebus import ServiceBusManagementClient as _RealClient
from azure.mgmt.servicebus import models
from azure.mgmt.servicebus.aio import ServiceBusManagementClient as _RealAsyncClient
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict
from urllib3.response import HTTPResponse

from pairedbus import contract, durations, sdk
from pairedbus.testing.active import active_world
from pairedbus.testing.admin import _sized
from pairedbus.testing.entities import Queue, Subscription, Topic
from pairedbus.testing.world import Namespace, ServiceBusWorld

DEFAULT_SUBSCRIPTION_ID = "00000000-0000-0000-0000-000000000000"
DEFAULT_RESOURCE_GROUP = "pairedbus-fake"
DEFAULT_LOCATION = "westeurope"
PROVIDER = "Microsoft.ServiceBus"
TYPES = {
    "namespace": "Microsoft.ServiceBus/Namespaces",
    "queue": "Microsoft.ServiceBus/Namespaces/Queues",
    "topic": "Microsoft.ServiceBus/Namespaces/Topics",
    "subscription": "Microsoft.ServiceBus/Namespaces/Topics/Subscriptions",
}
_PROPERTY_MODELS = {
    "queue": models.SBQueueProperties,
    "topic": models.SBTopicProperties,
    "subscription": models.SBSubscriptionProperties,
}
_DURATIONS = frozenset(
    {"lock_duration", "default_message_time_to_live", "duplicate_detection_history_time_window", "auto_delete_on_idle"}
)
_PATH = re.compile(
    r"^/subscriptions/(?P<sub>[^/]+)(?:/resourceGroups/(?P<rg>[^/]+))?/providers/Microsoft\.ServiceBus/namespaces"
    r"(?:/(?P<ns>[^/]+)(?P<rest>/.*)?)?$",
    re.IGNORECASE,
)


def _rest_names(model: type) -> dict[str, str]:
    """Python attribute -> ARM JSON name, from the generated model."""
    return sdk.rest_names(model)


class ArmError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat().replace("+00:00", "Z")


def _json_value(value: Any) -> Any:
    if isinstance(value, timedelta):
        return durations.iso_duration(value)
    if isinstance(value, Enum):
        return value.value
    return value


# --- the namespace's ARM identity ----------------------------------------------------------


def arm_identity(ns: Namespace) -> tuple[str, str, str]:
    """(subscription id, resource group, location) of a namespace."""
    return (
        ns.subscription_id or DEFAULT_SUBSCRIPTION_ID,
        ns.resource_group or DEFAULT_RESOURCE_GROUP,
        ns.location or DEFAULT_LOCATION,
    )


def namespace_id(ns: Namespace) -> str:
    sub, rg, _ = arm_identity(ns)
    return f"/subscriptions/{sub}/resourceGroups/{rg}/providers/{PROVIDER}/namespaces/{ns.name}"


# --- serving ---------------------------------------------------------------------------------


class ArmService:
    """ARM's REST surface for the Service Bus resources of one world."""

    def __init__(self, world: ServiceBusWorld) -> None:
        self.world = world
        self.lock = threading.Lock()  # aio clients call from the transport's worker threads

    def handle(self, method: str, url: str, body: bytes | None) -> tuple[int, Any]:
        parts = urlsplit(url)
        match = _PATH.match(parts.path.rstrip("/"))
        if match is None:
            return 404, _error("InvalidResourceType", f"The resource type of {parts.path!r} is not served by the fake.")
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        payload = json.loads(body) if body else {}
        with self.lock:
            try:
                return self._route(method.upper(), match, payload, query)
            except ArmError as exc:
                return exc.status, _error(exc.code, exc.message)
            except HttpResponseError as exc:  # the world's own validation (sizes, durations, names)
                return exc.status_code or 400, _error("BadRequest", exc.message)
            except (KeyError, ValueError) as exc:
                return 400, _error("BadRequest", str(exc))

    def _route(self, method: str, m: re.Match[str], payload: dict[str, Any], query: dict[str, str]) -> tuple[int, Any]:
        sub, rg, name, rest = m["sub"], m["rg"], m["ns"], (m["rest"] or "").strip("/")
        if name is None:
            if method != "GET":
                raise ArmError(405, "MethodNotAllowed", f"{method} is not allowed on a namespace list.")
            return 200, _page([self.namespace_body(ns) for ns in self._namespaces(sub, rg)], query)
        if rg is None:
            raise ArmError(404, "InvalidResourceType", "namespaces are addressed within a resource group")
        segments = rest.split("/") if rest else []
        if not segments:
            return self._namespace_op(method, sub, rg, name, payload)
        ns = self._namespace(sub, rg, name)
        kind = segments[0].lower()
        if kind == "authorizationrules" and len(segments) == 3 and segments[2].lower() == "listkeys":
            return 200, self._keys(ns, segments[1])
        if kind == "queues":
            return self._entity_op(method, ns, "queue", segments[1:], payload, query)
        if kind == "topics":
            if len(segments) >= 3 and segments[2].lower() == "subscriptions":
                topic = self._topic(ns, segments[1])
                return self._subscription_op(method, ns, topic, segments[3:], payload, query)
            return self._entity_op(method, ns, "topic", segments[1:], payload, query)
        raise ArmError(404, "InvalidResourceType", f"{rest!r} is not served by the fake.")

    # --- namespaces ----------------------------------------------------------------------

    def _namespaces(self, sub: str, rg: str | None) -> list[Namespace]:
        found = []
        for ns in self.world.namespaces.values():
            ns_sub, ns_rg, _ = arm_identity(ns)
            if ns_sub.lower() == sub.lower() and (rg is None or ns_rg.lower() == rg.lower()):
                found.append(ns)
        return found

    def _namespace(self, sub: str, rg: str, name: str) -> Namespace:
        for ns in self._namespaces(sub, rg):
            if ns.name.lower() == name.lower():
                return ns
        raise ArmError(
            404,
            "ResourceNotFound",
            f"The Resource '{PROVIDER}/namespaces/{name}' under resource group '{rg}' was not found. "
            "For more details please go to https://aka.ms/ARMResourceNotFoundFix",
        )

    def namespace_body(self, ns: Namespace) -> dict[str, Any]:
        _, _, location = arm_identity(ns)
        properties: dict[str, Any] = {
            "provisioningState": "Succeeded",
            "status": "Active",
            "serviceBusEndpoint": f"https://{ns.fqdn}:443/",
            "metricId": f"{arm_identity(ns)[0]}:{ns.name}",
        }
        if ns.sku == contract.SKU_PREMIUM:
            properties["premiumMessagingPartitions"] = ns.messaging_partitions
        return {
            "id": namespace_id(ns),
            "name": ns.name,
            "type": TYPES["namespace"],
            "location": location,
            "sku": {"name": ns.sku, "tier": ns.sku},
            "properties": properties,
        }

    def _namespace_op(self, method: str, sub: str, rg: str, name: str, payload: dict[str, Any]) -> tuple[int, Any]:
        if method == "GET":
            return 200, self.namespace_body(self._namespace(sub, rg, name))
        if method in ("PUT", "PATCH"):
            try:
                ns = self._namespace(sub, rg, name)
            except ArmError:
                if method == "PATCH":
                    raise
                ns = None
            sku = (payload.get("sku") or {}).get("name")
            partitions = (payload.get("properties") or {}).get("premiumMessagingPartitions")
            if ns is None:
                ns = self.world.namespace(contract.service_bus_fqdn(name), sku=sku or contract.SKU_STANDARD)
                ns.subscription_id, ns.resource_group = sub, rg
            elif sku:
                ns.sku = sku
            ns.location = payload.get("location") or arm_identity(ns)[2]
            if partitions:
                self.world.namespace(ns.fqdn, messaging_partitions=int(partitions))
            return 200, self.namespace_body(ns)
        if method == "DELETE":
            ns = self._namespace(sub, rg, name)
            for entity in list(ns.entities):
                ns.delete(entity)
            del self.world.namespaces[ns.fqdn]
            return 200, None
        raise ArmError(405, "MethodNotAllowed", f"{method} is not allowed on a namespace.")

    def _keys(self, ns: Namespace, rule: str) -> dict[str, Any]:
        key = f"fake-{ns.name}-{rule}-key"
        conn = f"Endpoint=sb://{ns.fqdn}/;SharedAccessKeyName={rule};SharedAccessKey={key}"
        return {
            "keyName": rule,
            "primaryKey": key,
            "secondaryKey": key + "-2",
            "primaryConnectionString": conn,
            "secondaryConnectionString": conn + "-2",
        }

    # --- queues, topics and subscriptions ----------------------------------------------------

    def _topic(self, ns: Namespace, arm_name: str) -> Topic:
        entity = ns.entities.get(contract.entity_name_from_arm(arm_name))
        if not isinstance(entity, Topic):
            raise _not_found(arm_name)
        return entity

    def _entity_op(
        self, method: str, ns: Namespace, kind: str, segments: list[str], payload: dict[str, Any], query: dict[str, str]
    ) -> tuple[int, Any]:
        wanted = Queue if kind == "queue" else Topic
        if not segments:
            if method != "GET":
                raise ArmError(405, "MethodNotAllowed", f"{method} is not allowed on a {kind} list.")
            listed = [e for e in ns.entities.values() if isinstance(e, wanted)]
            return 200, _page([self.entity_body(ns, e) for e in listed], query)
        arm_name = segments[0]
        name = contract.entity_name_from_arm(arm_name)
        entity = ns.entities.get(name)
        if method == "GET":
            if not isinstance(entity, wanted):
                raise _not_found(arm_name)
            return 200, self.entity_body(ns, entity)
        if method == "DELETE":
            if not isinstance(entity, wanted):
                return 204, None  # ARM deletes are idempotent
            ns.delete(name)
            return 200, None
        if method == "PUT":
            values = _settings_from(kind, payload)
            if entity is None:
                create = ns.create_queue if kind == "queue" else ns.create_topic
                entity = create(name, **values)
            elif not isinstance(entity, wanted):
                raise ArmError(409, "Conflict", f"An entity named {arm_name!r} of another type already exists.")
            else:
                entity.settings.update(_sized(entity, values))  # type: ignore[arg-type]
                entity.updated_at = self.world.clock.time()
                if isinstance(entity, Queue):
                    entity.settings_changed()
            return 200, self.entity_body(ns, entity)
        raise ArmError(405, "MethodNotAllowed", f"{method} is not allowed on a {kind}.")

    def _subscription_op(
        self,
        method: str,
        ns: Namespace,
        topic: Topic,
        segments: list[str],
        payload: dict[str, Any],
        query: dict[str, str],
    ) -> tuple[int, Any]:
        if not segments:
            return 200, _page([self.entity_body(ns, s) for s in topic.subscriptions.values()], query)
        name = segments[0]
        sub = topic.subscriptions.get(name)
        if method == "GET":
            if sub is None:
                raise _not_found(name)
            return 200, self.entity_body(ns, sub)
        if method == "DELETE":
            if sub is None:
                return 204, None
            del topic.subscriptions[name]
            sub.alive = False
            for store in sub.stores():
                store.wake()
            return 200, None
        if method == "PUT":
            values = _settings_from("subscription", payload)
            if sub is None:
                sub = ns.create_subscription(topic.name, name, **values)
            else:
                sub.settings.update(values)
                sub.updated_at = self.world.clock.time()
                sub.settings_changed()
            return 200, self.entity_body(ns, sub)
        raise ArmError(405, "MethodNotAllowed", f"{method} is not allowed on a subscription.")

    def entity_body(self, ns: Namespace, entity: Queue | Topic | Subscription) -> dict[str, Any]:
        kind = "queue" if isinstance(entity, Queue) else "topic" if isinstance(entity, Topic) else "subscription"
        names = _rest_names(_PROPERTY_MODELS[kind])
        values = dict(entity.settings.values)
        if kind != "subscription":
            values["max_size_in_megabytes"] = ns.reported_size_in_megabytes(entity)  # type: ignore[arg-type]
        properties = {
            names[k]: _json_value(v) for k, v in values.items() if k in names and v is not None and k != "status"
        }
        properties["status"] = _json_value(values.get("status", "Active"))
        properties["createdAt"] = _iso(entity.created_at)
        properties["updatedAt"] = _iso(entity.updated_at)
        properties["accessedAt"] = _iso(entity.accessed_at)
        if kind == "topic":
            topic: Topic = entity  # type: ignore[assignment]
            properties["subscriptionCount"] = len(topic.subscriptions)
            properties["sizeInBytes"] = topic.size_in_bytes
            properties["countDetails"] = _count_details(0, 0, 0)
        else:
            counts = entity.message_counts()  # type: ignore[union-attr]
            properties["countDetails"] = _count_details(counts["active"], counts["dead_letter"], counts["scheduled"])
            properties["messageCount"] = counts["active"] + counts["dead_letter"] + counts["scheduled"]
            if kind == "queue":
                properties["sizeInBytes"] = entity.size_in_bytes  # type: ignore[union-attr]
        if kind == "subscription":
            sub: Subscription = entity  # type: ignore[assignment]
            base = f"{namespace_id(ns)}/topics/{contract.arm_entity_name(sub.topic.name)}/subscriptions/{sub.name}"
            name = sub.name
        else:
            name = contract.arm_entity_name(entity.name)
            base = f"{namespace_id(ns)}/{kind}s/{name}"
        return {
            "id": base,
            "name": name,
            "type": TYPES[kind],
            "location": arm_identity(ns)[2],
            "properties": properties,
        }


def _count_details(active: int, dead: int, scheduled: int) -> dict[str, int]:
    return {
        "activeMessageCount": active,
        "deadLetterMessageCount": dead,
        "scheduledMessageCount": scheduled,
        "transferMessageCount": 0,
        "transferDeadLetterMessageCount": 0,
    }


def _settings_from(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    """An ARM PUT body's properties as the world's settings (SDK attribute names, timedeltas)."""
    by_rest = {rest: attr for attr, rest in _rest_names(_PROPERTY_MODELS[kind]).items()}
    values: dict[str, Any] = {}
    for rest, value in (payload.get("properties") or {}).items():
        attr = by_rest.get(rest)
        if attr is None or value is None:
            continue
        values[attr] = durations.duration_timedelta(value) if attr in _DURATIONS else value
    return values


def _not_found(arm_name: str) -> ArmError:
    return ArmError(404, "NotFound", f"The requested resource {arm_name} does not exist.")


def _error(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def _page(items: list[dict[str, Any]], query: dict[str, str]) -> dict[str, Any]:
    skip = int(query.get("$skip", 0) or 0)
    top = query.get("$top")
    chosen = items[skip:] if top is None else items[skip : skip + int(top)]
    return {"value": chosen}


# --- the transport -----------------------------------------------------------------------------


class WorldAdapter(BaseAdapter):
    """A `requests` adapter that answers every request from the world: nothing leaves the process."""

    def __init__(self, service: ArmService) -> None:
        super().__init__()
        self.service = service
        self.requests: list[tuple[str, str]] = []  # (method, url) as ARM would see them

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        method, url = request.method or "GET", request.url or ""
        self.requests.append((method, url))
        body = request.body.encode() if isinstance(request.body, str) else request.body
        status, payload = self.service.handle(method, url, body)  # type: ignore[arg-type]
        content = b"" if payload is None else json.dumps(payload).encode()
        headers = {"Content-Type": "application/json; charset=utf-8", "x-ms-request-id": f"fake-{len(self.requests)}"}
        response = requests.Response()
        response.status_code = status
        response.reason = HTTPStatus(status).phrase
        response.raw = HTTPResponse(
            body=io.BytesIO(content), headers=headers, status=status, reason=response.reason, preload_content=False
        )
        response.headers = CaseInsensitiveDict(headers)
        response.url = url
        response.request = request
        response.encoding = "utf-8"
        return response

    def close(self) -> None:
        pass


def _session(world: ServiceBusWorld) -> requests.Session:
    session = requests.Session()
    adapter = WorldAdapter(_service(world))
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return session


def _service(world: ServiceBusWorld) -> ArmService:
    service = getattr(world, "_arm_service", None)
    if service is None:
        service = world._arm_service = ArmService(world)  # type: ignore[attr-defined]
    return service


class _Token:
    """The ARM clients' credential under the fake: a token that never leaves the process."""

    def __init__(self, credential: Any) -> None:
        self.wrapped = credential  # kept for inspection; never asked for a token

    def _token(self) -> AccessToken:
        return AccessToken("fake-arm-token", int(time.time()) + 3600)

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return self._token()

    def close(self) -> None:
        pass


class _AsyncToken(_Token):
    async def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:  # type: ignore[override]
        return self._token()

    async def close(self) -> None:  # type: ignore[override]
        pass


def _world_from(kwargs: dict[str, Any]) -> ServiceBusWorld:
    return kwargs.pop("_world", None) or active_world()


class ServiceBusManagementClient(_RealClient):
    """The real `azure.mgmt.servicebus.ServiceBusManagementClient`, answered by the active world."""

    def __init__(self, credential: Any, subscription_id: str, base_url: str | None = None, **kwargs: Any) -> None:
        world = _world_from(kwargs)
        kwargs["transport"] = RequestsTransport(session=_session(world), session_owner=True)
        super().__init__(_Token(credential), subscription_id, base_url, **kwargs)


class AsyncServiceBusManagementClient(_RealAsyncClient):
    """The real `azure.mgmt.servicebus.aio.ServiceBusManagementClient`, answered by the world
    (requests run on the transport's worker threads; the world is guarded by a lock)."""

    def __init__(self, credential: Any, subscription_id: str, base_url: str | None = None, **kwargs: Any) -> None:
        world = _world_from(kwargs)
        kwargs["transport"] = AsyncioRequestsTransport(session=_session(world), session_owner=True)
        super().__init__(_AsyncToken(credential), subscription_id, base_url, **kwargs)


#: For `patching`: real class -> fake class.
def replacements() -> list[tuple[type, type]]:
    return [(_RealClient, ServiceBusManagementClient), (_RealAsyncClient, AsyncServiceBusManagementClient)]
