"""The fake's ARM plane, URL -> handler (moto's `urls.py` with its handlers): each served ARM path
of `Microsoft.ServiceBus/namespaces` names a resource, each resource has one handler per HTTP
method, and a handler works on the world (the models) and answers with a body from
arm_responses.py. ARM's `~` stands for the `/` of entity names.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pairedbus import contract, durations, sdk
from pairedbus.servicebus.entities import Queue, Subscription, Topic
from pairedbus.servicebus.errors import ErrorKind, ServiceError
from pairedbus.servicebus.properties import DURATION_PROPERTIES
from pairedbus.servicebus.world import Namespace, ServiceBusWorld
from pairedbus.testing.arm_responses import (
    PROPERTY_MODELS,
    ArmError,
    arm_identity,
    conflict,
    entity_body,
    entity_not_found,
    error_body,
    keys_body,
    namespace_body,
    namespace_not_found,
    not_allowed,
    not_served,
    page,
)

#: The ARM status of the model's refusals (anything else it refuses is a bad request).
_ARM_STATUS = {ErrorKind.NAMESPACE_QUOTA_EXCEEDED: 403}

_PATH = re.compile(
    r"^/subscriptions/(?P<sub>[^/]+)(?:/resourceGroups/(?P<rg>[^/]+))?/providers/Microsoft\.ServiceBus/namespaces"
    r"(?:/(?P<ns>[^/]+)(?P<rest>/.*)?)?$",
    re.IGNORECASE,
)
#: What lies under a namespace: resource -> its path (after `namespaces/{name}/`).
_ROUTES: dict[str, re.Pattern[str]] = {
    "keys": re.compile(r"authorizationrules/(?P<rule>[^/]+)/listkeys", re.IGNORECASE),
    "queues": re.compile(r"queues", re.IGNORECASE),
    "queue": re.compile(r"queues/(?P<name>[^/]+)", re.IGNORECASE),
    "topics": re.compile(r"topics", re.IGNORECASE),
    "topic": re.compile(r"topics/(?P<name>[^/]+)", re.IGNORECASE),
    "subscriptions": re.compile(r"topics/(?P<topic>[^/]+)/subscriptions", re.IGNORECASE),
    "subscription": re.compile(r"topics/(?P<topic>[^/]+)/subscriptions/(?P<name>[^/]+)", re.IGNORECASE),
}

Answer = tuple[int, Any]


@dataclass
class ArmRequest:
    """One ARM call, parsed: the method, where it points and what it carries."""

    method: str
    subscription_id: str
    resource_group: str | None
    namespace: str | None
    payload: dict[str, Any] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)


class ArmRoutes:
    """ARM's REST surface for the Service Bus resources of one world."""

    def __init__(self, world: ServiceBusWorld) -> None:
        self.world = world
        self.lock = threading.Lock()  # aio clients call from the transport's worker threads
        self._resources: dict[str, Callable[[ArmRequest, Namespace], Answer]] = {
            "keys": self._keys,
            "queues": lambda req, ns: self._entities(req, ns, Queue, "queue"),
            "queue": lambda req, ns: self._entity(req, ns, Queue, "queue"),
            "topics": lambda req, ns: self._entities(req, ns, Topic, "topic"),
            "topic": lambda req, ns: self._entity(req, ns, Topic, "topic"),
            "subscriptions": self._subscriptions,
            "subscription": self._subscription,
        }

    def handle(self, method: str, url: str, body: str | bytes | None) -> Answer:
        """(status, JSON body or None) for one request; every refusal is an ARM error body."""
        parts = urlsplit(url)
        match = _PATH.match(parts.path.rstrip("/"))
        if match is None:
            return 404, error_body(
                "InvalidResourceType", f"The resource type of {parts.path!r} is not served by the fake."
            )
        request = ArmRequest(
            method.upper(),
            match["sub"],
            match["rg"],
            match["ns"],
            json.loads(body) if body else {},
            {k: v[0] for k, v in parse_qs(parts.query).items()},
        )
        with self.lock:
            try:
                return self._route(request, (match["rest"] or "").strip("/"))
            except ArmError as exc:
                return exc.status, error_body(exc.code, exc.message)
            except ServiceError as exc:  # the world's own validation (sizes, durations, names, quotas)
                return _ARM_STATUS.get(exc.kind, 400), error_body("BadRequest", exc.message)
            except (KeyError, ValueError) as exc:
                return 400, error_body("BadRequest", str(exc))

    def _route(self, req: ArmRequest, rest: str) -> Answer:
        if req.namespace is None:
            return self._namespaces(req)
        if req.resource_group is None:
            raise not_served("namespaces are addressed within a resource group")
        if not rest:
            return self._namespace(req)
        ns = self._find_namespace(req.subscription_id, req.resource_group, req.namespace)
        for resource, pattern in _ROUTES.items():
            found = pattern.fullmatch(rest)
            if found is not None:
                req.params = found.groupdict()
                return self._resources[resource](req, ns)
        raise not_served(f"{rest!r} is not served by the fake.")

    # --- namespaces ----------------------------------------------------------------------

    def _in_scope(self, sub: str, rg: str | None) -> list[Namespace]:
        found = []
        for ns in self.world.namespaces.values():
            ns_sub, ns_rg, _ = arm_identity(ns)
            if ns_sub.lower() == sub.lower() and (rg is None or ns_rg.lower() == rg.lower()):
                found.append(ns)
        return found

    def _find_namespace(self, sub: str, rg: str, name: str) -> Namespace:
        for ns in self._in_scope(sub, rg):
            if ns.name.lower() == name.lower():
                return ns
        raise namespace_not_found(name, rg)

    def _namespaces(self, req: ArmRequest) -> Answer:
        if req.method != "GET":
            raise not_allowed(req.method, "namespace list")
        return 200, page(
            [namespace_body(ns) for ns in self._in_scope(req.subscription_id, req.resource_group)], req.query
        )

    def _namespace(self, req: ArmRequest) -> Answer:
        assert req.resource_group is not None and req.namespace is not None
        if req.method == "GET":
            return 200, namespace_body(self._find_namespace(req.subscription_id, req.resource_group, req.namespace))
        if req.method in ("PUT", "PATCH"):
            return 200, namespace_body(self._put_namespace(req))
        if req.method == "DELETE":
            ns = self._find_namespace(req.subscription_id, req.resource_group, req.namespace)
            for entity in list(ns.entities):
                ns.delete(entity)
            del self.world.namespaces[ns.fqdn]
            return 200, None
        raise not_allowed(req.method, "namespace")

    def _put_namespace(self, req: ArmRequest) -> Namespace:
        """Create (PUT) or update (PUT, PATCH) a namespace: its SKU, location and partitions."""
        assert req.resource_group is not None and req.namespace is not None
        try:
            ns: Namespace | None = self._find_namespace(req.subscription_id, req.resource_group, req.namespace)
        except ArmError:
            if req.method == "PATCH":
                raise
            ns = None
        sku = (req.payload.get("sku") or {}).get("name")
        partitions = (req.payload.get("properties") or {}).get("premiumMessagingPartitions")
        if ns is None:
            ns = self._new_namespace(req, sku)
        elif sku:
            ns.sku = sku
        ns.location = req.payload.get("location") or arm_identity(ns)[2]
        if partitions:
            self.world.namespace(ns.fqdn, messaging_partitions=int(partitions))
        return ns

    def _new_namespace(self, req: ArmRequest, sku: str | None) -> Namespace:
        assert req.namespace is not None
        ns = self.world.namespace(contract.service_bus_fqdn(req.namespace), sku=sku or contract.SKU_STANDARD)
        ns.subscription_id, ns.resource_group = req.subscription_id, req.resource_group
        return ns

    def _keys(self, req: ArmRequest, ns: Namespace) -> Answer:
        return 200, keys_body(ns, req.params["rule"])

    # --- queues and topics ---------------------------------------------------------------

    def _entities(self, req: ArmRequest, ns: Namespace, wanted: type[Queue | Topic], kind: str) -> Answer:
        if req.method != "GET":
            raise not_allowed(req.method, f"{kind} list")
        return 200, page([entity_body(ns, e) for e in ns.entities.values() if isinstance(e, wanted)], req.query)

    def _entity(self, req: ArmRequest, ns: Namespace, wanted: type[Queue | Topic], kind: str) -> Answer:
        arm_name = req.params["name"]
        name = contract.entity_name_from_arm(arm_name)
        entity = ns.entities.get(name)
        if req.method == "GET":
            if not isinstance(entity, wanted):
                raise entity_not_found(arm_name)
            return 200, entity_body(ns, entity)
        if req.method == "DELETE":
            if not isinstance(entity, wanted):
                return 204, None  # ARM deletes are idempotent
            ns.delete(name)
            return 200, None
        if req.method == "PUT":
            return 200, entity_body(ns, self._put_entity(ns, kind, arm_name, entity, req.payload))
        raise not_allowed(req.method, kind)

    def _put_entity(
        self, ns: Namespace, kind: str, arm_name: str, entity: Any, payload: dict[str, Any]
    ) -> Queue | Topic:
        """Create a queue or topic, or update its settings (an entity of the other kind: 409)."""
        values = settings_from(kind, payload)
        name = contract.entity_name_from_arm(arm_name)
        if entity is None:
            return ns.create_queue(name, **values) if kind == "queue" else ns.create_topic(name, **values)
        wanted = Queue if kind == "queue" else Topic
        if not isinstance(entity, wanted):
            raise conflict(arm_name)
        entity.settings.update(ns.sized_update(entity, values))
        entity.updated_at = self.world.clock.time()
        if isinstance(entity, Queue):
            entity.settings_changed()
        return entity

    # --- subscriptions -------------------------------------------------------------------

    def _topic(self, ns: Namespace, arm_name: str) -> Topic:
        entity = ns.entities.get(contract.entity_name_from_arm(arm_name))
        if not isinstance(entity, Topic):
            raise entity_not_found(arm_name)
        return entity

    def _subscriptions(self, req: ArmRequest, ns: Namespace) -> Answer:
        topic = self._topic(ns, req.params["topic"])
        return 200, page([entity_body(ns, s) for s in topic.subscriptions.values()], req.query)

    def _subscription(self, req: ArmRequest, ns: Namespace) -> Answer:
        topic = self._topic(ns, req.params["topic"])
        name = req.params["name"]
        sub = topic.subscriptions.get(name)
        if req.method == "GET":
            if sub is None:
                raise entity_not_found(name)
            return 200, entity_body(ns, sub)
        if req.method == "DELETE":
            if sub is None:
                return 204, None
            del topic.subscriptions[name]
            sub.alive = False
            for store in sub.stores():
                store.wake()
            return 200, None
        if req.method == "PUT":
            return 200, entity_body(ns, self._put_subscription(ns, topic, name, sub, req.payload))
        raise not_allowed(req.method, "subscription")

    def _put_subscription(
        self, ns: Namespace, topic: Topic, name: str, sub: Subscription | None, payload: dict[str, Any]
    ) -> Subscription:
        values = settings_from("subscription", payload)
        if sub is None:
            return ns.create_subscription(topic.name, name, **values)
        sub.settings.update(values)
        sub.updated_at = self.world.clock.time()
        sub.settings_changed()
        return sub


def settings_from(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    """An ARM PUT body's properties as the world's settings (SDK attribute names, timedeltas)."""
    by_rest = {rest: attr for attr, rest in sdk.rest_names(PROPERTY_MODELS[kind]).items()}
    values: dict[str, Any] = {}
    for rest, value in (payload.get("properties") or {}).items():
        attr = by_rest.get(rest)
        if attr is None or value is None:
            continue
        values[attr] = durations.duration_timedelta(value) if attr in DURATION_PROPERTIES else value
    return values
