"""Fixtures built the way the engine builds them: ResourceValidationArgs, PolicyResource with
parent and dependencies as objects, StackValidationArgs; props behind the unknown-checking proxy."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from inspect import isawaitable
from typing import Any

from pulumi_policy import (
    Policy,
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    StackValidationArgs,
)
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, unknown_checking_proxy

from pairedbus import contract

PROJECT = "pairedbus"
STACK = "test"
PRIMARY = "contoso-orders"
SECONDARY = "contoso-orders-backlog"
PAIR_TYPE = contract.TYPE_NAMESPACE_PAIR
BACKLOG_COMPONENT_TYPE = contract.TYPE_BACKLOG_QUEUES
UNKNOWN = UNKNOWN_STRING_VALUE
#: What Pulumi puts in a dynamic resource's `__provider` input: the pickled provider.
DYNAMIC_PROVIDER_BLOB = "gASVCAAAAAAAAACMBHRlc3SULg=="


def urn(type_: str, name: str) -> str:
    return f"urn:pulumi:{STACK}::{PROJECT}::{type_}::{name}"


def options(parent: str | None = None) -> PolicyResourceOptions:
    return PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], parent)


def namespace_inputs(
    name: str = PRIMARY,
    location: str = "westeurope",
    *,
    sku: str = contract.SKU_PREMIUM,
    partitions: int | None = 2,
    **overrides: Any,
) -> dict[str, Any]:
    inputs: dict[str, Any] = {
        "namespaceName": name,
        "resourceGroupName": f"rg-{name}",
        "location": location,
        "sku": {"name": sku, "tier": sku, **({"capacity": 2} if sku == contract.SKU_PREMIUM else {})},
        "disableLocalAuth": True,
        "minimumTlsVersion": contract.MINIMUM_TLS_VERSION,
        "publicNetworkAccess": "Enabled",
        "zoneRedundant": True,
        "tags": {},
    }
    if sku == contract.SKU_PREMIUM and partitions is not None:
        inputs["premiumMessagingPartitions"] = partitions
    inputs.update(overrides)
    return inputs


def backlog_inputs(
    index: int, *, primary: str = PRIMARY, secondary: str = SECONDARY, partitioned: bool | None = True, **overrides: Any
) -> dict[str, Any]:
    """The backlog dynamic resource's inputs, Pulumi's `__provider` included."""
    inputs: dict[str, Any] = {
        "__provider": DYNAMIC_PROVIDER_BLOB,
        "namespaceName": secondary,
        "queueName": contract.backlog_queue_name(primary, index),
        **contract.BACKLOG_QUEUE_PROPERTIES,
    }
    if partitioned is not None:
        inputs["enablePartitioning"] = partitioned
    inputs.update(overrides)
    return inputs


def queue_inputs(name: str = "orders", *, namespace: str = PRIMARY, **overrides: Any) -> dict[str, Any]:
    inputs: dict[str, Any] = {
        "namespaceName": namespace,
        "resourceGroupName": f"rg-{namespace}",
        "queueName": name,
        "enablePartitioning": True,
        "maxSizeInMegabytes": 1024,
        "requiresDuplicateDetection": True,
        "duplicateDetectionHistoryTimeWindow": "PT1H",  # maxOutage's default
    }
    inputs.update(overrides)
    return inputs


def topic_inputs(name: str = "events", *, namespace: str = PRIMARY, **overrides: Any) -> dict[str, Any]:
    inputs = queue_inputs(name, namespace=namespace, **overrides)
    inputs["topicName"] = inputs.pop("queueName")
    return inputs


def resource_args(type_: str, name: str, inputs: Mapping[str, Any]) -> ResourceValidationArgs:
    return ResourceValidationArgs(type_, unknown_checking_proxy(dict(inputs)), urn(type_, name), name, options(), None)


class StackBuilder:
    """Adds resources in registration order; `args()` links them like the engine's AnalyzeStack."""

    def __init__(self) -> None:
        self.resources: list[PolicyResource] = []

    def add(
        self,
        type_: str,
        name: str,
        props: Mapping[str, Any],
        *,
        parent: PolicyResource | None = None,
        depends_on: Iterable[PolicyResource] = (),
        property_dependencies: Mapping[str, Iterable[PolicyResource]] | None = None,
    ) -> PolicyResource:
        resource = PolicyResource(
            type_,
            unknown_checking_proxy(dict(props)),
            urn(type_, name),
            name,
            options(parent.urn if parent else None),
            None,
            parent,
            list(depends_on),
            {k: list(v) for k, v in (property_dependencies or {}).items()},
        )
        self.resources.append(resource)
        return resource

    def by_name(self, name: str) -> PolicyResource:
        return next(r for r in self.resources if r.name == name)

    def args(self) -> StackValidationArgs:
        return StackValidationArgs(list(self.resources))


def paired_stack(
    *,
    backlog_count: int = 3,
    primary: Mapping[str, Any] | None = None,
    secondary: Mapping[str, Any] | None = None,
    backlog: Iterable[Mapping[str, Any]] | None = None,
    queues: Iterable[Mapping[str, Any]] = (),
    topics: Iterable[Mapping[str, Any]] = (),
    backlog_type: str = contract.TYPE_BACKLOG_QUEUE,
) -> StackBuilder:
    """A NamespacePair with its two namespaces, the backlog queues as dynamic resources under a
    BacklogQueues component, and the primary's queues and topics."""
    stack = StackBuilder()
    pair = stack.add(PAIR_TYPE, "pair", {})
    p = stack.add(contract.TYPE_NAMESPACE, "primary", primary or namespace_inputs(), parent=pair)
    s = stack.add(
        contract.TYPE_NAMESPACE, "secondary", secondary or namespace_inputs(SECONDARY, "northeurope"), parent=pair
    )
    component = stack.add(BACKLOG_COMPONENT_TYPE, "backlog", {}, depends_on=[s])
    items = list(backlog) if backlog is not None else [backlog_inputs(i) for i in range(backlog_count)]
    for i, inputs in enumerate(items):
        stack.add(backlog_type, f"backlog-{i}", inputs, parent=component, depends_on=[s])
    for inputs in queues:
        stack.add(contract.TYPE_QUEUE, f"queue-{inputs['queueName']}", inputs, depends_on=[p])
    for inputs in topics:
        stack.add(contract.TYPE_TOPIC, f"topic-{inputs['topicName']}", inputs, depends_on=[p])
    return stack


def violations(policy: Policy, args: ResourceValidationArgs | StackValidationArgs) -> list[tuple[str, str | None]]:
    """(message, urn) per violation the policy reports."""
    reported: list[tuple[str, str | None]] = []
    result = policy.validate(args, lambda message, urn=None: reported.append((message, urn)))
    assert not isawaitable(result)
    return reported
