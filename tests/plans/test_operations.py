"""Operations against a baseline, as `pulumi preview` would show them: by URN and by input."""

from __future__ import annotations

from pairedbus.plans.model import Plan, PlannedResource
from pairedbus.plans.operations import operations
from pairedbus.plans.tree import plan_tree, summary

QUEUE = "azure-native:servicebus:Queue"


def _queue(name: str, **inputs) -> PlannedResource:
    return PlannedResource(
        urn=f"urn:pulumi:dev::pairedbus::{QUEUE}::queue-{name}",
        type=QUEUE,
        name=f"queue-{name}",
        inputs={"queueName": name, "namespaceName": "contoso", **inputs},
        custom=True,
    )


def test_each_operation_is_judged_from_the_inputs() -> None:
    baseline = Plan(
        "pairedbus",
        "dev",
        (
            _queue("same", maxSizeInMegabytes=1024),
            _queue("resized", maxSizeInMegabytes=1024),
            _queue("flipped", enablePartitioning=True),
            _queue("gone"),
            _queue("unknown", forwardTo="x"),
        ),
    )
    current = Plan(
        "pairedbus",
        "dev",
        (
            _queue("same", maxSizeInMegabytes=1024),
            _queue("resized", maxSizeInMegabytes=2048),
            _queue("flipped", enablePartitioning=False),
            _queue("new"),
            _queue("unknown", forwardTo=None),  # not known offline: no evidence of a change
        ),
    )
    ops, deleted = operations(baseline, current)
    by_name = {urn.rsplit("-", 1)[-1]: op for urn, op in ops.items()}
    assert by_name == {
        "same": "same",
        "resized": "update",
        "flipped": "replace",
        "new": "create",
        "gone": "delete",
        "unknown": "same",
    }
    assert [r.name for r in deleted] == ["queue-gone"]
    assert summary(current, ops).endswith("; 1 to create, 1 to update, 1 to replace, 1 to delete, 2 to same")


def test_the_tree_marks_each_resource_and_shows_deleted_ones() -> None:
    from rich.console import Console

    baseline = Plan("pairedbus", "dev", (_queue("gone"), _queue("kept")))
    current = Plan("pairedbus", "dev", (_queue("kept"), _queue("new")))
    ops, deleted = operations(baseline, current)
    console = Console(width=120, color_system=None, record=True)
    console.print(plan_tree(current, ops, deleted))
    text = console.export_text()
    assert "+  Queue new" in text and "-  Queue gone" in text and "   Queue kept" in text


def test_a_read_resource_leaving_the_program_is_discarded_not_deleted() -> None:
    """Pulumi's `OpReadDiscard` ("discard", shown as `<`): the state forgets a resource the program only read."""
    from dataclasses import replace

    from rich.console import Console

    baseline = Plan("pairedbus", "dev", (replace(_queue("read"), external=True), _queue("kept")))
    current = Plan("pairedbus", "dev", (_queue("kept"),))
    ops, deleted = operations(baseline, current)
    assert [r.name for r in deleted] == ["queue-read"] and ops[deleted[0].urn] == "discard"
    assert summary(current, ops).endswith("; 1 to discard, 1 to same")
    console = Console(width=120, color_system=None, record=True)
    console.print(plan_tree(current, ops, deleted))
    assert "<  Queue read" in console.export_text()
