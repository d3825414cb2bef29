"""The destructive gate's create-only inputs of the Service Bus types, fact by fact (issues 22, 36): every input
that can only be set when a resource is created is named here with its resource type, and a change to it, an
addition or a removal must be reported by `compare_plans` as a blocking replacement.

Why each is create-only: the names in an entity's ARM path (namespace, entity, resource group) and a
namespace's location (common-types TrackedResource), and a queue's or topic's partitioning, sessions and
duplicate detection (the provider's forceNewMap) make pulumi-azure-native replace the resource
(`plans/azure_native_replacements.json`); a Premium namespace's partition count and a subscription's sessions
are fixed by the service at creation although the provider's metadata would try an update
(`replacements.SERVICE_CREATE_ONLY`); the backlog queue's provider replaces on its own three.
"""

from __future__ import annotations

from typing import Any

import pytest

from pairedbus.plans.baseline import compare_plans
from pairedbus.plans.model import Plan, PlannedResource

NAMESPACE = "azure-native:servicebus:Namespace"
QUEUE = "azure-native:servicebus:Queue"
TOPIC = "azure-native:servicebus:Topic"
SUBSCRIPTION = "azure-native:servicebus:Subscription"
BACKLOG_QUEUE = "pulumi-python:dynamic/pairedbus:BacklogQueue"
DYNAMIC = "pulumi-python:dynamic:Resource"

#: One resource of each type as a baseline plan holds it, with every create-only input set.
INPUTS: dict[str, dict[str, Any]] = {
    NAMESPACE: {
        "namespaceName": "contoso",
        "resourceGroupName": "rg-messaging",
        "location": "westeurope",
        "premiumMessagingPartitions": 1,
        "minimumTlsVersion": "1.2",
    },
    QUEUE: {
        "namespaceName": "contoso",
        "queueName": "orders",
        "resourceGroupName": "rg-messaging",
        "enablePartitioning": True,
        "requiresSession": False,
        "requiresDuplicateDetection": True,
        "maxDeliveryCount": 10,
    },
    TOPIC: {
        "namespaceName": "contoso",
        "topicName": "events",
        "resourceGroupName": "rg-messaging",
        "enablePartitioning": True,
        "requiresDuplicateDetection": True,
        "requiresSession": False,
        "maxSizeInMegabytes": 1024,
    },
    SUBSCRIPTION: {
        "namespaceName": "contoso",
        "topicName": "events",
        "subscriptionName": "audit",
        "resourceGroupName": "rg-messaging",
        "requiresSession": False,
        "maxDeliveryCount": 10,
    },
    BACKLOG_QUEUE: {"namespaceName": "contoso-dr", "queueName": "contoso-backlog-0", "enablePartitioning": True},
    DYNAMIC: {"namespaceName": "contoso-dr", "queueName": "contoso-backlog-1", "enablePartitioning": True},
}

#: The table: (resource type, create-only input). Literal, so that removing an entry from the
#: module fails exactly one of these tests by name.
CREATE_ONLY = [
    (NAMESPACE, "namespaceName"),
    (NAMESPACE, "resourceGroupName"),
    (NAMESPACE, "location"),
    (NAMESPACE, "premiumMessagingPartitions"),
    (QUEUE, "namespaceName"),
    (QUEUE, "queueName"),
    (QUEUE, "resourceGroupName"),
    (QUEUE, "enablePartitioning"),
    (QUEUE, "requiresSession"),
    (QUEUE, "requiresDuplicateDetection"),
    (TOPIC, "namespaceName"),
    (TOPIC, "topicName"),
    (TOPIC, "resourceGroupName"),
    (TOPIC, "enablePartitioning"),
    (TOPIC, "requiresDuplicateDetection"),
    (TOPIC, "requiresSession"),
    (SUBSCRIPTION, "namespaceName"),
    (SUBSCRIPTION, "topicName"),
    (SUBSCRIPTION, "subscriptionName"),
    (SUBSCRIPTION, "resourceGroupName"),
    (SUBSCRIPTION, "requiresSession"),
    (BACKLOG_QUEUE, "namespaceName"),
    (BACKLOG_QUEUE, "queueName"),
    (BACKLOG_QUEUE, "enablePartitioning"),
    (DYNAMIC, "namespaceName"),
    (DYNAMIC, "queueName"),
    (DYNAMIC, "enablePartitioning"),
]
#: What the service fixes at creation though the provider's metadata would update it in place.
SERVICE_FIXED = {(NAMESPACE, "premiumMessagingPartitions"), (SUBSCRIPTION, "requiresSession")}
#: An input of each type that an update changes in place (never a replacement).
MUTABLE = {
    NAMESPACE: "minimumTlsVersion",
    QUEUE: "maxDeliveryCount",
    TOPIC: "maxSizeInMegabytes",
    SUBSCRIPTION: "maxDeliveryCount",
}


def _resource(type_: str, inputs: dict[str, Any], name: str = "r") -> PlannedResource:
    return PlannedResource(
        urn=f"urn:pulumi:prod::pairedbus::{type_}::{name}", type=type_, name=name, inputs=inputs, custom=True
    )


def _plan(*resources: PlannedResource) -> Plan:
    return Plan("pairedbus", "prod", tuple(resources))


def _other(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value * 2
    return f"{value}-2"


def _label(type_: str, inputs: dict[str, Any]) -> str:
    if "subscriptionName" in inputs:
        return f"{inputs['topicName']}/subscriptions/{inputs['subscriptionName']}"
    return inputs.get("queueName") or inputs.get("topicName") or inputs["namespaceName"]


@pytest.mark.parametrize(("type_", "prop"), CREATE_ONLY, ids=[f"{t.rsplit(':', 1)[-1]}.{p}" for t, p in CREATE_ONLY])
def test_changing_a_create_only_input_is_a_replacement(type_: str, prop: str) -> None:
    before = INPUTS[type_]
    after = {**before, prop: _other(before[prop])}
    [change] = compare_plans(_plan(_resource(type_, before)), _plan(_resource(type_, after)))
    assert change.kind == "replace" and change.blocking
    old, new = before[prop], after[prop]
    if (type_, prop) in SERVICE_FIXED:
        assert change.message == (
            f"{_label(type_, after)} ({type_}): {prop} {old!r} -> {new!r} can only be set at creation; the "
            "provider would try an update, which Service Bus refuses: only a new one (deleting this one and its "
            "messages) takes it"
        )
    else:
        assert change.message == (
            f"{_label(type_, after)} ({type_}) would be replaced: {prop} {old!r} -> {new!r}; "
            "replacing deletes its messages"
        )


@pytest.mark.parametrize(("type_", "prop"), CREATE_ONLY, ids=[f"{t.rsplit(':', 1)[-1]}.{p}" for t, p in CREATE_ONLY])
def test_an_unknown_value_of_a_create_only_input_is_no_evidence_of_a_change(type_: str, prop: str) -> None:
    before = INPUTS[type_]
    after = {**before, prop: None}  # an output of another resource, not known offline
    assert compare_plans(_plan(_resource(type_, before)), _plan(_resource(type_, after))) == []


def test_adding_requires_session_to_an_existing_queue_is_a_replacement() -> None:
    before = {k: v for k, v in INPUTS[QUEUE].items() if k != "requiresSession"}
    after = {**before, "requiresSession": True}
    [change] = compare_plans(_plan(_resource(QUEUE, before)), _plan(_resource(QUEUE, after)))
    assert change.kind == "replace"
    assert (
        "orders (azure-native:servicebus:Queue) would be replaced: requiresSession <absent> -> True" in change.message
    )


def test_removing_a_create_only_input_is_a_replacement() -> None:
    before = INPUTS[TOPIC]
    after = {k: v for k, v in before.items() if k != "requiresDuplicateDetection"}
    [change] = compare_plans(_plan(_resource(TOPIC, before)), _plan(_resource(TOPIC, after)))
    assert change.kind == "replace"
    assert "events (azure-native:servicebus:Topic) would be replaced: requiresDuplicateDetection True -> <absent>" in (
        change.message
    )


def test_a_value_of_another_type_is_a_change_even_when_equal() -> None:
    before = INPUTS[NAMESPACE]
    after = {**before, "premiumMessagingPartitions": 1.0}  # 1 == 1.0, but not what was deployed
    [change] = compare_plans(_plan(_resource(NAMESPACE, before)), _plan(_resource(NAMESPACE, after)))
    assert "premiumMessagingPartitions 1 -> 1.0" in change.message


def test_a_location_spelt_differently_is_the_same_region() -> None:
    before = INPUTS[NAMESPACE]
    after = {**before, "location": "West Europe"}
    assert compare_plans(_plan(_resource(NAMESPACE, before)), _plan(_resource(NAMESPACE, after))) == []


@pytest.mark.parametrize("type_", list(MUTABLE))
def test_an_input_that_updates_in_place_is_not_a_replacement(type_: str) -> None:
    before = INPUTS[type_]
    after = {**before, MUTABLE[type_]: _other(before[MUTABLE[type_]])}
    assert compare_plans(_plan(_resource(type_, before)), _plan(_resource(type_, after))) == []


def test_every_changed_input_of_one_resource_is_reported() -> None:
    before = INPUTS[QUEUE]
    after = {**before, "enablePartitioning": False, "requiresSession": True, "requiresDuplicateDetection": False}
    changes = compare_plans(_plan(_resource(QUEUE, before)), _plan(_resource(QUEUE, after)))
    assert [c.message.split(": ", 1)[1].split(" ")[0] for c in changes] == [
        "enablePartitioning",
        "requiresDuplicateDetection",
        "requiresSession",
    ]


def test_a_new_resource_before_a_changed_one_does_not_end_the_search() -> None:
    queue = _resource(QUEUE, INPUTS[QUEUE], "orders")
    added = _resource(TOPIC, INPUTS[TOPIC], "events")
    changed = _resource(QUEUE, {**INPUTS[QUEUE], "requiresSession": True}, "orders")
    changes = compare_plans(_plan(queue), _plan(added, changed))
    assert [(c.kind, "requiresSession False -> True" in c.message) for c in changes] == [("replace", True)]


def test_an_unchanged_resource_before_a_moved_one_does_not_end_the_search() -> None:
    kept = _resource(TOPIC, INPUTS[TOPIC], "events")
    old = _resource(QUEUE, INPUTS[QUEUE], "orders")
    moved = _resource(QUEUE, INPUTS[QUEUE], "orders-renamed")  # same entity, new URN
    [change] = compare_plans(_plan(kept, old), _plan(kept, moved))
    assert change.kind == "replace"
    assert change.message == (
        f"orders ({QUEUE}) would be replaced: URN {old.urn} -> {moved.urn} "
        "(add an alias to keep the entity and its messages)"
    )


def test_a_moved_entity_before_a_deleted_one_does_not_hide_the_deletion() -> None:
    old = _resource(QUEUE, INPUTS[QUEUE], "orders")
    moved = _resource(QUEUE, INPUTS[QUEUE], "orders-renamed")
    gone = _resource(TOPIC, INPUTS[TOPIC], "events")
    kept = _resource(SUBSCRIPTION, INPUTS[SUBSCRIPTION], "audit")
    changes = compare_plans(_plan(kept, old, gone), _plan(kept, moved))
    assert [c.kind for c in changes] == ["replace", "delete"]
    assert changes[1].message == f"events ({TOPIC}) leaves the program and would be deleted with its messages"
