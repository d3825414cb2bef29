"""Reading the engine's resources: unknown values, entity names, and which namespace is which.

The engine hands policies proxies that raise `UnknownValueError` on values not known during a
preview (an output of a resource not yet created). The rules want plain mappings, so `plain`
turns proxies into dicts with None for unknowns; `StackView` then finds each entity's namespace by
`namespaceName` or, when that name is unknown, through the resource's dependencies and parents.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from typing import Any

from pulumi_policy import PolicyResource
from pulumi_policy.proxy import UnknownValueError

from pairedbus import contract

ENTITY_NAME_INPUTS = ("queueName", "topicName", "name")


def unproxied(value: Any) -> Any:
    """A proxy (or plain value) as plain dicts/lists; unknown values become None, and whole
    numbers ints again (the engine's wire format carries every number as a double)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str | bytes) or value is None:
        return value
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key in value:
            try:
                out[key] = unproxied(value[key])
            except UnknownValueError:
                out[key] = None
        return out
    if isinstance(value, Sequence):
        items: list[Any] = []
        for i in range(len(value)):
            try:
                items.append(unproxied(value[i]))
            except UnknownValueError:
                items.append(None)
        return items
    return value


def settings(props: Mapping[str, Any]) -> dict[str, Any]:
    """Plain properties without Pulumi's own inputs (`__provider` of a dynamic resource)."""
    return {k: v for k, v in unproxied(props).items() if not k.startswith("__")}


def entity_name(props: Mapping[str, Any], fallback: str) -> str:
    for key in ENTITY_NAME_INPUTS:
        value = props.get(key)
        if isinstance(value, str) and value:
            return value
    return fallback


def namespace_name(props: Mapping[str, Any]) -> str | None:
    value = props.get("namespaceName")
    if value is None:
        value = props.get("name")
    return value if isinstance(value, str) and value else None


def is_backlog_queue_resource(resource_type: str, props: Mapping[str, Any]) -> bool:
    """A queue-like resource (azure-native Queue or a backlog dynamic resource) named
    like a backlog queue (`contract.parse_backlog_queue_name`). A dynamic resource is queue-like only when it carries
    `queueName` and `namespaceName`."""
    if resource_type not in contract.QUEUE_LIKE_TYPES:
        return False
    if resource_type != contract.TYPE_QUEUE and not {"queueName", "namespaceName"} <= props.keys():
        return False
    name = props.get("queueName")
    if not isinstance(name, str):
        name = props.get("name") if resource_type == contract.TYPE_QUEUE else None
    return isinstance(name, str) and contract.is_backlog_queue_name(name)


def _logical_role(name: str) -> str | None:
    lowered = name.lower()
    for role in (contract.ROLE_PRIMARY, contract.ROLE_SECONDARY):
        if lowered == role or lowered.endswith(f"-{role}") or lowered.endswith(f"_{role}"):
            return role
    return None


class StackView:
    """The stack's Service Bus resources, with each entity placed in its namespace."""

    def __init__(self, resources: Iterable[PolicyResource]) -> None:
        self.resources = list(resources)
        self.props: dict[str, dict[str, Any]] = {r.urn: settings(r.props) for r in self.resources}

    def _of_type(self, type_: str) -> list[PolicyResource]:
        return [r for r in self.resources if r.resource_type == type_]

    @cached_property
    def namespaces(self) -> list[PolicyResource]:
        return self._of_type(contract.TYPE_NAMESPACE)

    @cached_property
    def backlog_queues(self) -> list[PolicyResource]:
        return [r for r in self.resources if is_backlog_queue_resource(r.resource_type, self.props[r.urn])]

    @cached_property
    def entities(self) -> list[PolicyResource]:
        """Queues and topics other than backlog queues."""
        backlog = {r.urn for r in self.backlog_queues}
        return [
            r
            for r in self.resources
            if r.resource_type in (contract.TYPE_QUEUE, contract.TYPE_TOPIC) and r.urn not in backlog
        ]

    def name_of(self, resource: PolicyResource) -> str:
        return entity_name(self.props[resource.urn], resource.name)

    def namespace_label(self, namespace: PolicyResource) -> str:
        return namespace_name(self.props[namespace.urn]) or namespace.name

    def _namespaces_among(self, resources: Iterable[PolicyResource]) -> list[PolicyResource]:
        seen: dict[str, PolicyResource] = {}
        for r in resources:
            if r.resource_type == contract.TYPE_NAMESPACE:
                seen.setdefault(r.urn, r)
        return list(seen.values())

    def namespace_of(self, resource: PolicyResource) -> PolicyResource | None:
        """By `namespaceName`; when that is unknown, by the one namespace the `namespaceName`
        input, the resource, or one of its parents depends on (or a parent that is a namespace)."""
        name = self.props[resource.urn].get("namespaceName")
        if isinstance(name, str):
            matches = [
                ns for ns in self.namespaces if (namespace_name(self.props[ns.urn]) or "").lower() == name.lower()
            ]
            return matches[0] if len(matches) == 1 else None
        candidates = self._namespaces_among(resource.property_dependencies.get("namespaceName", ()))
        if len(candidates) == 1:
            return candidates[0]
        node: PolicyResource | None = resource
        while node is not None:
            if node is not resource and node.resource_type == contract.TYPE_NAMESPACE:
                return node
            candidates = self._namespaces_among(node.dependencies)
            if len(candidates) == 1:
                return candidates[0]
            node = node.parent
        return None

    def backlog_namespace(self, queue: PolicyResource) -> PolicyResource | None:
        """A backlog queue's namespace; the secondary when nothing else tells."""
        return self.namespace_of(queue) or self.roles.get(contract.ROLE_SECONDARY)

    @cached_property
    def roles(self) -> dict[str, PolicyResource]:
        """primary/secondary: the NamespacePair tags each namespace with its role and names it after
        it; failing both, the secondary holds the backlog queues and the primary's name is their prefix."""
        roles: dict[str, PolicyResource] = {}

        def assign(role: str, ns: PolicyResource) -> None:
            if role not in roles and all(ns is not other for other in roles.values()):
                roles[role] = ns

        for ns in self.namespaces:
            tags = self.props[ns.urn].get("tags")
            role = tags.get(contract.TAG_ROLE) if isinstance(tags, dict) else None
            if role in (contract.ROLE_PRIMARY, contract.ROLE_SECONDARY):
                assign(role, ns)
        for ns in self.namespaces:
            role = _logical_role(ns.name)
            if role is not None:
                assign(role, ns)
        holders = {holder.urn: holder for q in self.backlog_queues if (holder := self.namespace_of(q)) is not None}
        if len(holders) == 1:
            assign(contract.ROLE_SECONDARY, next(iter(holders.values())))
        prefixes = set()
        for q in self.backlog_queues:
            parsed = contract.parse_backlog_queue_name(self.name_of(q))
            if parsed is not None:
                prefixes.add(parsed[0].lower())
        by_prefix = [ns for ns in self.namespaces if (namespace_name(self.props[ns.urn]) or "").lower() in prefixes]
        if len(by_prefix) == 1:
            assign(contract.ROLE_PRIMARY, by_prefix[0])
        if len(self.namespaces) == 2 and len(roles) == 1:
            ((known_role, known),) = roles.items()
            other = next(ns for ns in self.namespaces if ns is not known)
            assign(contract.ROLE_PRIMARY if known_role == contract.ROLE_SECONDARY else contract.ROLE_SECONDARY, other)
        return roles
