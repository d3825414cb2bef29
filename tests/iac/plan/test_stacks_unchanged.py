"""`pairedbus plan dev|staging|prod` renders exactly its current reference (tests/iac/fixtures/plans/
current-<stack>.json), and the aliases that reach the engine keep the URN of every resource the stacks held
before PairedNamespace existed (b53afa0).

The current references were regenerated after the intended changes since b53afa0 (the config's derived
duplicate-detection windows, the deployer's principalType, the probes, the backlog scale rule, autoDeleteOnIdle,
prod's private endpoints and protection): the equality test pins today's render, so any further change to
what is rendered shows up here as a diff to review and then a new reference.

The reference plans (tests/iac/fixtures/plans/b53afa0-*.json) were rendered by the b53afa0 tree itself
(`pairedbus plan STACK --json`) and rewritten to engine URNs (tests/iac/plan/engine_urns.py). The only
difference allowed is the new component: `pairedbus:index:PairedNamespace` in URN type chains and as one more
resource, and one alias on each of its four parts.

A later change that alters what is rendered on purpose (a property of a resource) makes the equality test
fail by design: give it a newer reference (`pairedbus plan STACK --json F`, then
`python -m tests.iac.plan.engine_urns F > tests/iac/fixtures/plans/<name>.json`; `_as_before_paired_namespace`
accepts either form) and keep the b53afa0 files: they are the URNs existing stacks hold, which the alias test
resolves to.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pairedbus import contract
from pairedbus.iac.config import config_from_pulumi_settings, parse_stack_config
from pairedbus.iac.plan.project import PulumiProject
from pairedbus.iac.plan.render import PlanMocks, RecordingMonitor, _render, _without_dead_work
from tests.iac.plan.engine_urns import engine_plan, engine_urn, without_component

REPO = Path(__file__).resolve().parents[3]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "plans"
STACKS = ("dev", "staging", "prod")
PARTS = {
    contract.TYPE_NAMESPACE_PAIR,
    contract.TYPE_BACKLOG_QUEUES,
    contract.TYPE_MESSAGING_ENTITIES,
    contract.TYPE_SYPHON_HOST,
}


class AliasRecordingMonitor(RecordingMonitor):
    """Also keeps, per registration, the parent aliases it carried to the engine (as alias specs)."""

    def __init__(self) -> None:
        super().__init__(PlanMocks())
        self.no_parent_aliases: dict[str, int] = {}

    def RegisterResource(self, request: Any) -> Any:
        urn = self.make_urn(request.parent, request.type, request.name)
        specs = [a.spec for a in request.aliases if a.HasField("spec")]
        self.no_parent_aliases[urn] = sum(1 for s in specs if s.noParent and not s.name and not s.type)
        return super().RegisterResource(request)


def _render_stack(stack: str) -> tuple[dict[str, Any], dict[str, int]]:
    project = PulumiProject.find(REPO)
    settings, secrets = project.stack_settings(stack)
    parse_stack_config(config_from_pulumi_settings(settings))
    monitor = AliasRecordingMonitor()
    with _without_dead_work():
        plan = _render(
            project.run_program, monitor, project=project.name, stack=stack, config=settings, secret_keys=secrets
        )
    return plan.to_json(), monitor.no_parent_aliases


@pytest.fixture(scope="module", params=STACKS)
def rendered(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any], dict[str, Any], dict[str, int]]:
    """The stack's render now, its b53afa0 reference (the URNs existing stacks hold) and the aliases."""
    stack = request.param
    plan, aliases = _render_stack(stack)
    reference = json.loads((FIXTURES / f"b53afa0-{stack}.json").read_text())
    return stack, plan, reference, aliases


def _current_reference(stack: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"current-{stack}.json").read_text())


def test_the_reference_plans_are_the_three_stacks(rendered) -> None:
    stack, _, reference, _ = rendered
    assert reference["stack"] == stack and reference["project"] == "pairedbus"
    assert len(reference["resources"]) >= 25


def _as_before_paired_namespace(plan: dict[str, Any]) -> dict[str, Any]:
    """An engine plan without PairedNamespace: its type left out of URNs, its parts' root alias not counted."""
    had_it = any(r["type"] == contract.TYPE_PAIRED_NAMESPACE for r in plan["resources"])
    plain = without_component(plan, contract.TYPE_PAIRED_NAMESPACE)
    resources = [{**r, "aliases": r["aliases"] - (had_it and r["type"] in PARTS)} for r in plain["resources"]]
    return {**plain, "resources": resources}


def test_same_resources_inputs_options_and_outputs_as_the_current_reference(rendered) -> None:
    stack, plan, _, _ = rendered
    now = _as_before_paired_namespace(engine_plan(plan))
    before = _as_before_paired_namespace(_current_reference(stack))
    expected = {r["urn"]: r for r in before["resources"]}
    actual = {r["urn"]: r for r in now["resources"]}
    assert sorted(actual) == sorted(expected)
    for urn, resource in expected.items():
        assert actual[urn] == resource, urn
    assert now["outputs"] == before["outputs"]


def test_leaf_names_did_not_change(rendered) -> None:
    """Every resource b53afa0 rendered is still there under its name; what is new since is in the current
    reference, and only there."""
    stack, plan, reference, _ = rendered
    now = sorted(r["name"] for r in plan["resources"] if r["type"] != contract.TYPE_PAIRED_NAMESPACE)
    assert set(r["name"] for r in reference["resources"]) <= set(now)
    assert now == sorted(
        r["name"] for r in _current_reference(stack)["resources"] if r["type"] != contract.TYPE_PAIRED_NAMESPACE
    )


def test_one_paired_namespace_holds_the_four_parts(rendered) -> None:
    _, plan, _, _ = rendered
    engine = engine_plan(plan)
    (paired,) = [r for r in engine["resources"] if r["type"] == contract.TYPE_PAIRED_NAMESPACE]
    assert paired["parent"] is None and not paired["custom"]
    assert sorted(r["type"] for r in engine["resources"] if r["parent"] == paired["urn"]) == sorted(PARTS)


def test_aliases_reach_the_monitor_and_resolve_every_resource_to_its_old_urn(rendered) -> None:
    """Every part carries `Alias(parent=ROOT_STACK_RESOURCE)` to the engine; the engine derives its children's
    aliases from their parent's (the children inherit them). Resolving them the engine's way gives, for every
    resource of the b53afa0 plan, its old URN: `pulumi up` updates in place instead of replacing."""
    stack, plan, reference, aliases = rendered
    by_mock = {r["urn"]: r for r in plan["resources"]}
    parts = [r for r in plan["resources"] if r["type"] in PARTS]
    assert len(parts) == 4 and all(aliases[r["urn"]] == 1 for r in parts)
    assert all(aliases[r["urn"]] == 0 for r in plan["resources"] if r["type"] not in PARTS)

    def chains(mock_urn: str) -> list[list[str]]:
        """Type chains the engine finds this resource under: its own, and those its aliases give."""
        resource = by_mock[mock_urn]
        parent = resource["parent"] if resource["parent"] in by_mock else None
        above = chains(parent) if parent else [[]]
        found = [[*chain, resource["type"]] for chain in above]
        if aliases[mock_urn]:
            found.append([resource["type"]])  # the alias: no parent
        return found

    old_urns = {r["urn"] for r in reference["resources"]}
    old_names = {r["name"] for r in reference["resources"]}
    resolved: set[str] = set()
    for resource in plan["resources"]:
        if resource["type"] == contract.TYPE_PAIRED_NAMESPACE:
            continue
        urns = {engine_urn("pairedbus", stack, chain, resource["name"]) for chain in chains(resource["urn"])}
        # ...and without the alias the URN would differ: the alias is what keeps it.
        assert len(urns) == 2
        if resource["name"] not in old_names:  # new since b53afa0 (e.g. prod's private endpoints): created
            assert not urns & old_urns
            continue
        (old,) = urns & old_urns  # exactly one old resource per new one
        resolved.add(old)
    assert resolved == old_urns
