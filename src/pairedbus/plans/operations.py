"""What `pulumi up` would do to each resource, judged offline against a baseline plan.

Matched as the engine matches them (`urns.match_old`: by URN, then by alias): unmatched new ->
create, unmatched old -> delete (or discard, for a resource the program only read: Pulumi's
`read-discard` step forgets it and deletes nothing), a change of an input the provider replaces on ->
replace, any other change -> update, else same. Inputs are compared property by property as the engine
would (`plans.diff`): a value not known offline, or one the mocks derived, is no evidence of a change.
"""

from __future__ import annotations

from dataclasses import dataclass

from pairedbus.plans.baseline import ResourceMatch
from pairedbus.plans.diff import PropertyChange
from pairedbus.plans.model import Plan, PlannedResource


@dataclass(frozen=True)
class Operations:
    """URN -> operation for every resource of both plans, each current resource's property changes (by its
    URN in the current plan), and the baseline's deleted resources in the engine's URN form."""

    by_urn: dict[str, str]
    changes: dict[str, tuple[PropertyChange, ...]]
    deleted: tuple[PlannedResource, ...]


def judge(baseline: Plan, current: Plan, *, match: ResourceMatch | None = None) -> Operations:
    """Every operation and property change of `current` against `baseline` (`match`: theirs, when already made)."""
    match = match or ResourceMatch.of(baseline, current)
    ops: dict[str, str] = {}
    changes: dict[str, tuple[PropertyChange, ...]] = {}
    claimed: set[str] = set()
    # engine_plan keeps the order of the resources: pair each engine form with the resource it came from.
    for engine, resource in zip(match.current.resources, current.resources, strict=True):
        ops[resource.urn] = match.operation(engine.urn)
        if match.changes.get(engine.urn):
            changes[resource.urn] = match.changes[engine.urn]
        old = match.old_by_urn.get(engine.urn)
        if old is not None:
            claimed.add(old.urn)
    deleted = tuple(e for e in match.baseline.resources if e.urn not in claimed)
    ops.update({r.urn: "discard" if r.external else "delete" for r in deleted if r.urn not in ops})
    return Operations(ops, changes, deleted)


def operations(baseline: Plan, current: Plan) -> tuple[dict[str, str], tuple[PlannedResource, ...]]:
    """URN -> operation for every resource of both plans, and the baseline's deleted resources: the
    current plan's under its own URNs, the deleted ones in the engine's URN form (show them beside
    `engine_plan(current)` to see them under their components)."""
    judged = judge(baseline, current)
    return judged.by_urn, judged.deleted
