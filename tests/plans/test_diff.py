"""`plans.diff`: a resource's inputs against the baseline's, property by property, as `pulumi preview --diff`
shows them, and what is no evidence of a change (issue 36, item 1)."""

from __future__ import annotations

from typing import Any

from pairedbus.plans.diff import UNKNOWN, PropertyChange, diff_inputs, operation
from pairedbus.plans.model import SECRET_MASK, PlannedResource

QUEUE = "azure-native:servicebus:Queue"
NAMESPACE = "azure-native:servicebus:Namespace"
GROUP = "azure-native:resources:ResourceGroup"
ROLE = "azure-native:authorization:RoleAssignment"


def _resource(type_: str, inputs: dict[str, Any], **options: Any) -> PlannedResource:
    return PlannedResource(f"urn:pulumi:s::p::{type_}::r", type_, "r", inputs, True, **options)


def _lines(old: PlannedResource, new: PlannedResource, **kwargs: Any) -> list[str]:
    return [c.line() for c in diff_inputs(old, new, **kwargs)]


def test_nested_objects_and_lists_are_diffed_by_path() -> None:
    old = _resource(NAMESPACE, {"tags": {"owner": "a", "pairedbus-role": "x"}, "sku": {"name": "Standard"}})
    new = _resource(
        NAMESPACE, {"tags": {"owner": "b", "cost-centre": "42"}, "sku": {"name": "Standard"}, "ips": ["1.2.3.4"]}
    )
    assert _lines(old, new) == [
        '+ ips: ["1.2.3.4"]',
        '+ tags["cost-centre"]: "42"',
        '~ tags.owner: "a" => "b"',
        '- tags["pairedbus-role"]: "x"',
    ]


def test_list_elements_are_compared_one_by_one() -> None:
    old = _resource(NAMESPACE, {"rules": [{"ip": "1.1.1.1"}, {"ip": "2.2.2.2"}]})
    new = _resource(NAMESPACE, {"rules": [{"ip": "1.1.1.1"}, {"ip": "3.3.3.3"}, {"ip": "4.4.4.4"}]})
    assert _lines(old, new) == ['~ rules[1].ip: "2.2.2.2" => "3.3.3.3"', '+ rules[2]: {"ip": "4.4.4.4"}']


def test_a_create_only_input_forces_a_replacement_as_the_providers_metadata_says() -> None:
    old = _resource(QUEUE, {"queueName": "orders", "requiresSession": False, "maxDeliveryCount": 10})
    new = _resource(QUEUE, {"queueName": "orders", "requiresSession": True, "maxDeliveryCount": 20})
    changes = diff_inputs(old, new)
    assert [c.line() for c in changes] == [
        "~ maxDeliveryCount: 10 => 20",
        "~ requiresSession: false => true (forces replacement)",
    ]
    assert operation(changes) == "replace"
    assert operation(changes[:1]) == "update" and operation(()) == "same"


def test_a_resource_group_in_another_region_is_replaced() -> None:
    """ARM cannot move a resource group (azure-native's forceNewMap: ResourceGroup.location)."""
    old = _resource(GROUP, {"resourceGroupName": "rg", "location": "northeurope"})
    new = _resource(GROUP, {"resourceGroupName": "rg", "location": "swedencentral"})
    [change] = diff_inputs(old, new)
    assert change.replaces and change.line() == '~ location: "northeurope" => "swedencentral" (forces replacement)'


def test_a_location_written_another_way_is_the_same() -> None:
    old = _resource(GROUP, {"location": "westeurope"})
    assert diff_inputs(old, _resource(GROUP, {"location": "West Europe"})) == ()


def test_secrets_and_unknown_values_are_no_evidence_at_any_depth() -> None:
    old = _resource(NAMESPACE, {"key": SECRET_MASK, "sku": {"name": "Premium"}, "id": "a"})
    new = _resource(NAMESPACE, {"key": "plain", "sku": {"name": SECRET_MASK}, "id": None})
    assert diff_inputs(old, new) == ()


def test_a_secret_added_shows_masked() -> None:
    old = _resource(NAMESPACE, {})
    assert _lines(old, _resource(NAMESPACE, {"key": "x", "password": SECRET_MASK})) == ['+ key: "x"']


def test_a_value_the_mocks_derived_is_no_change_while_its_source_stays() -> None:
    """principalId 'syphon-identity-principal' -> 'pairedbus-syphon-identity-principal' was a renamed logical
    name in the mocks, not a change: the engine reads the identity's principal id from its state."""
    old = _resource(ROLE, {"principalId": "syphon-identity-principal", "scope": "/s/x"})
    new = _resource(
        ROLE, {"principalId": "pairedbus-syphon-identity-principal", "scope": "/s/x"}, derived=("principalId",)
    )
    assert diff_inputs(old, new) == ()


def test_a_value_derived_from_a_new_resource_is_unknown_until_deployed() -> None:
    old = _resource(ROLE, {"principalId": "syphon-identity-principal", "scope": "/s/x"})
    new = _resource(ROLE, {"principalId": "made-up", "scope": "/s/x"}, derived=("principalId",))
    [change] = diff_inputs(old, new, renewed=["principalId"])
    assert change == PropertyChange("principalId", "update", "syphon-identity-principal", UNKNOWN, True)
    assert change.line() == '~ principalId: "syphon-identity-principal" => output<string> (forces replacement)'


def test_ignore_changes_hides_the_paths_it_names() -> None:
    old = _resource(NAMESPACE, {"tags": {"a": "1", "b": "2"}, "minimumTlsVersion": "1.2"})
    new = _resource(
        NAMESPACE,
        {"tags": {"a": "9", "b": "9"}, "minimumTlsVersion": "1.0"},
        ignore_changes=("tags.a", "minimumTlsVersion"),
    )
    assert _lines(old, new) == ['~ tags.b: "2" => "9"']


def test_a_value_of_another_type_is_a_change_even_when_equal() -> None:
    assert _lines(_resource(NAMESPACE, {"n": 1}), _resource(NAMESPACE, {"n": 1.0})) == ["~ n: 1 => 1.0"]
