"""Reading the engine's resources for the policies: unknown values as None, whole numbers as ints, entity and
namespace names, backlog queues by their name, and which namespace is the primary and which the secondary."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from pulumi_policy.proxy import UNKNOWN_NUMBER_VALUE, UNKNOWN_STRING_VALUE, unknown_checking_proxy

from pairedbus.policy.resources import (
    StackView,
    entity_name,
    is_backlog_queue_resource,
    namespace_name,
    settings,
    unproxied,
)

NAMESPACE = "azure-native:servicebus:Namespace"
QUEUE = "azure-native:servicebus:Queue"
TOPIC = "azure-native:servicebus:Topic"
BACKLOG = "pulumi-python:dynamic/pairedbus:BacklogQueue"
DYNAMIC = "pulumi-python:dynamic:Resource"


def test_unproxied_turns_unknowns_into_none_and_whole_doubles_into_ints() -> None:
    # The proxy pulumi-policy hands a policy during a preview: reading an unknown value raises.
    props = unknown_checking_proxy(
        {
            "maxSizeInMegabytes": 81920.0,
            "ratio": 0.5,
            "sku": {"name": "Premium", "capacity": 2.0},
            "tags": None,
            "namespaceName": UNKNOWN_STRING_VALUE,
            "ids": ["a", UNKNOWN_STRING_VALUE, 3.0],
            "capacity": UNKNOWN_NUMBER_VALUE,
        }
    )
    assert unproxied(props) == {
        "maxSizeInMegabytes": 81920,
        "ratio": 0.5,
        "sku": {"name": "Premium", "capacity": 2},
        "tags": None,
        "namespaceName": None,
        "ids": ["a", None, 3],
        "capacity": None,
    }
    assert isinstance(unproxied(props)["maxSizeInMegabytes"], int)
    assert unproxied("text") == "text" and unproxied(b"raw") == b"raw"


def test_settings_leave_out_pulumis_own_inputs() -> None:
    assert settings({"__provider": "secret", "queueName": "orders"}) == {"queueName": "orders"}


def test_entity_name_prefers_the_azure_name_then_the_logical_name() -> None:
    assert entity_name({"queueName": "orders", "name": "x"}, "logical") == "orders"
    assert entity_name({"topicName": "events"}, "logical") == "events"
    assert entity_name({"queueName": "", "name": None}, "logical") == "logical"


def test_namespace_name_from_namespace_name_or_name() -> None:
    assert namespace_name({"namespaceName": "contoso", "name": "x"}) == "contoso"
    assert namespace_name({"name": "contoso"}) == "contoso"
    assert namespace_name({"namespaceName": None}) is None
    assert namespace_name({"name": ""}) is None


def test_a_backlog_queue_is_a_queue_like_resource_named_like_one() -> None:
    assert is_backlog_queue_resource(QUEUE, {"queueName": "contoso/x-servicebus-transfer/0"})
    assert is_backlog_queue_resource(QUEUE, {"name": "contoso/x-servicebus-transfer/12"})  # azure-native's `name`
    assert is_backlog_queue_resource(BACKLOG, {"queueName": "contoso/x-servicebus-transfer/1", "namespaceName": "dr"})
    assert not is_backlog_queue_resource(QUEUE, {"queueName": "orders"})
    assert not is_backlog_queue_resource(QUEUE, {"queueName": "contoso/x-servicebus-transfer/01"})
    assert not is_backlog_queue_resource(TOPIC, {"topicName": "contoso/x-servicebus-transfer/0"})
    # A dynamic resource counts only with both inputs, and never by its `name`.
    assert not is_backlog_queue_resource(DYNAMIC, {"queueName": "contoso/x-servicebus-transfer/0"})
    assert not is_backlog_queue_resource(BACKLOG, {"name": "contoso/x-servicebus-transfer/0", "namespaceName": "dr"})


def resource(urn: str, type_: str, props: dict[str, Any], **links: Any) -> Any:
    return SimpleNamespace(
        urn=urn,
        name=urn.rsplit("::", 1)[-1],
        resource_type=type_,
        props=props,
        dependencies=links.get("dependencies", []),
        property_dependencies=links.get("property_dependencies", {}),
        parent=links.get("parent"),
    )


def test_roles_come_from_the_pairs_tags() -> None:
    a = resource("urn::a", NAMESPACE, {"namespaceName": "contoso", "tags": {"pairedbus-role": "secondary"}})
    b = resource("urn::b", NAMESPACE, {"namespaceName": "contoso-dr", "tags": {"pairedbus-role": "primary"}})
    view = StackView([a, b])
    assert view.roles == {"secondary": a, "primary": b}


def test_without_tags_the_backlog_queues_tell_the_secondary_and_their_prefix_the_primary() -> None:
    primary = resource("urn::ns-one", NAMESPACE, {"namespaceName": "contoso"})
    secondary = resource("urn::ns-two", NAMESPACE, {"namespaceName": "contoso-dr"})
    queue = resource("urn::q0", QUEUE, {"queueName": "contoso/x-servicebus-transfer/0", "namespaceName": "contoso-dr"})
    orders = resource("urn::orders", QUEUE, {"queueName": "orders", "namespaceName": "contoso"})
    view = StackView([primary, secondary, queue, orders])
    assert view.roles == {"secondary": secondary, "primary": primary}
    assert view.backlog_queues == [queue] and view.entities == [orders]
    assert view.backlog_namespace(queue) is secondary


def test_an_unknown_namespace_name_is_found_through_the_dependencies_or_parents() -> None:
    ns = resource("urn::ns", NAMESPACE, {"namespaceName": "contoso"})
    other = resource("urn::other", NAMESPACE, {"namespaceName": "elsewhere"})
    by_input = resource("urn::q1", QUEUE, {"queueName": "a"}, property_dependencies={"namespaceName": [ns]})
    component = SimpleNamespace(urn="urn::c", resource_type="x:y:Entities", dependencies=[ns], parent=None)
    by_parent = resource("urn::q2", QUEUE, {"queueName": "b"}, parent=component)
    ambiguous = resource("urn::q3", QUEUE, {"queueName": "c"}, dependencies=[ns, other])
    view = StackView([ns, other, by_input, by_parent, ambiguous])
    assert view.namespace_of(by_input) is ns
    assert view.namespace_of(by_parent) is ns
    assert view.namespace_of(ambiguous) is None  # two namespaces: not a guess


def test_a_namespace_name_matches_without_case_and_only_once() -> None:
    ns = resource("urn::ns", NAMESPACE, {"namespaceName": "Contoso"})
    queue = resource("urn::q", QUEUE, {"queueName": "orders", "namespaceName": "contoso"})
    view = StackView([ns, queue])
    assert view.namespace_of(queue) is ns
    assert view.namespace_label(ns) == "Contoso" and view.name_of(queue) == "orders"
