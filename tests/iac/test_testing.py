"""docs/testing.md, "Testing your own Pulumi program": the example runs as written (issue 19, item 7).

The test reads the example from the document itself, so the two cannot drift apart, and runs every test
function it defines, in update and preview mode where it asks for both."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "testing.md"
SECTION = "## Testing your own Pulumi program"


def _example() -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert len(blocks) == 1, "the section holds one example"
    return blocks[0]


def _cases() -> list[tuple[str, dict[str, object]]]:
    namespace: dict[str, object] = {}
    exec(compile(_example(), str(DOC), "exec"), namespace)  # our own document's example
    cases = []
    for name, function in namespace.items():
        if not (name.startswith("test_") and callable(function)):
            continue
        marks = getattr(function, "pytestmark", [])
        params = [m.args for m in marks if m.name == "parametrize"]
        if params:
            ((argname, values),) = params
            cases.extend((f"{name}[{v}]", {"function": function, argname: v}) for v in values)
        else:
            cases.append((name, {"function": function}))
    return cases


def test_the_example_is_a_pytest_module_with_tests() -> None:
    names = [name for name, _ in _cases()]
    assert "test_the_pair_is_two_namespaces_in_two_regions[True]" in names  # preview mode
    assert "test_the_pair_is_two_namespaces_in_two_regions[False]" in names  # update mode
    assert len(names) == 5


@pytest.mark.parametrize("case", [c for _, c in _cases()], ids=[name for name, _ in _cases()])
def test_the_documented_example_passes(case: dict[str, object]) -> None:
    function = case.pop("function")
    assert set(case) == set(inspect.signature(function).parameters)  # type: ignore[arg-type]
    function(**case)  # type: ignore[operator]


# --- run_program behaves like the engine (issue 36, item 2) -----------------------------------------


def _pair(name: str, parent: object) -> object:
    import pulumi

    from pairedbus.iac import PairedNamespace

    return PairedNamespace(
        name,
        {
            "resource_groups": {"primary": {"name": f"rg-{name}-weu"}, "secondary": {"name": f"rg-{name}-neu"}},
            "primary": {"name": f"{name}-weu", "location": "westeurope"},
            "secondary": {"name": f"{name}-neu", "location": "northeurope"},
            "backlog_queue_count": 10,
            "queues": [{"name": "orders"}],
            "syphon": {"image": "ghcr.io/contoso/pairedbus-syphon:0.1.0"},
        },
        opts=pulumi.ResourceOptions(parent=parent),  # type: ignore[arg-type]
    )


def test_two_teams_components_each_with_a_pair_named_messaging_keep_every_resource_apart() -> None:
    """The engine's URN holds the parent's whole type chain: the pairs differ by their parents' types only.
    With the mock monitor's URNs (the parent's last type) 26 of 58 collided and `by_urn()` returned 32."""
    import pulumi

    from pairedbus.iac.testing import run_program

    def program() -> None:
        for team in ("billing", "orders"):
            holder = pulumi.ComponentResource(f"{team}:platform:Messaging", team)
            _pair("messaging", holder)

    plan = run_program(program)
    assert len(plan.by_urn()) == len(plan.resources) == 58
    [billing_pair, orders_pair] = sorted(r.urn for r in plan.of_type("pairedbus:index:PairedNamespace"))
    assert (
        billing_pair
        == "urn:pulumi:stack::project::billing:platform:Messaging$pairedbus:index:PairedNamespace::messaging"
    )
    child = next(r for r in plan.resources if r.parent == orders_pair and r.type == "pairedbus:index:NamespacePair")
    assert child.urn == (
        "urn:pulumi:stack::project::orders:platform:Messaging$pairedbus:index:PairedNamespace"
        "$pairedbus:index:NamespacePair::messaging-pair"
    )


def test_a_top_level_resource_has_no_stack_type_in_its_urn() -> None:
    from pulumi_azure_native import resources

    from pairedbus.iac.testing import run_program

    plan = run_program(lambda: resources.ResourceGroup("rg", resource_group_name="rg", location="westeurope"))
    assert [r.urn for r in plan.resources] == ["urn:pulumi:stack::project::azure-native:resources:ResourceGroup::rg"]


def test_transforms_run_as_the_engine_runs_them_own_then_parents_then_stack() -> None:
    """The README's route to `ignore_changes` on a pair's resources is a `transforms` entry on the pair: under
    Pulumi's mock monitor it was skipped without a word."""
    import pulumi

    from pairedbus.iac.testing import run_program

    def mark(label: str) -> object:
        def transform(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
            if args.type_ != "azure-native:servicebus:Namespace":
                return None
            tags = {
                **(args.props.get("tags") or {}),
                "order": f"{(args.props.get('tags') or {}).get('order', '')}{label}",
            }
            ignore = pulumi.ResourceOptions(ignore_changes=[f"tags.{label}"])  # merge appends it to the list
            return pulumi.ResourceTransformResult(
                {**args.props, "tags": tags}, pulumi.ResourceOptions.merge(args.opts, ignore)
            )

        return transform

    def program() -> None:
        pulumi.runtime.register_resource_transform(mark("s"))  # type: ignore[arg-type]
        holder = pulumi.ComponentResource(
            "team:platform:Messaging", "team", opts=pulumi.ResourceOptions(transforms=[mark("c")])
        )  # type: ignore[list-item]
        from pairedbus.iac import PairedNamespace

        PairedNamespace(
            "orders",
            {
                "resource_groups": {"primary": {"name": "rg-o-weu"}, "secondary": {"name": "rg-o-neu"}},
                "primary": {"name": "orders-o-weu", "location": "westeurope"},
                "secondary": {"name": "orders-o-neu", "location": "northeurope"},
                "backlog_queue_count": 1,
                "syphon": {"image": "ghcr.io/contoso/pairedbus-syphon:0.1.0"},
            },
            opts=pulumi.ResourceOptions(parent=holder, transforms=[mark("p")]),  # type: ignore[list-item]
        )

    plan = run_program(program)
    namespaces = plan.of_type("azure-native:servicebus:Namespace")
    assert len(namespaces) == 2
    for namespace in namespaces:
        assert namespace.inputs["tags"]["order"] == "pcs"  # the pair's, then its parent's, then the stack's
        assert namespace.ignore_changes == ("tags.p", "tags.c", "tags.s")
    assert all("order" not in (r.inputs.get("tags") or {}) for r in plan.of_type("azure-native:servicebus:Queue"))
