"""A plan as `pulumi preview` shows one: stack -> components -> resources, each with its operation mark, its type,
the name Azure shows and a few key settings."""

from __future__ import annotations

import io

from rich.console import Console

from pairedbus.plans.model import Plan, PlannedResource
from pairedbus.plans.tree import display_name, key_settings, plan_tree, summary

PAIR = "urn:pulumi:dev::shop::pairedbus:index:NamespacePair::pair"


def _queue(name: str, **inputs) -> PlannedResource:
    return PlannedResource(
        urn=f"urn:pulumi:dev::shop::pairedbus:index:NamespacePair$azure-native:servicebus:Queue::{name}",
        type="azure-native:servicebus:Queue",
        name=f"{name}-logical",
        inputs={"queueName": name, **inputs},
        custom=True,
        parent=PAIR,
    )


def _text(plan: Plan, operations=None, deleted=()) -> list[str]:
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(plan_tree(plan, operations, deleted))
    return [line.rstrip() for line in console.file.getvalue().splitlines()]


def test_the_name_azure_shows_or_else_the_logical_name() -> None:
    assert display_name(_queue("orders")) == "orders"
    other = PlannedResource(
        urn="u", type="azure-native:authorization:RoleAssignment", name="ra", inputs={}, custom=True
    )
    assert display_name(other) == "ra"
    unknown = _queue("x")
    unknown = PlannedResource(**{**unknown.__dict__, "inputs": {"queueName": None}})
    assert display_name(unknown) == "x-logical"  # not known until deployment


def test_at_most_four_key_settings_in_their_order_then_protect_and_retain() -> None:
    queue = _queue(
        "orders",
        lockDuration="PT1M",
        enablePartitioning=True,
        maxSizeInMegabytes=81920,
        requiresSession=False,
        requiresDuplicateDetection=True,
        other="ignored",
    )
    queue = PlannedResource(**{**queue.__dict__, "protect": True, "retain_on_delete": True})
    assert key_settings(queue) == (
        "enablePartitioning=True maxSizeInMegabytes=81920 requiresSession=False requiresDuplicateDetection=True "
        "protect retain"
    )


def test_a_long_value_is_folded_and_a_dict_shows_its_name() -> None:
    queue = _queue("q", forwardTo="x" * 40, sku={"name": "Premium", "tier": "Premium"})
    assert key_settings(queue) == "sku=Premium forwardTo=" + "x" * 23 + "…"


def test_resources_sit_under_their_component_with_operation_marks() -> None:
    pair = PlannedResource(urn=PAIR, type="pairedbus:index:NamespacePair", name="pair", inputs={}, custom=False)
    orders, gone = _queue("orders"), _queue("invoices")
    plan = Plan("shop", "dev", (pair, orders))
    lines = _text(plan, {PAIR: "same", orders.urn: "create", gone.urn: "delete"}, deleted=(gone,))
    assert lines[0] == "shop-dev"
    assert lines[1].endswith("NamespacePair pair")
    assert lines[2].endswith("+  Queue orders") and lines[2].index("+") > lines[1].index("N")
    assert lines[3].endswith("-  Queue invoices")


def test_a_parent_outside_the_plan_puts_the_resource_at_the_top() -> None:
    lines = _text(Plan("shop", "dev", (_queue("orders"),)))
    assert lines[1].endswith("Queue orders") and len(lines) == 2


def test_summary_counts_custom_resources_by_type_and_the_operations_in_preview_order() -> None:
    pair = PlannedResource(urn=PAIR, type="pairedbus:index:NamespacePair", name="pair", inputs={}, custom=False)
    a, b = _queue("a"), _queue("b")
    plan = Plan("shop", "dev", (pair, a, b))
    assert summary(plan) == "2 resources: 2 Queue"
    assert summary(plan, {a.urn: "delete", b.urn: "create", PAIR: "same"}) == (
        "2 resources: 2 Queue; 1 to create, 1 to delete, 1 to same"
    )
