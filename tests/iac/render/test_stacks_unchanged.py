"""`pairedbus plan dev|staging|prod` renders exactly its current reference (tests/iac/fixtures/plans/
current-<stack>.json), and the aliases that reach the engine keep the URN of every resource the stacks hold:
those of b53afa0 (before PairedNamespace existed, parts at the stack's root) and those of 6fef7c5 (PairedNamespace
with fixed part and child names, before names derived from the component's name and the parts' tokens moved to
`pairedbus:index:`). The aliases are resolved the engine's way (`tests/iac/render/engine_aliases.py`).

The current references pin today's render, so any further change to what is rendered shows up here as a diff to
review and then a new reference: `pairedbus plan STACK --json F`, then
`python -m tests.iac.render.engine_urns F > tests/iac/fixtures/plans/current-STACK.json`. Keep the b53afa0 and
6fef7c5 files: they are the URNs existing stacks hold, which the alias test resolves to.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pairedbus import contract
from pairedbus.iac.config import StackConfigError, config_from_pulumi_settings, parse_stack_config
from pairedbus.iac.render.program import _render, _without_dead_work
from pairedbus.iac.render.project import PulumiProject
from tests.iac.render.engine_aliases import AliasRecordingMonitor, resolve
from tests.iac.render.engine_urns import engine_plan

REPO = Path(__file__).resolve().parents[3]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "plans"
STACKS = ("dev", "staging", "prod")
#: What the production hardening added after 6fef7c5: new resources, created, with nothing to alias.
HARDENING_TYPES = frozenset(
    {"azure-native:monitor:DiagnosticSetting", "azure-native:authorization:ManagementLockByScope"}
)
#: What the stacks hold today: before PairedNamespace (b53afa0) and before names derived from it (6fef7c5).
BEFORE = ("b53afa0", "6fef7c5")
PARTS = {
    contract.TYPE_NAMESPACE_PAIR,
    contract.TYPE_BACKLOG_QUEUES,
    contract.TYPE_MESSAGING_ENTITIES,
    contract.TYPE_SYPHON_HOST,
}


def _render_stack(stack: str) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    project = PulumiProject.find(REPO)
    settings, secrets = project.stack_settings(stack)
    parse_stack_config(config_from_pulumi_settings(settings))
    monitor = AliasRecordingMonitor()
    with _without_dead_work():
        plan = _render(
            project.run_program, monitor, project=project.name, stack=stack, config=settings, secret_keys=secrets
        )
    return plan.to_json(), monitor.alias_specs


@pytest.fixture(scope="module", params=STACKS)
def rendered(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any], dict[str, Any], dict[str, list[Any]]]:
    """The stack's render now, its b53afa0 reference and the alias specs each registration carried."""
    stack = request.param
    plan, specs = _render_stack(stack)
    return stack, plan, _reference("b53afa0", stack), specs


def _reference(name: str, stack: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}-{stack}.json").read_text())


def test_the_reference_plans_are_the_three_stacks(rendered) -> None:
    stack, _, reference, _ = rendered
    for name in BEFORE:
        before = _reference(name, stack)
        assert before["stack"] == stack and before["project"] == "pairedbus"
        assert len(before["resources"]) >= 25
    assert reference == _reference("b53afa0", stack)


def test_same_resources_inputs_options_and_outputs_as_the_current_reference(rendered) -> None:
    stack, plan, _, _ = rendered
    now = engine_plan(plan)
    before = _reference("current", stack)
    expected = {r["urn"]: r for r in before["resources"]}
    actual = {r["urn"]: r for r in now["resources"]}
    assert sorted(actual) == sorted(expected)
    for urn, resource in expected.items():
        assert actual[urn] == resource, urn
    assert now["outputs"] == before["outputs"]


def test_every_name_derives_from_the_components_name(rendered) -> None:
    """The program's PairedNamespace is `pairedbus`: each part and each child is named `pairedbus-...`."""
    _, plan, _, _ = rendered
    names = [r["name"] for r in plan["resources"] if r["type"] != contract.TYPE_PAIRED_NAMESPACE]
    assert names and all(n.startswith("pairedbus-") for n in names)
    parts = sorted(r["name"] for r in plan["resources"] if r["type"] in PARTS)
    assert parts == ["pairedbus-backlog", "pairedbus-entities", "pairedbus-pair", "pairedbus-syphon"]


def test_one_paired_namespace_holds_the_four_parts(rendered) -> None:
    _, plan, _, _ = rendered
    engine = engine_plan(plan)
    (paired,) = [r for r in engine["resources"] if r["type"] == contract.TYPE_PAIRED_NAMESPACE]
    assert paired["parent"] is None and not paired["custom"]
    assert sorted(r["type"] for r in engine["resources"] if r["parent"] == paired["urn"]) == sorted(PARTS)


@pytest.mark.parametrize("before", BEFORE)
def test_aliases_resolve_every_old_urn_exactly_once(rendered, before: str) -> None:
    """Resolving the aliases the engine's way against what the stack holds: every old resource is claimed by
    exactly one resource of today's program (no alias claimed twice), and every resource of today's program that
    existed then finds it. Only what is new since is created: PairedNamespace itself (a component, nothing in
    Azure) and, against b53afa0, what was added after it (prod's private endpoints and syphon scale grant)."""
    stack, plan, _, specs = rendered
    old = _reference(before, stack)
    olds = {r["urn"] for r in old["resources"]}
    resolution = resolve(plan, specs, olds)
    claimed = [o for o in resolution.values() if o is not None]
    assert len(claimed) == len(set(claimed)), "an old URN claimed by two resources"
    assert set(claimed) == olds, sorted(olds - set(claimed))
    types = {r["urn"]: r["type"] for r in engine_plan(plan)["resources"]}
    # New since 6fef7c5, so created: prod's hardening (diagnostic settings and locks).
    unresolved = {urn for urn, o in resolution.items() if o is None and types[urn] not in HARDENING_TYPES}
    assert {u for u, t in types.items() if t in HARDENING_TYPES and resolution[u] is None} == {
        u for u, t in types.items() if t in HARDENING_TYPES
    }
    if before == "6fef7c5":
        assert unresolved == set()
        return
    # Against b53afa0: what 6fef7c5 had that b53afa0 had not (in b53afa0's URN form) was added in between.
    then = resolve(plan, specs, {r["urn"] for r in _reference("6fef7c5", stack)["resources"]})
    paired = {u for u, t in types.items() if t == contract.TYPE_PAIRED_NAMESPACE}
    added = {
        u
        for u, o in then.items()
        if u not in paired and types[u] not in HARDENING_TYPES and _without_paired_namespace(o) not in olds
    }
    assert unresolved == paired | added
    assert bool(added) == (stack == "prod")  # prod's private endpoints and scale grant came after b53afa0


def _without_paired_namespace(urn: str) -> str:
    head, _, name = urn.rpartition("::")
    prefix, _, chain = head.rpartition("::")
    return f"{prefix}::{'$'.join(t for t in chain.split('$') if t != contract.TYPE_PAIRED_NAMESPACE)}::{name}"


def test_no_create_delete_or_replace_against_the_plan_before_this_change(rendered) -> None:
    """Against 6fef7c5 (the render before names derived from the component's name), each resource updates in
    place: same type, same inputs and options. The one change on purpose: the secondary namespace's new tag
    with the backlog queue count (tags never force a replacement)."""
    stack, plan, _, specs = rendered
    old = {r["urn"]: r for r in _reference("6fef7c5", stack)["resources"]}
    resolution = resolve(plan, specs, set(old))
    # Auto-named resources (workspace, environment, identity, app) keep their Azure names: Pulumi passes the old
    # state to the provider, which keeps an auto-name for the life of the resource (Pulumi docs, "Auto-naming").
    # The mocks derive those names, and ids built from them, from the Pulumi name: compare under the old one.
    renamed = {
        r["name"]: old[resolution[r["urn"]]]["name"]
        for r in engine_plan(plan)["resources"]
        if r["type"] not in HARDENING_TYPES
    }
    for resource in engine_plan(plan)["resources"]:
        if resource["type"] in HARDENING_TYPES:  # new since 6fef7c5 (prod's diagnostics and locks): created
            continue
        before = old[resolution[resource["urn"]]]
        # A part's token moved to `pairedbus:index:` (a component: nothing in Azure changes).
        assert before["type"] == contract.LEGACY_PART_TYPES.get(resource["type"], resource["type"])
        assert before["custom"] == resource["custom"]
        assert (before["protect"], before["retain_on_delete"]) == (resource["protect"], resource["retain_on_delete"])
        inputs = _renamed(dict(resource["inputs"]), renamed)
        if resource["type"] == contract.TYPE_NAMESPACE and inputs["tags"][contract.TAG_ROLE] == "secondary":
            tags = dict(inputs["tags"])
            assert tags.pop(contract.TAG_BACKLOG_QUEUE_COUNT) == str(len(plan["outputs"]["backlogQueues"]))
            inputs["tags"] = tags
        if resource["type"] == contract.TYPE_NAMESPACE and "encryption" in inputs:
            # Prod's customer-managed key, added since 6fef7c5 (an update in place; ARM cannot take it off again):
            # the key and the key's identity beside the system-assigned one.
            del inputs["encryption"]
            assert inputs["identity"]["type"] == "SystemAssigned, UserAssigned"
            inputs["identity"] = {"type": "SystemAssigned"}
        assert inputs == before["inputs"], resource["urn"]


def _renamed(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: _renamed(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, names) for v in value]
    if isinstance(value, str):
        for new in sorted(names, key=len, reverse=True):
            if new != names[new] and new in value:
                value = re.sub(rf"(?<![\w-]){re.escape(new)}(?=$|[-/])", names[new], value)
    return value


def _two_pairs_on_dev(billing_legacy: bool) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    from pairedbus.iac import PairedNamespace
    from pairedbus.iac.config import load_pulumi_stack_config
    from pairedbus.iac.config.args_mapping import args_from_stack_config

    def program() -> None:
        args = args_from_stack_config(load_pulumi_stack_config())
        PairedNamespace("pairedbus", args, legacy_urns=True)
        billing = {
            **args,
            "resource_groups": {"primary": {"name": "rg-billing-weu"}, "secondary": {"name": "rg-billing-neu"}},
            "primary": {**args["primary"], "name": "billing-dev-weu"},
            "secondary": {**args["secondary"], "name": "billing-dev-neu"},
        }
        PairedNamespace("billing", billing, legacy_urns=billing_legacy)

    project = PulumiProject.find(REPO)
    settings, secrets = project.stack_settings("dev")
    monitor = AliasRecordingMonitor()
    with _without_dead_work():
        plan = _render(program, monitor, project=project.name, stack="dev", config=settings, secret_keys=secrets)
    return plan.to_json(), monitor.alias_specs


def test_a_second_pair_added_to_an_existing_stack_claims_nothing_of_the_first() -> None:
    """dev as it is (6fef7c5), plus a new pair `billing`: the legacy pair takes over every old resource, the new
    pair creates all of its own, and no old URN is claimed twice (the engine's "Duplicate resource alias")."""
    plan, specs = _two_pairs_on_dev(billing_legacy=False)
    olds = {r["urn"] for r in _reference("6fef7c5", "dev")["resources"]}
    resolution = resolve(plan, specs, olds)
    claimed = [o for o in resolution.values() if o is not None]
    assert sorted(claimed) == sorted(olds)
    billing = {urn: old for urn, old in resolution.items() if urn.endswith("::billing") or "::billing-" in urn}
    assert len(billing) > 20 and set(billing.values()) == {None}


def test_legacy_urns_on_two_pairs_is_refused_in_one_line_before_the_engine_would() -> None:
    """Why `legacy_urns` is opt-in, for one pair: the old names were the same for every pair. The engine would
    refuse every alias the two share ("Duplicate resource alias", hundreds of lines, plans/engine_checks.py);
    the second pair says so in one line before it registers anything."""
    with pytest.raises(StackConfigError) as caught:
        _two_pairs_on_dev(billing_legacy=True)
    (problem,) = caught.value.problems
    assert problem.startswith("billing: legacy_urns: expected on one pair of a program only, 'pairedbus' has it")
