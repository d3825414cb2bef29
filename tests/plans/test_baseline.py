from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pairedbus import contract
from pairedbus.iac.render import PulumiProject, render_stack
from pairedbus.plans.baseline import compare_plans, find_replacements
from pairedbus.plans.model import Plan, PlannedResource
from pairedbus.policy.gate import run_gate
from tests.iac.names import program_name

ROOT = Path(__file__).resolve().parents[2]


def _with_inputs(plan: Plan, name: str, **changes) -> Plan:
    resources = tuple(
        dataclasses.replace(r, inputs={**r.inputs, **changes}) if r.name == program_name(name) else r
        for r in plan.resources
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
    assert any(contract.backlog_queue_name("contoso-prod-weu", 3) in line for line in lines)
    assert any("location 'northeurope' -> 'West Europe'" in line for line in lines)
    # As the engine previews it: the replaced namespace's id is unknown until deployed, so what takes it in an
    # input the provider replaces on (a role assignment's or a lock's scope, a diagnostic setting's resourceUri)
    # is replaced too; nothing else is.
    cascaded = [
        line
        for line in lines
        if line.endswith("-> <unknown until deployed>; replacing deletes it and creates a new one")
    ]
    assert len(lines) == 2 + len(cascaded) and len(cascaded) == 6
    assert all("Microsoft.ServiceBus/namespaces/contoso-prod-neu'" in line for line in cascaded)


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
        if r.name == program_name("queue-orders")
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


# --- Destructive changes: deletions, lowered protection, retained backlog queues ------------


def _without(plan: Plan, *names: str) -> Plan:
    return dataclasses.replace(
        plan, resources=tuple(r for r in plan.resources if r.name not in map(program_name, names))
    )


def _unprotected(plan: Plan) -> Plan:
    return dataclasses.replace(plan, resources=tuple(dataclasses.replace(r, protect=False) for r in plan.resources))


def _dev_plan() -> Plan:
    _config, plan = render_stack(PulumiProject.find(ROOT), "dev")
    return Plan.from_json(plan.to_json())


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("queue-orders", "orders"),
        ("topic-events", "events"),
        ("subscription-events-audit", "events/subscriptions/audit"),
        ("secondary", "contoso-dev-neu"),
    ],
)
def test_removing_a_stateful_resource_is_a_blocked_deletion_unless_allowed(name: str, label: str) -> None:
    baseline = _dev_plan()  # dev: nothing protected, so the engine would really delete it
    current = _without(baseline, name)
    [change] = compare_plans(baseline, current)
    assert change.kind == "delete" and change.blocking
    assert change.message.startswith(f"{label} (") and "deleted with its messages" in change.message

    blocked = run_gate(current, baseline=baseline)
    assert blocked.exit_code == 1 and blocked.blocked() == [change]
    assert any(line.startswith(f"blocked: {label}") and "--allow-delete" in line for line in blocked.lines())
    assert "1 deletions - FAILED" in blocked.lines()[-1]
    assert run_gate(current, baseline=baseline, allow_replace=True, allow_unprotect=True).blocked() == [change]
    allowed = run_gate(current, baseline=baseline, allow_delete=True)
    # (without its secondary, the pack fails the plan on its own: backlog queues need one)
    assert allowed.blocked() == [] and "1 deletions (allowed)" in allowed.lines()[-1]
    assert allowed.exit_code == (1 if allowed.violations else 0)


def test_removing_a_protected_queue_is_named_as_a_deletion_the_engine_would_refuse() -> None:
    baseline = _prod_plan()
    [change] = compare_plans(baseline, _without(baseline, "queue-invoices"))
    assert change.kind == "delete" and change.message.startswith("invoices (") and "protected" in change.message


def test_production_true_to_false_names_every_unprotected_resource_unless_allowed() -> None:
    baseline = _prod_plan()
    current = _unprotected(baseline)
    changes = compare_plans(baseline, current)
    assert {c.kind for c in changes} == {"unprotect"}
    protected = [r for r in baseline.resources if r.protect]
    assert len(changes) == len(protected) >= 9  # 2 namespaces, 2 resource groups, 2 queues, 1 topic, 2 subscriptions
    assert any(c.message.startswith("orders (") for c in changes)
    assert any(c.message.startswith("contoso-prod-weu (") for c in changes)
    assert run_gate(current, baseline=baseline).exit_code == 1
    assert run_gate(current, baseline=baseline, allow_delete=True, allow_replace=True).exit_code == 1
    assert run_gate(current, baseline=baseline, allow_unprotect=True).exit_code == 0


def test_lowering_the_backlog_count_is_retained_reported_and_allowed() -> None:
    baseline = _prod_plan()
    current = _without(baseline, *(f"backlog-{i}" for i in range(5, 10)))
    changes = compare_plans(baseline, current)
    assert [c.kind for c in changes] == ["retain"] * 5
    assert contract.backlog_queue_name("contoso-prod-weu", 9) in changes[-1].message
    assert "retained in Azure" in changes[-1].message
    gate = run_gate(current, baseline=baseline)
    assert gate.exit_code == 0
    assert gate.lines()[-1].endswith("5 retained - passed")
    assert sum(line.startswith("retained: ") for line in gate.lines()) == 5


def test_a_renamed_entity_is_a_replacement_not_also_a_deletion() -> None:
    baseline = _prod_plan()
    resources = tuple(
        dataclasses.replace(r, urn=r.urn.replace("queue-orders", "queue-orders-v2"), name="queue-orders-v2")
        if r.name == program_name("queue-orders")
        else r
        for r in baseline.resources
    )
    assert [c.kind for c in compare_plans(baseline, dataclasses.replace(baseline, resources=resources))] == ["replace"]


def test_each_blocked_kind_needs_its_own_flag() -> None:
    baseline = _dev_plan()
    dropped = ("topic-events", "subscription-events-audit", "subscription-events-billing")
    current = _with_inputs(_without(baseline, *dropped), "queue-orders", enablePartitioning=False)
    kinds = sorted(c.kind for c in compare_plans(baseline, current))
    assert kinds == ["delete", "delete", "delete", "replace"]  # the topic, its two subscriptions; orders
    assert run_gate(current, baseline=baseline, allow_replace=True).exit_code == 1
    assert run_gate(current, baseline=baseline, allow_delete=True).exit_code == 1
    both = run_gate(current, baseline=baseline, allow_replace=True, allow_delete=True)
    assert both.exit_code == 0 and both.to_json()["allowed"] == ["delete", "replace"]


# --- Through the command: `pairedbus plan prod --baseline PLAN.json` ---------------------------


@pytest.fixture
def prod_project(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the project and a baseline written by `pairedbus plan prod --json`."""
    import shutil

    from pairedbus.cli import main

    project = tmp_path / "project"
    project.mkdir()
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, project / name)
    shutil.copytree(ROOT / "stacks", project / "stacks")
    baseline = tmp_path / "baseline.json"
    assert main(["plan", "prod", "--project-dir", str(project), "--json", str(baseline)]) == 0
    return project, baseline


def _edit_prod(project: Path, **config: object) -> None:
    import yaml

    path = project / "stacks" / "Pulumi.prod.yaml"
    document = yaml.safe_load(path.read_text())
    document["config"].update({f"pairedbus:{k}": v for k, v in config.items()})
    path.write_text(yaml.safe_dump(document))


def test_plan_command_passes_a_lowered_backlog_count_and_reports_the_retained_queues(prod_project, capsys) -> None:
    from pairedbus.cli import main

    project, baseline = prod_project
    _edit_prod(project, backlogQueueCount=5)
    capsys.readouterr()
    assert main(["plan", "prod", "--project-dir", str(project), "--baseline", str(baseline)]) == 0
    out = capsys.readouterr().out
    assert "retained: contoso-prod-weu/x-servicebus-transfer/9" in out
    assert "5 retained - passed" in out


def test_plan_command_blocks_production_off_unless_allow_unprotect(prod_project, capsys) -> None:
    from pairedbus.cli import main

    project, baseline = prod_project
    _edit_prod(project, production=False)
    capsys.readouterr()
    args = ["plan", "prod", "--project-dir", str(project), "--baseline", str(baseline)]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "blocked: contoso-prod-weu (azure-native:servicebus:Namespace) loses its protection" in out
    assert "--allow-unprotect" in out
    assert main([*args, "--allow-delete", "--allow-replace"]) == 1
    assert main([*args, "--allow-unprotect"]) == 0


# --- What a state cannot show: secrets, and resources the program only read --------------------


@pytest.mark.parametrize("masked", ["baseline", "current"])
def test_a_masked_create_only_input_is_no_evidence_of_a_replacement(masked: str) -> None:
    """A secret shows as the mask `[secret]`: compared as that string it read as "would be replaced"."""
    plan = _dev_plan()
    secret = _with_inputs(plan, "queue-orders", enablePartitioning="[secret]", queueName="[secret]")
    baseline, current = (secret, plan) if masked == "baseline" else (plan, secret)
    assert compare_plans(baseline, current) == []
    nested = _with_inputs(plan, "primary", sku={"name": "[secret]", "tier": "Standard"})
    assert find_replacements(nested, plan) == []


def test_a_read_resource_leaving_the_program_is_a_note_not_a_deletion() -> None:
    """`external: true` (read with `.get`): Pulumi only forgets it; nothing in Azure is deleted."""
    plan = _dev_plan()
    baseline = dataclasses.replace(
        plan,
        resources=tuple(
            dataclasses.replace(r, external=True) if r.name == program_name("queue-orders") else r
            for r in plan.resources
        ),
    )
    [change] = compare_plans(baseline, _without(plan, "queue-orders"))
    assert change.kind == "forget" and not change.blocking
    assert change.message == (
        "orders (azure-native:servicebus:Queue) leaves the program; it was read (external), not created, "
        "so Pulumi forgets it and Azure keeps it"
    )
    gate = run_gate(_without(plan, "queue-orders"), baseline=baseline)
    assert gate.exit_code == 0 and "deleted" not in " ".join(gate.lines())
    assert f"note: {change.message}" in gate.lines()
    assert gate.lines()[-1] == "policy gate: 0 mandatory, 0 advisory, 1 forgotten - passed"
