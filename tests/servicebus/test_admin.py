"""The management plane as model operations: the model's own records in and out, its own errors."""

from __future__ import annotations

import pytest

from pairedbus.servicebus.admin import AdminOperations
from pairedbus.servicebus.errors import ErrorKind, ServiceError
from pairedbus.servicebus.filters import (
    DEFAULT_RULE_NAME,
    CorrelationFilter,
    FalseFilter,
    Rule,
    SqlAction,
    SqlFilter,
    TrueFilter,
)
from pairedbus.servicebus.properties import EntityType
from pairedbus.servicebus.world import ServiceBusWorld

FQDN = "ns.servicebus.windows.net"


@pytest.fixture
def ops() -> AdminOperations:
    world = ServiceBusWorld()
    world.namespace(FQDN)
    return AdminOperations(world, FQDN)


def refused(call: object, kind: ErrorKind) -> None:
    assert callable(call)
    with pytest.raises(ServiceError) as error:
        call()
    assert error.value.kind is kind


def test_entities_are_the_models_property_records(ops: AdminOperations) -> None:
    created = ops.create_queue("orders", {"max_delivery_count": 3, "size_in_bytes": 99, "unknown": 1})
    assert (created.kind, created.name, created.values["max_delivery_count"]) == (EntityType.QUEUE, "orders", 3)
    ops.update_queue("orders", {"max_delivery_count": 5})
    assert ops.get_queue("orders").values["max_delivery_count"] == 5
    assert [q.name for q in ops.list_queues()] == ["orders"]
    runtime = ops.get_queue_runtime_properties("orders")
    assert (runtime.name, runtime.total_message_count, runtime.size_in_bytes) == ("orders", 0, 0)


def test_missing_and_taken_names_are_the_management_planes_kinds(ops: AdminOperations) -> None:
    ops.create_topic("events", {})
    refused(lambda: ops.get_queue("nope"), ErrorKind.RESOURCE_NOT_FOUND)
    refused(lambda: ops.get_topic("nope"), ErrorKind.RESOURCE_NOT_FOUND)
    refused(lambda: ops.get_subscription("events", "nope"), ErrorKind.RESOURCE_NOT_FOUND)
    refused(lambda: ops.create_queue("events", {}), ErrorKind.RESOURCE_EXISTS)
    ops.create_subscription("events", "all", {})
    refused(lambda: ops.create_subscription("events", "all", {}), ErrorKind.RESOURCE_EXISTS)
    refused(lambda: ops.get_rule("events", "all", "nope"), ErrorKind.RESOURCE_NOT_FOUND)
    refused(lambda: ops.delete_rule("events", "all", "nope"), ErrorKind.RESOURCE_NOT_FOUND)


def test_rules_are_the_models_rule_records(ops: AdminOperations) -> None:
    ops.create_topic("events", {})
    ops.create_subscription("events", "billing", {})
    big = ops.create_rule("events", "billing", "big", SqlFilter("amount > @min", {"@min": 100}), SqlAction("SET t = 1"))
    assert big == Rule("big", SqlFilter("amount > @min", {"@min": 100}), SqlAction("SET t = 1"), big.created_at)
    ops.create_rule("events", "billing", "eu", CorrelationFilter(subject="eu"), None)
    ops.create_rule("events", "billing", "never", FalseFilter(), None)
    assert [r.name for r in ops.list_rules("events", "billing")] == [DEFAULT_RULE_NAME, "big", "eu", "never"]
    updated = ops.update_rule("events", "billing", "big", SqlFilter("amount > 500"), None)
    assert ops.get_rule("events", "billing", "big") == updated
    runtime = ops.get_topic_runtime_properties("events")
    # $Default (true), big and never (false) are SQL filters to the service; eu a correlation filter
    assert (runtime.sql_filter_count, runtime.correlation_filter_count, runtime.subscription_count) == (3, 1, 1)


def test_a_malformed_rule_is_a_bad_request_and_changes_nothing(ops: AdminOperations) -> None:
    ops.create_topic("events", {})
    ops.create_subscription("events", "billing", {})
    refused(lambda: ops.create_rule("events", "billing", "b", SqlFilter("amount >"), None), ErrorKind.BAD_REQUEST)
    refused(
        lambda: ops.update_rule("events", "billing", DEFAULT_RULE_NAME, TrueFilter(), SqlAction("SET")),
        ErrorKind.BAD_REQUEST,
    )
    broken = Rule("first", SqlFilter("= 1"))
    refused(lambda: ops.create_subscription("events", "eu", {}, default_rule=broken), ErrorKind.BAD_REQUEST)
    assert [s.name for s in ops.list_subscriptions("events")] == ["billing"]
    assert ops.list_rules("events", "billing") == [Rule(DEFAULT_RULE_NAME)]


def test_a_subscription_created_with_a_default_rule_has_only_that_rule(ops: AdminOperations) -> None:
    ops.create_topic("events", {})
    ops.create_subscription("events", "eu", {}, default_rule=Rule("eu-only", CorrelationFilter(to="eu")))
    assert ops.list_rules("events", "eu") == [Rule("eu-only", CorrelationFilter(to="eu"))]


def test_namespace_properties(ops: AdminOperations) -> None:
    properties = ops.get_namespace_properties()
    assert (properties.name, properties.messaging_units) == ("ns", None)
