from __future__ import annotations

import dataclasses
from pathlib import Path

from pairedbus import contract
from pairedbus.iac.plan import PulumiProject, render_stack
from pairedbus.iac.plan.baseline import find_replacements
from pairedbus.iac.plan.model import Plan, PlannedResource

ROOT = Path(__file__).resolve().parents[3]


def _with_inputs(plan: Plan, name: str, **changes) -> Plan:
    resources = tuple(
        dataclasses.replace(r, inputs={**r.inputs, **changes}) if r.name == name else r for r in plan.resources
    )
    return dataclasses.replace(plan, resources=resources)


def _prod_plan() -> Plan:
    _config, plan = render_stack(PulumiProject.find(ROOT), "prod")
    # A plan survives its JSON round trip (the --baseline file).
    return Plan.from_json(plan.to_json())


def test_an_unchanged_plan_replaces_nothing():
    plan = _prod_plan()
    assert find_replacements(plan, plan) == []


def test_a_partitioning_flip_is_caught_as_a_replacement():
    baseline = _prod_plan()
    current = _with_inputs(baseline, "queue-orders", enablePartitioning=False)
    [line] = find_replacements(baseline, current)
    assert "orders" in line and "enablePartitioning True -> False" in line and "replaced" in line


def test_sessions_and_duplicate_detection_are_create_only_too():
    baseline = _prod_plan()
    current = _with_inputs(baseline, "queue-invoices", requiresSession=True, requiresDuplicateDetection=False)
    lines = find_replacements(baseline, current)
    assert len(lines) == 2 and all("invoices" in line for line in lines)


def test_a_mutable_change_is_not_a_replacement():
    baseline = _prod_plan()
    current = _with_inputs(baseline, "queue-orders", maxDeliveryCount=20, lockDuration="PT2M")
    assert find_replacements(baseline, current) == []


def test_a_backlog_queue_partitioning_change_and_a_namespace_move_are_caught():
    baseline = _prod_plan()
    current = _with_inputs(baseline, "backlog-3", enablePartitioning=False)
    current = _with_inputs(current, "secondary", location="West Europe")
    lines = find_replacements(baseline, current)
    assert len(lines) == 2
    assert any(contract.backlog_queue_name("contoso-prod-weu", 3) in line for line in lines)
    assert any("location 'northeurope' -> 'West Europe'" in line for line in lines)


def test_a_region_spelled_differently_is_not_a_move():
    baseline = _prod_plan()
    assert find_replacements(baseline, _with_inputs(baseline, "secondary", location="North Europe")) == []


def test_unknown_values_are_not_evidence_of_a_change():
    baseline = _prod_plan()
    assert find_replacements(baseline, _with_inputs(baseline, "queue-orders", namespaceName=None)) == []


def test_a_renamed_resource_for_the_same_entity_is_a_replacement():
    baseline = _prod_plan()
    resources = tuple(
        dataclasses.replace(r, urn=r.urn.replace("queue-orders", "queue-orders-v2"), name="queue-orders-v2")
        if r.name == "queue-orders"
        else r
        for r in baseline.resources
    )
    [line] = find_replacements(baseline, dataclasses.replace(baseline, resources=resources))
    assert "orders" in line and "alias" in line


def test_new_resources_replace_nothing():
    baseline = _prod_plan()
    extra = PlannedResource("urn:x::y", contract.TYPE_QUEUE, "queue-new", {"queueName": "new"}, True)
    current = dataclasses.replace(baseline, resources=(*baseline.resources, extra))
    assert find_replacements(baseline, current) == []
