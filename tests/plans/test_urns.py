"""URNs as the Pulumi engine makes them (`resource.NewURN` in pulumi/pulumi sdk/go/common/resource/urn.go): the
parent's whole qualified type joined with `$`, the root stack's left out; the mock monitor's last-type-only URNs
rewritten into that form."""

from __future__ import annotations

from pairedbus.plans.model import Plan, PlannedResource
from pairedbus.plans.urns import ROOT_STACK_TYPE, engine_plan, make_urn, parse_urn

STACK_URN = "urn:pulumi:dev::shop::pulumi:pulumi:Stack::shop-dev"


def test_a_urn_splits_into_stack_project_type_and_name() -> None:
    assert parse_urn("urn:pulumi:dev::shop::a:b:Pair$azure-native:servicebus:Queue::orders") == (
        "dev",
        "shop",
        "a:b:Pair$azure-native:servicebus:Queue",
        "orders",
    )


def test_a_name_may_itself_hold_the_separator() -> None:
    assert parse_urn("urn:pulumi:dev::shop::t:m:R::a::b::c") == ("dev", "shop", "t:m:R", "a::b::c")


def test_what_is_not_a_pulumi_urn_is_none() -> None:
    for text in ("urn:other:dev::shop::t::n", "urn:pulumi:dev::shop::t", "urn:pulumi:::shop::t::n", None, 7):
        assert parse_urn(text) is None  # type: ignore[arg-type]


def test_a_child_urn_carries_its_parents_qualified_type_but_not_the_root_stacks() -> None:
    assert make_urn("dev", "shop", None, "t:m:Pair", "a") == "urn:pulumi:dev::shop::t:m:Pair::a"
    assert make_urn("dev", "shop", ROOT_STACK_TYPE, "t:m:Pair", "a") == "urn:pulumi:dev::shop::t:m:Pair::a"
    assert (
        make_urn("dev", "shop", "t:m:Outer$t:m:Pair", "t:m:Q", "q")
        == "urn:pulumi:dev::shop::t:m:Outer$t:m:Pair$t:m:Q::q"
    )


def _resource(urn: str, type_: str, name: str, parent: str | None, **extra) -> PlannedResource:
    return PlannedResource(urn=urn, type=type_, name=name, inputs={}, custom=True, parent=parent, **extra)


def test_engine_plan_qualifies_every_level_and_relinks_parents_dependencies_and_providers() -> None:
    # What the mock monitor registers: each URN names its parent's last type only.
    outer = _resource("urn:pulumi:dev::shop::t:m:Outer::o", "t:m:Outer", "o", STACK_URN)
    pair = _resource("urn:pulumi:dev::shop::t:m:Outer$t:m:Pair::p", "t:m:Pair", "p", outer.urn)
    queue = _resource(
        "urn:pulumi:dev::shop::t:m:Pair$t:m:Q::q",
        "t:m:Q",
        "q",
        pair.urn,
        dependencies=(pair.urn, STACK_URN),
        property_dependencies={"namespaceName": (pair.urn,)},
        provider=f"{outer.urn}::provider-id",
    )
    plan = engine_plan(Plan("shop", "dev", (outer, pair, queue)))

    o, p, q = plan.resources
    assert o.urn == "urn:pulumi:dev::shop::t:m:Outer::o" and o.parent is None  # the root stack becomes None
    assert p.urn == "urn:pulumi:dev::shop::t:m:Outer$t:m:Pair::p" and p.parent == o.urn
    assert q.urn == "urn:pulumi:dev::shop::t:m:Outer$t:m:Pair$t:m:Q::q" and q.parent == p.urn
    assert q.dependencies == (p.urn,)  # the root stack dropped
    assert q.property_dependencies == {"namespaceName": (p.urn,)}
    assert q.provider == f"{o.urn}::provider-id"  # a provider reference keeps its id


def test_engine_plan_is_idempotent() -> None:
    outer = _resource("urn:pulumi:dev::shop::t:m:Outer::o", "t:m:Outer", "o", None)
    child = _resource("urn:pulumi:dev::shop::t:m:Outer$t:m:Q::q", "t:m:Q", "q", outer.urn)
    grandchild = _resource("urn:pulumi:dev::shop::t:m:Q$t:m:R::r", "t:m:R", "r", child.urn)
    once = engine_plan(Plan("shop", "dev", (grandchild, child, outer)))
    assert engine_plan(once) == once
    assert once.resources[0].urn == "urn:pulumi:dev::shop::t:m:Outer$t:m:Q$t:m:R::r"


def test_a_link_outside_the_plan_is_kept_as_it_is() -> None:
    elsewhere = "urn:pulumi:dev::other::t:m:X::x"
    resource = _resource("urn:pulumi:dev::shop::t:m:Q::q", "t:m:Q", "q", None, dependencies=(elsewhere,))
    assert engine_plan(Plan("shop", "dev", (resource,))).resources[0].dependencies == (elsewhere,)


def test_a_parent_cycle_does_not_loop() -> None:
    a = _resource("urn:pulumi:dev::shop::t:m:A::a", "t:m:A", "a", "urn:pulumi:dev::shop::t:m:B::b")
    b = _resource("urn:pulumi:dev::shop::t:m:B::b", "t:m:B", "b", a.urn)
    plan = engine_plan(Plan("shop", "dev", (a, b)))
    assert len({r.urn for r in plan.resources}) == 2


def test_engine_plan_builds_each_urn_once_from_its_parents(monkeypatch) -> None:
    """Linear in the chain: a 64-deep chain in the mock's form takes 64 URN builds, each from its parent's URN
    (before, a 16,000-deep chain of a hostile state took 5.8 GB)."""
    from pairedbus.plans import urns

    calls = []
    real = urns.make_urn
    monkeypatch.setattr(urns, "make_urn", lambda *args: calls.append(args[2]) or real(*args))
    resources, parent, parent_type = [], None, None
    for i in range(64):
        qualified = f"{parent_type}$t:m:C" if parent_type else "t:m:C"  # the mock's form: the parent's last type
        urn = f"urn:pulumi:dev::shop::{qualified}::c{i}"
        resources.append(_resource(urn, "t:m:C", f"c{i}", parent))
        parent, parent_type = urn, "t:m:C"
    plan = engine_plan(Plan("shop", "dev", tuple(reversed(resources))))
    assert len(calls) == 64
    # Each build is handed its parent's qualified type, never rebuilt from the chain: one more level each time.
    assert sorted(len((c or "").split("$")) for c in calls) == [1, *range(1, 64)]
    assert plan.resources[0].urn.count("$") == 63
