"""`pairedbus plan STACK --baseline STATE.json`: the gate against what is deployed (`pulumi stack export`)."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from pairedbus import contract
from pairedbus.cli import main
from pairedbus.iac.render import PulumiProject, render_stack
from pairedbus.plans.baseline import compare_plans
from pairedbus.plans.model import Plan, PlannedResource
from pairedbus.plans.operations import judge, operations
from pairedbus.plans.state import read_baseline
from pairedbus.plans.urns import engine_plan
from pairedbus.policy.gate import run_gate
from tests.iac.render.state_export import deployment_from_plan

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "iac" / "fixtures"
STATE = FIXTURES / "state"
STACKS = ("dev", "staging", "prod")


def _state(stack: str) -> dict[str, Any]:
    return json.loads((STATE / f"{stack}.json").read_text())


def _current(stack: str) -> dict[str, Any]:
    return json.loads((FIXTURES / "plans" / f"current-{stack}.json").read_text())


def _deployed(stack: str) -> Plan:
    return read_baseline(STATE / f"{stack}.json")


def _write(tmp_path: Path, document: Any, name: str = "state.json") -> Path:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


# --- The fixtures follow Pulumi's published format -------------------------------------------


@pytest.mark.parametrize("stack", STACKS)
def test_each_state_fixture_is_valid_against_pulumis_deployment_schema(stack: str) -> None:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    schemas = {
        name: json.loads((STATE / "schema" / name).read_text())
        for name in ("deployments.json", "resources.json", "property-values.json")
    }
    # resources.json lags core.go's ResourceV3, which also writes these (see the fixtures' README).
    schemas["resources.json"]["$defs"]["resourceV3"]["properties"].update(
        retainOnDelete={"type": "boolean"},
        created={"type": "string", "format": "date-time"},
        modified={"type": "string", "format": "date-time"},
    )
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas.values())
    validator = Draft202012Validator(schemas["deployments.json"], registry=registry)
    errors = sorted(validator.iter_errors(_state(stack)), key=str)
    assert errors == []
    # ...and the validator does reject what the schema forbids (a string where a boolean belongs).
    broken = _state(stack)
    broken["deployment"]["resources"][3]["protect"] = "false"
    assert list(validator.iter_errors(broken))


@pytest.mark.parametrize("stack", STACKS)
def test_a_plan_converts_to_a_state_export_and_back(stack: str) -> None:
    plan = Plan.from_json(_current(stack))
    back = read_baseline_from(deployment_from_plan(_current(stack)))
    assert (back.project, back.stack, back.outputs) == (plan.project, plan.stack, plan.outputs)
    # The engine adds a provider reference to each custom resource (the render's registrations name none);
    # a state keeps no alias specs of the registration (azure-native's versioned type aliases), only URNs.
    assert all(r.provider and "::pulumi:providers:" in r.provider for r in back.resources if r.custom)
    assert {r.aliases for r in back.resources} == {0} and max(r.aliases for r in plan.resources) > 0

    # Nor does it know which inputs the render's mocks made up (`derived`): those are real values in a state.
    def registrations(p: Plan) -> list[PlannedResource]:
        return sorted(
            (dataclasses.replace(r, provider=None, aliases=0, derived=()) for r in p.resources), key=lambda r: r.urn
        )

    assert registrations(back) == registrations(plan)


@pytest.mark.parametrize("stack", STACKS)
def test_each_state_fixture_reads_back_as_the_plan_it_was_deployed_from(stack: str) -> None:
    # The fixtures are the stacks as deployed from the plans of 6fef7c5 (then current-<stack>.json); they stay
    # so when the program changes, because they are what existing stacks hold.
    deployed = _deployed(stack)
    assert (deployed.project, deployed.stack) == ("pairedbus", stack)
    assert len(deployed.resources) == len(_state(stack)["deployment"]["resources"]) - 3  # stack, 2 default providers
    assert all(
        r.urn.startswith(f"urn:pulumi:{stack}::pairedbus::pairedbus:index:PairedNamespace") for r in deployed.resources
    )


def read_baseline_from(document: dict[str, Any]) -> Plan:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        return read_baseline(_write(Path(folder), document))


# --- The gate on each deployed stack -----------------------------------------------------------


@pytest.fixture(scope="module", params=STACKS)
def rendered(request: pytest.FixtureRequest) -> tuple[str, Plan]:
    _config, plan = render_stack(PulumiProject.find(REPO), request.param)
    return request.param, plan


def test_todays_render_against_its_deployed_state_is_no_change(rendered) -> None:
    stack, plan = rendered
    deployed = _deployed(stack)
    assert compare_plans(deployed, plan) == []
    ops, deleted = operations(deployed, engine_plan(plan))
    assert deleted == () and set(ops.values()) <= {"same", "update"}
    # One real change only: the secondary's new backlog-count tag. Inputs built from other resources' computed
    # outputs (the syphon identity's principal id, the environment's and workspace's ARM ids), which the mocks
    # make up from the Pulumi names the rename changed, are no change: the engine reads them from the state
    # (4 of the 5 updates `plan dev --baseline` listed before issue 36).
    judged = judge(deployed, engine_plan(plan))
    updated = {urn.rpartition("::")[2]: judged.changes[urn] for urn, op in judged.by_urn.items() if op == "update"}
    assert list(updated) == ["pairedbus-pair-secondary"]
    assert [c.line() for c in updated["pairedbus-pair-secondary"]] == [
        f'+ tags["pairedbus-backlog-queue-count"]: "{len(plan.of_type(contract.TYPE_BACKLOG_QUEUE))}"'
    ]


def _without(plan: Plan, *names: str) -> Plan:
    return dataclasses.replace(plan, resources=tuple(r for r in plan.resources if r.name not in names))


@pytest.mark.parametrize("stack", STACKS)
def test_the_gate_on_the_deployed_state_stops_a_queue_deletion(stack: str) -> None:
    deployed = _deployed(stack)
    gate = run_gate(_without(deployed, "queue-orders"), baseline=deployed)
    [blocked] = gate.blocked()
    assert blocked.kind == "delete" and blocked.message.startswith("orders (azure-native:servicebus:Queue) leaves")
    assert gate.exit_code == 1
    assert run_gate(_without(deployed, "queue-orders"), baseline=deployed, allow_delete=True).blocked() == []


@pytest.mark.parametrize("stack", STACKS)
def test_the_gate_on_the_deployed_state_stops_a_subscription_deletion(stack: str) -> None:
    deployed = _deployed(stack)
    gate = run_gate(_without(deployed, "subscription-events-audit"), baseline=deployed)
    [blocked] = gate.blocked()
    assert blocked.kind == "delete" and blocked.message.startswith("events/subscriptions/audit (")
    assert gate.exit_code == 1


@pytest.mark.parametrize("stack", STACKS)
def test_the_gate_on_the_deployed_state_stops_a_loss_of_protection(stack: str, tmp_path: Path) -> None:
    # Protected by hand (`pulumi state protect`): the program no longer says so, the state does.
    document = _state(stack)
    queue = next(r for r in document["deployment"]["resources"] if r["urn"].endswith("::queue-invoices"))
    queue["protect"] = True
    deployed = read_baseline(_write(tmp_path, document))
    current = _deployed(stack)  # the program as deployed, except that it leaves the queue unprotected
    current = dataclasses.replace(
        current,
        resources=tuple(
            dataclasses.replace(r, protect=False) if r.name == "queue-invoices" else r for r in current.resources
        ),
    )
    gate = run_gate(current, baseline=deployed)
    [blocked] = gate.blocked()
    assert blocked.kind == "unprotect" and blocked.message.startswith("invoices (") and gate.exit_code == 1
    assert run_gate(current, baseline=deployed, allow_unprotect=True).exit_code == 0


def test_production_off_against_deployed_prod_loses_every_protection() -> None:
    deployed = _deployed("prod")
    current = dataclasses.replace(
        deployed, resources=tuple(dataclasses.replace(r, protect=False) for r in deployed.resources)
    )
    changes = compare_plans(deployed, current)
    assert {c.kind for c in changes} == {"unprotect"} and len(changes) == 22  # 20, and the two locks
    assert run_gate(current, baseline=deployed).exit_code == 1


@pytest.mark.parametrize("stack", STACKS)
def test_the_gate_on_the_deployed_state_passes_a_lowered_backlog_count(stack: str) -> None:
    deployed = _deployed(stack)
    gate = run_gate(_without(deployed, *(f"backlog-{i}" for i in range(4, 10))), baseline=deployed)
    assert [c.kind for c in gate.changes] == ["retain"] * 6 and gate.exit_code == 0
    assert gate.lines()[-1].endswith("6 retained - passed")


# --- Renames an alias covers ----------------------------------------------------------------


def _renamed(plan: Plan, renames: dict[str, str], *, alias: bool = True) -> Plan:
    """The plan with resources renamed (their children's URNs follow), each with an alias to its old name."""
    resources = tuple(
        dataclasses.replace(r, name=renames[r.name], alias_specs=({"name": r.name},) if alias else ())
        if r.name in renames
        else r
        for r in plan.resources
    )
    return engine_plan(dataclasses.replace(plan, resources=resources))


@pytest.mark.parametrize("stack", STACKS)
def test_children_renamed_from_the_component_name_with_aliases_are_no_change(stack: str) -> None:
    deployed = _deployed(stack)
    renames = {"pair": "pairedbus-pair", "primary": "pairedbus-primary", "secondary": "pairedbus-secondary"}
    renames |= {f"backlog-{i}": f"pairedbus-backlog-{i}" for i in range(10)}
    renames |= {"queue-orders": "pairedbus-queue-orders", "subscription-events-audit": "pairedbus-events-audit"}
    current = _renamed(deployed, renames)
    assert {r.urn for r in current.resources} != {r.urn for r in deployed.resources}
    assert compare_plans(deployed, current) == []
    ops, deleted = operations(deployed, current)
    assert set(ops.values()) == {"same"} and deleted == ()
    # Without the aliases the same renames delete and re-create: blocked.
    gate = run_gate(_renamed(deployed, renames, alias=False), baseline=deployed)
    assert gate.exit_code == 1 and {c.kind for c in gate.blocked()} == {"replace"}


def test_a_renamed_component_passes_its_alias_to_every_child_as_the_engine_does() -> None:
    deployed = _deployed("prod")
    # Only the top component carries an alias; its children inherit one (step_generator.go inheritedChildAlias).
    current = _renamed(deployed, {"pairedbus": "orders"})
    assert all("PairedNamespace::orders" in r.urn or r.name == "orders" for r in current.resources if r.parent is None)
    assert compare_plans(deployed, current) == []
    assert set(operations(deployed, current)[0].values()) == {"same"}


def test_an_alias_claims_an_old_resource_only_once() -> None:
    deployed = _deployed("dev")
    orders = next(r for r in deployed.resources if r.name == "queue-orders")
    twin = dataclasses.replace(
        orders, urn=orders.urn + "-twin", name="queue-orders-twin", alias_specs=({"name": "queue-orders"},)
    )
    current = dataclasses.replace(deployed, resources=(*deployed.resources, twin))
    ops, deleted = operations(deployed, current)
    assert ops[orders.urn] == "same" and ops[twin.urn] == "create" and deleted == ()


# --- Through the command ----------------------------------------------------------------------


def _plan(*args: str) -> list[str]:
    return ["plan", *args, "--project-dir", str(REPO)]


@pytest.mark.parametrize("stack", STACKS)
def test_plan_command_against_each_deployed_stack_passes(stack: str, capsys) -> None:
    assert main(_plan(stack, "--baseline", str(STATE / f"{stack}.json"))) == 0
    out = capsys.readouterr().out
    assert "to same" in out and "to delete" not in out and "to create" not in out


def test_plan_command_prints_the_one_real_change_with_its_diff(capsys) -> None:
    assert main(_plan("dev", "--baseline", str(STATE / "dev.json"))) == 0
    out = capsys.readouterr().out
    assert '~ Namespace contoso-dev-neu (update)\n    + tags["pairedbus-backlog-queue-count"]: "10"\n' in out
    assert "; 1 to update, 31 to same" in out.replace("\n", " ").replace("  ", " ")


def test_a_resource_group_moved_to_another_region_is_a_blocked_replacement(tmp_path: Path, capsys) -> None:
    """ARM cannot move a resource group: the engine replaces it, and deleting it deletes everything in it."""
    document = _state("dev")
    group = next(r for r in document["deployment"]["resources"] if r["type"] == "azure-native:resources:ResourceGroup")
    deployed_in = group["inputs"]["location"]
    group["inputs"]["location"] = group["outputs"]["location"] = "swedencentral"
    assert main(_plan("dev", "--baseline", str(_write(tmp_path, document)))) == 1
    out = capsys.readouterr().out
    name = group["inputs"]["resourceGroupName"]
    assert (
        f'+- ResourceGroup {name} (replace)\n    ~ location: "swedencentral" => "{deployed_in}" (forces replacement)'
        in out
    )
    assert (
        "(azure-native:resources:ResourceGroup) would be replaced: location "
        f"'swedencentral' -> '{deployed_in}'; ARM cannot change it in place; replacing a resource group deletes every "
        "resource in it (pass --allow-replace to accept)"
    ) in out


def test_plan_command_stops_a_queue_deleted_from_the_deployed_state(tmp_path: Path, capsys) -> None:
    document = _state("dev")
    extra = copy.deepcopy(next(r for r in document["deployment"]["resources"] if r["urn"].endswith("::queue-invoices")))
    extra["urn"] = extra["urn"].replace("::queue-invoices", "::queue-legacy")
    extra["inputs"]["queueName"] = "legacy"
    document["deployment"]["resources"].append(extra)  # deployed, no longer in the program
    assert main(_plan("dev", "--baseline", str(_write(tmp_path, document)))) == 1
    out = capsys.readouterr().out
    assert "blocked: legacy (azure-native:servicebus:Queue) leaves the program and would be deleted" in out
    assert "-  Queue legacy" in out


# --- Hostile baselines: exit 2, one line naming --baseline, before any render --------------------


def _state_with(edit) -> dict[str, Any]:
    document = _state("dev")
    edit(document["deployment"]["resources"])
    return document


def _queue(resources: list[dict[str, Any]]) -> dict[str, Any]:
    return next(r for r in resources if r["urn"].endswith("::queue-orders"))


HOSTILE: dict[str, tuple[Any, str]] = {
    "inputs as a list": (
        _state_with(lambda rs: _queue(rs).update(inputs=[1, 2])),
        "inputs: expected an object, got a list",
    ),
    "200,000 nested brackets": ("[" * 200_000 + "]" * 200_000, "nested deeper than 64 levels"),
    "deep but parseable inputs": (
        _state_with(lambda rs: _queue(rs)["inputs"].update(deep=json.loads("[" * 500 + "]" * 500))),
        "nested deeper than 64 levels",
    ),
    "protect as a string": (
        _state_with(lambda rs: _queue(rs).update(protect="false")),
        "protect: expected true or false, got the string 'false'",
    ),
    "urn a number": (_state_with(lambda rs: _queue(rs).update(urn=123)), ".urn: expected a Pulumi URN"),
    "type not the urn's": (
        _state_with(lambda rs: _queue(rs).update(type="azure-native:servicebus:Topic")),
        "is not the type its URN names",
    ),
    "dependencies not urns": (
        _state_with(lambda rs: _queue(rs).update(dependencies=["x"])),
        "dependencies[0]: expected a Pulumi URN",
    ),
    "version 4": (
        {"version": 4, "features": ["refreshBeforeUpdate"], "deployment": {}},
        "deployment of version 4 (features: refreshBeforeUpdate) is not read",
    ),
    "version 2": ({"version": 2, "deployment": {}}, "deployment of version 2 is not read; only version 3"),
    "version a string": (
        {"version": "3", "deployment": {}},
        "version: expected the deployment version 3, got the string '3'",
    ),
    "no manifest": (
        {"version": 3, "deployment": {"resources": []}},
        "deployment.manifest: expected an object, got null",
    ),
    "resources an object": (
        {"version": 3, "deployment": {"manifest": {}, "resources": {}}},
        "deployment.resources: expected a list",
    ),
    "not json": ("{nope", "not JSON"),
    "a json array": ("[]", "the document: expected a JSON object, got a list"),
    "neither format": (
        {"hello": 1},
        "expected a plan written by `pairedbus plan --json` or a state written by `pulumi stack export`",
    ),
    "mixed stacks": (
        _state_with(
            lambda rs: _queue(rs).update(urn=_queue(rs)["urn"].replace("urn:pulumi:dev::", "urn:pulumi:prod::"))
        ),
        "stack pairedbus/prod differs from the rest (pairedbus/dev)",
    ),
    "another stack": (_state("prod"), "is of stack pairedbus/prod, not pairedbus/dev (pass --baseline-any-stack"),
    "another project": (
        json.loads(json.dumps(_state("dev")).replace("::pairedbus::", "::billing::")),
        "is of stack billing/dev, not pairedbus/dev",
    ),
    "a plan with protect as a string": (
        {**_current("dev"), "resources": [{**_current("dev")["resources"][0], "protect": "false"}]},
        "resources[0].protect: expected true or false, got the string 'false'",
    ),
    "a plan with inputs as a list": (
        {**_current("dev"), "resources": [{**_current("dev")["resources"][0], "inputs": []}]},
        "resources[0].inputs: expected an object, got a list",
    ),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_baseline_is_refused_in_one_line_with_exit_2(case: str, tmp_path: Path, capsys) -> None:
    document, expected = HOSTILE[case]
    path = _write(tmp_path, document)
    assert main(_plan("dev", "--baseline", str(path))) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # refused before any render
    assert captured.err.count("\n") == 1 and captured.err.startswith(f"pairedbus: error: --baseline {path}: ")
    assert expected in captured.err
    assert len(captured.err) < 400


def test_another_stacks_baseline_is_compared_with_baseline_any_stack(capsys) -> None:
    # staging's state against dev: different names everywhere, so the gate blocks the "deletions".
    assert main(_plan("dev", "--baseline", str(STATE / "staging.json"), "--baseline-any-stack")) == 1
    assert "deletions" in capsys.readouterr().out


def test_five_thousand_deleted_queues_print_twenty_lines_and_counts(tmp_path: Path, capsys) -> None:
    document = _state("dev")
    template = _queue(document["deployment"]["resources"])
    for i in range(5000):
        extra = copy.deepcopy(template)
        extra["urn"] = template["urn"].replace("::queue-orders", f"::queue-old-{i}")
        extra["inputs"]["queueName"] = f"old-{i}"
        document["deployment"]["resources"].append(extra)
    assert main(_plan("dev", "--baseline", str(_write(tmp_path, document)))) == 1
    out = capsys.readouterr().out
    assert sum(line.startswith("blocked: ") for line in out.splitlines()) == 20
    assert "... and 4980 more\n" in out and "... and 4980 more resources of the baseline to delete" in out
    assert "5000 deletions - FAILED" in out
    assert len(out) < 20_000  # was 1.4 MB


# --- Aliases as the program registers them, against the URNs existing stacks hold -----------------


def _render_with_alias_specs(stack: str) -> Plan:
    """The stack's render with each registration's alias specs recorded (`alias_spec_json`)."""
    from pairedbus.iac.render.mocks import PlanMocks
    from pairedbus.iac.render.program import RecordingMonitor, _render, _without_dead_work
    from pairedbus.plans.urns import alias_spec_json

    class SpecRecordingMonitor(RecordingMonitor):
        def __init__(self) -> None:
            super().__init__(PlanMocks())
            self.specs: dict[str, tuple[dict[str, Any], ...]] = {}

        def RegisterResource(self, request: Any) -> Any:
            urn = self.make_urn(request.parent, request.type, request.name)
            self.specs[urn] = tuple(alias_spec_json(a) for a in request.aliases)
            return super().RegisterResource(request)

    project = PulumiProject.find(REPO)
    settings, secrets = project.stack_settings(stack)
    monitor = SpecRecordingMonitor()
    with _without_dead_work():
        plan = _render(
            project.run_program, monitor, project=project.name, stack=stack, config=settings, secret_keys=secrets
        )
    return dataclasses.replace(
        plan, resources=tuple(dataclasses.replace(r, alias_specs=monitor.specs.get(r.urn, ())) for r in plan.resources)
    )


@pytest.mark.parametrize("stack", STACKS)
def test_state_deployed_before_paired_namespace_resolves_through_the_registered_aliases(stack: str) -> None:
    """The b53afa0 plans hold the URNs stacks deployed before `PairedNamespace` existed; the parts carry
    `Alias(parent=ROOT_STACK_RESOURCE)` and their children inherit it. Deployed state of those URNs against
    today's registrations: nothing deleted or replaced; without the aliases, every old resource would be."""
    old = json.loads((FIXTURES / "plans" / f"b53afa0-{stack}.json").read_text())
    deployed = read_baseline_from(deployment_from_plan(old))
    current = _render_with_alias_specs(stack)
    assert any(spec.get("noParent") is True for r in current.resources for spec in r.alias_specs)
    changes = compare_plans(deployed, current)
    assert [c for c in changes if c.kind in ("delete", "replace")] == []
    shown = engine_plan(current)
    ops, deleted = operations(deployed, shown)
    assert deleted == ()
    old_names = {r["name"] for r in old["resources"]}
    # What b53afa0 deployed is updated in place; only what is new since (e.g. PairedNamespace) is created.
    assert {r.name for r in shown.resources if ops[r.urn] == "create"}.isdisjoint(old_names)
    assert {ops[r.urn] for r in shown.resources if r.name in old_names} <= {"same", "update"}
    without = dataclasses.replace(
        current, resources=tuple(dataclasses.replace(r, alias_specs=()) for r in current.resources)
    )
    # Without the aliases, each entity under its new URN is a replacement (delete, then create empty).
    assert {c.kind for c in compare_plans(deployed, without)} == {"replace"}
