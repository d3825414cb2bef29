"""What the Pulumi engine refuses, the offline render refuses, in the engine's words (issue 19, item 5).

The expected lines are the engine's message templates (pulumi/pulumi sdk/go/common/diag/errors.go,
diags 2001, 2008 and 2016; pkg/resource/deploy/step_generator.go `checkParent`) filled with the
engine's URNs: the whole parent type chain, the root stack's type left out.
"""

from __future__ import annotations

from pathlib import Path

import pulumi
import pytest
from pulumi.runtime import settings
from pulumi.runtime.proto import resource_pb2
from pulumi_azure_native import servicebus

from pairedbus.cli import main
from pairedbus.iac.render.program import render_program
from pairedbus.plans.engine_checks import EngineLedger, EngineRefusal, Registration


class Pair(pulumi.ComponentResource):
    """A component written the way the issue found ours: its child has a fixed name."""

    def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("acme:index:Pair", name, None, opts)
        servicebus.Namespace(
            "primary",
            namespace_name=f"{name}-ns",
            resource_group_name="rg",
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({})


class Empty(pulumi.ComponentResource):
    def __init__(self, type_: str, name: str, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(type_, name, None, opts)
        self.register_outputs({})


def _refusals(program) -> list[str]:
    with pytest.raises(EngineRefusal) as caught:
        render_program(program, project="shop", stack="dev")
    return caught.value.problems


def test_two_components_registering_child_primary_fail_with_the_engines_duplicate_urn_error() -> None:
    problems = _refusals(lambda: (Pair("orders"), Pair("billing")))
    assert problems == [
        "Duplicate resource URN 'urn:pulumi:dev::shop::acme:index:Pair$azure-native:servicebus:Namespace::primary'; "
        "try giving it a unique name"
    ]


def test_children_named_from_their_component_render() -> None:
    class NamedPair(pulumi.ComponentResource):
        def __init__(self, name: str) -> None:
            super().__init__("acme:index:Pair", name, None, None)
            opts = pulumi.ResourceOptions(parent=self)
            servicebus.Namespace(f"{name}-primary", namespace_name=f"{name}-ns", resource_group_name="rg", opts=opts)
            self.register_outputs({})

    plan = render_program(lambda: (NamedPair("orders"), NamedPair("billing")), project="shop", stack="dev")
    assert sorted(r.name for r in plan.of_type("azure-native:servicebus:Namespace")) == [
        "billing-primary",
        "orders-primary",
    ]


def test_resources_the_engine_tells_apart_are_not_called_duplicates() -> None:
    """The mock monitor's URN holds only the parent's last type: `Inner$Namespace::x` twice here.
    The engine's holds the whole chain (`A$Inner$Namespace`, `B$Inner$Namespace`): no refusal."""

    def program() -> None:
        for outer_type in ("acme:index:A", "acme:index:B"):
            outer = Empty(outer_type, outer_type[-1].lower())
            inner = Empty("acme:index:Inner", "inner", pulumi.ResourceOptions(parent=outer))
            servicebus.Namespace(
                "x", namespace_name="x", resource_group_name="rg", opts=pulumi.ResourceOptions(parent=inner)
            )

    plan = render_program(program, project="shop", stack="dev")
    assert len(plan.of_type("azure-native:servicebus:Namespace")) == 2


def test_an_alias_claimed_by_two_resources_fails_with_the_engines_alias_error() -> None:
    def program() -> None:
        first = Empty("acme:index:Pair", "orders", pulumi.ResourceOptions(aliases=[pulumi.Alias(name="pair")]))
        first.urn.apply(  # registered strictly after the first: its URN is known once the monitor answered
            lambda _: Empty("acme:index:Pair", "billing", pulumi.ResourceOptions(aliases=[pulumi.Alias(name="pair")]))
        )

    assert _refusals(program) == [
        "Duplicate resource alias 'urn:pulumi:dev::shop::acme:index:Pair::pair' applied to resource with URN "
        "'urn:pulumi:dev::shop::acme:index:Pair::billing' conflicting with resource with URN "
        "'urn:pulumi:dev::shop::acme:index:Pair::orders'"
    ]


def test_an_alias_equal_to_a_live_resources_urn_fails_whichever_registers_first() -> None:
    live = "urn:pulumi:dev::shop::acme:index:Pair::orders"
    renamed = "urn:pulumi:dev::shop::acme:index:Pair::orders-v2"

    def live_first() -> None:
        Empty("acme:index:Pair", "orders").urn.apply(
            lambda _: Empty(
                "acme:index:Pair", "orders-v2", pulumi.ResourceOptions(aliases=[pulumi.Alias(name="orders")])
            )
        )

    def alias_first() -> None:
        aliased = Empty("acme:index:Pair", "orders-v2", pulumi.ResourceOptions(aliases=[pulumi.Alias(name="orders")]))
        aliased.urn.apply(lambda _: Empty("acme:index:Pair", "orders"))

    assert _refusals(live_first) == [
        f"Duplicate resource alias '{live}' applied to resource with URN '{renamed}' conflicting with resource with URN '{live}'"
    ]
    assert _refusals(alias_first) == [
        f"Duplicate resource URN '{live}' conflicting with alias on resource with URN '{renamed}'"
    ]


def test_an_alias_of_a_resource_that_no_longer_exists_renders() -> None:
    plan = render_program(
        lambda: Empty("acme:index:Pair", "orders", pulumi.ResourceOptions(aliases=[pulumi.Alias(name="pair")])),
        project="shop",
        stack="dev",
    )
    assert [r.aliases for r in plan.resources] == [1]


def test_a_child_inherits_its_parents_alias_as_the_engine_computes_it() -> None:
    """`inheritedChildAlias`: the child `orders-primary` of `orders` (once `pair`) was `pair-primary`;
    a live resource at that URN conflicts."""

    def program() -> None:
        renamed = Empty("acme:index:Pair", "orders", pulumi.ResourceOptions(aliases=[pulumi.Alias(name="pair")]))
        child = Empty("acme:index:Part", "orders-primary", pulumi.ResourceOptions(parent=renamed))

        def live(_: object) -> None:
            holder = Empty("acme:index:Pair", "holder")  # a different Pair: its child URN chain is Pair$Part
            Empty("acme:index:Part", "pair-primary", pulumi.ResourceOptions(parent=holder))

        child.urn.apply(live)

    problems = _refusals(program)
    assert problems == [
        "Duplicate resource URN 'urn:pulumi:dev::shop::acme:index:Pair$acme:index:Part::pair-primary' conflicting "
        "with alias on resource with URN 'urn:pulumi:dev::shop::acme:index:Pair$acme:index:Part::orders-primary'"
    ]


def test_a_child_whose_parent_was_never_registered_fails_with_the_engines_parent_error() -> None:
    ghost = "urn:pulumi:dev::shop::acme:index:Pair::ghost"

    def program() -> None:
        # What an SDK or a hand-written client can send; the Python SDK awaits a parent's registration.
        request = resource_pb2.RegisterResourceRequest(type="acme:index:Part", name="orphan", parent=ghost)
        settings.get_monitor().RegisterResource(request)

    assert _refusals(program) == [f"could not find parent resource {ghost}"]


def test_the_ledger_replays_registrations_in_order() -> None:
    ledger = EngineLedger("shop", "dev")
    stack = "urn:pulumi:dev::shop::pulumi:pulumi:Stack::shop-dev"
    ledger.record(Registration(stack, "pulumi:pulumi:Stack", "shop-dev", ""))
    ledger.record(Registration("m1", "acme:index:Pair", "a", stack))
    ledger.record(Registration("m1", "acme:index:Pair", "a", stack, read=True))  # a read of the same URN
    assert ledger.refusals() == [
        "Duplicate resource URN 'urn:pulumi:dev::shop::acme:index:Pair::a'; try giving it a unique name"
    ]


def test_plan_stops_on_a_duplicate_urn_like_on_any_user_error(project_copy: Path, capsys) -> None:
    (project_copy / "__main__.py").write_text(
        "import pulumi\n"
        "from pulumi_azure_native import servicebus\n\n"
        "for pair in ('orders', 'billing'):\n"
        "    parent = pulumi.ComponentResource('acme:index:Pair', pair)\n"
        "    servicebus.Namespace('primary', namespace_name=pair, resource_group_name='rg',\n"
        "                         opts=pulumi.ResourceOptions(parent=parent))\n"
    )
    assert main(["plan", "dev", "--project-dir", str(project_copy)]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        "pairedbus: error: Duplicate resource URN "
        "'urn:pulumi:dev::pairedbus::acme:index:Pair$azure-native:servicebus:Namespace::primary'; try giving it a unique name"
    ]
    assert "Offline render" not in captured.out  # nothing half-printed


def test_plan_prints_the_programs_warnings_once(project_copy: Path, capsys) -> None:
    stack = project_copy / "stacks" / "Pulumi.dev.yaml"
    text = stack.read_text().replace("location: northeurope", "location: Denmark East")
    stack.write_text(text.replace("config:\n", "config:\n  pairedbus:allowUnknownRegion: true\n", 1))  # a new region
    assert main(["plan", "dev", "--project-dir", str(project_copy)]) == 0
    warnings = [line for line in capsys.readouterr().out.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: pairedbus:secondary.location: 'denmarkeast' is not in pairedbus's region table (as of 2025-09-23); "
        "deploying it anyway, ARM decides whether the region exists"
    ]
