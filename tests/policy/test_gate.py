from __future__ import annotations

import json

import pytest
from pulumi_policy import PolicyResource

from pairedbus import contract
from pairedbus.errors import UserError
from pairedbus.plans.model import Plan, PlannedResource
from pairedbus.plans.state import read_baseline
from pairedbus.policy.gate import (
    Violation,
    evaluate_plan,
    format_violations,
    has_mandatory,
    load_policy_config,
    policy_resources,
    run_gate,
)

from .fixtures import PRIMARY, SECONDARY, backlog_inputs, namespace_inputs, queue_inputs, urn

PAIR = urn(contract.TYPE_NAMESPACE_PAIR, "pair")
P = urn(contract.TYPE_NAMESPACE, "primary")
S = urn(contract.TYPE_NAMESPACE, "secondary")


def planned_stack(*, queue_overrides=None, primary_overrides=None, secondary_overrides=None) -> Plan:
    resources = [
        PlannedResource(PAIR, contract.TYPE_NAMESPACE_PAIR, "pair", {}, custom=False),
        PlannedResource(
            P, contract.TYPE_NAMESPACE, "primary", namespace_inputs(**(primary_overrides or {})), True, PAIR
        ),
        PlannedResource(
            S,
            contract.TYPE_NAMESPACE,
            "secondary",
            namespace_inputs(SECONDARY, "northeurope", **(secondary_overrides or {})),
            True,
            PAIR,
        ),
    ]
    for i in range(3):
        inputs = {k: v for k, v in backlog_inputs(i).items() if k != "__provider"}  # the render drops it
        resources.append(
            PlannedResource(
                urn(contract.TYPE_BACKLOG_QUEUE, f"backlog-{i}"),
                contract.TYPE_BACKLOG_QUEUE,
                f"backlog-{i}",
                inputs,
                True,
                dependencies=(S,),
                property_dependencies={"namespaceName": (S,)},
            )
        )
    resources.append(
        PlannedResource(
            urn(contract.TYPE_QUEUE, "queue-orders"),
            contract.TYPE_QUEUE,
            "queue-orders",
            queue_inputs(**(queue_overrides or {})),
            True,
            dependencies=(P,),
            property_dependencies={"namespaceName": (P,)},
        )
    )
    return Plan(project="pairedbus", stack="test", resources=tuple(resources))


def test_planned_resources_become_policy_resources_linked_as_objects():
    resources = {r.urn: r for r in policy_resources(planned_stack())}
    backlog = resources[urn(contract.TYPE_BACKLOG_QUEUE, "backlog-0")]
    assert all(isinstance(r, PolicyResource) for r in resources.values())
    assert backlog.dependencies == [resources[S]]
    assert backlog.property_dependencies == {"namespaceName": [resources[S]]}
    assert resources[P].parent is resources[PAIR]
    assert resources[P].opts.parent == PAIR
    assert resources[P].props["namespaceName"] == PRIMARY


def test_a_clean_plan_has_no_violations():
    assert evaluate_plan(planned_stack()) == []


def test_a_non_partitioned_premium_queue_is_a_mandatory_violation_naming_policy_and_queue():
    [violation] = evaluate_plan(planned_stack(queue_overrides={"enablePartitioning": False}))
    assert violation == Violation(
        policy="premium-entities-partitioned",
        enforcement_level="mandatory",
        resource_urn=urn(contract.TYPE_QUEUE, "queue-orders"),
        resource_name="queue-orders",
        message=violation.message,
    )
    assert "orders" in violation.message
    assert has_mandatory([violation])


def test_resource_policies_blame_the_resource_they_validate():
    [violation] = evaluate_plan(planned_stack(primary_overrides={"disableLocalAuth": False}))
    assert (violation.policy, violation.resource_urn) == ("local-auth-disabled", P)


def test_unknown_values_are_not_violations():
    # namespaceName not known offline: the queue is placed through its dependencies instead.
    assert evaluate_plan(planned_stack(queue_overrides={"namespaceName": None})) == []
    [violation] = evaluate_plan(planned_stack(queue_overrides={"namespaceName": None, "enablePartitioning": False}))
    assert violation.policy == "premium-entities-partitioned"


def test_policy_config_can_make_local_auth_advisory_for_the_sas_fallback():
    plan = planned_stack(secondary_overrides={"disableLocalAuth": False})
    [violation] = evaluate_plan(plan, config={"local-auth-disabled": "advisory"})
    assert violation.enforcement_level == "advisory" and not has_mandatory([violation])
    [violation] = evaluate_plan(plan, config={"local-auth-disabled": {"enforcementLevel": "advisory"}})
    assert not violation.mandatory
    assert evaluate_plan(plan, config={"local-auth-disabled": "disabled"}) == []


def test_policy_config_rejects_an_unknown_level():
    with pytest.raises(UserError, match="local-auth-disabled"):
        evaluate_plan(planned_stack(), config={"local-auth-disabled": "sometimes"})


def test_load_policy_config_reads_the_cli_format(tmp_path):
    path = tmp_path / "policy-config.json"
    path.write_text(json.dumps({"local-auth-disabled": "advisory"}))
    assert load_policy_config(path) == {"local-auth-disabled": "advisory"}
    path.write_text("[1]")
    with pytest.raises(UserError, match="policy-config"):
        load_policy_config(path)


def test_format_lists_mandatory_first_as_aligned_columns():
    lines = format_violations(
        [
            Violation("paired-entities-duplicate-detection", "advisory", "u1", "queue-a", "a: advice"),
            Violation("premium-entities-partitioned", "mandatory", "u2", "queue-b", "b: broken"),
            Violation("backlog-queue-set", "mandatory", None, None, "stack-wide"),
        ]
    )
    assert lines[0].split() == ["LEVEL", "POLICY", "RESOURCE", "MESSAGE"]
    assert [line.split()[0] for line in lines[1:]] == ["mandatory", "mandatory", "advisory"]
    assert "(stack)" in lines[1]
    assert len({line.index(line.split()[1]) for line in lines}) == 1  # the policy column is aligned
    assert format_violations([]) == []


def test_gate_result_fails_on_mandatory_violations_only():
    assert run_gate(planned_stack()).exit_code == 0
    result = run_gate(planned_stack(queue_overrides={"enablePartitioning": False}))
    assert result.exit_code == 1
    assert result.lines()[-1] == "policy gate: 1 mandatory, 0 advisory - FAILED"
    no_dedup = planned_stack(queue_overrides={"requiresDuplicateDetection": False})
    assert run_gate(no_dedup).exit_code == 1  # paired entities need duplicate detection
    advisory = run_gate(no_dedup, config={"paired-entities-duplicate-detection": "advisory"})
    assert advisory.exit_code == 0 and advisory.to_json()["passed"] is True
    assert advisory.lines()[-1] == "policy gate: 0 mandatory, 1 advisory - passed"


def test_gate_exempts_an_entity_opted_out_of_pairing_through_the_policy_setting():
    no_dedup = planned_stack(queue_overrides={"requiresDuplicateDetection": False})
    exempt = run_gate(no_dedup, config={"paired-entities-duplicate-detection": {"unpaired": ["ORDERS"]}})
    assert exempt.violations == () and exempt.exit_code == 0


def test_gate_result_blocks_a_replacement_unless_allowed(tmp_path):
    baseline_file = tmp_path / "baseline.json"
    baseline_file.write_text(json.dumps(planned_stack().to_json()))
    baseline = read_baseline(baseline_file)
    # A Standard primary may drop partitioning (no violation), but only by replacing the queue.
    current = planned_stack(
        primary_overrides={"sku": {"name": "Standard", "tier": "Standard"}, "premiumMessagingPartitions": None},
        queue_overrides={"enablePartitioning": False},
    )
    blocked = run_gate(current, baseline=baseline)
    assert blocked.violations == () and len(blocked.replacements) == 1
    assert blocked.exit_code == 1 and blocked.lines()[0].startswith("blocked: orders")
    allowed = run_gate(current, baseline=baseline, allow_replace=True)
    assert allowed.exit_code == 0 and allowed.to_json()["replacements"] == list(blocked.replacements)
