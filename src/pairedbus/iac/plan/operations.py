"""What `pulumi up` would do to each resource, judged offline against a baseline plan.

Matched as the engine matches them (`urns.match_old`: by URN, then by alias): unmatched new ->
create, unmatched old -> delete (or discard, for a resource the program only read: Pulumi's
`read-discard` step forgets it and deletes nothing), a create-only input changed -> replace, any
other input changed -> update, else same. Inputs not known offline (None, or a secret's mask) are no
evidence of a change.
"""

from __future__ import annotations

from pairedbus.plans.baseline import CREATE_ONLY, input_changed
from pairedbus.plans.model import Plan, PlannedResource
from pairedbus.plans.urns import engine_plan, match_old


def operation(old: PlannedResource, new: PlannedResource) -> str:
    changed = {
        prop
        for prop in old.inputs.keys() | new.inputs.keys()
        if input_changed(prop, old.inputs.get(prop, "<absent>"), new.inputs.get(prop, "<absent>"))
    }
    if changed & set(CREATE_ONLY.get(new.type, ())):
        return "replace"
    return "update" if changed else "same"


def operations(baseline: Plan, current: Plan) -> tuple[dict[str, str], tuple[PlannedResource, ...]]:
    """URN -> operation for every resource of both plans, and the baseline's deleted resources: the
    current plan's under its own URNs, the deleted ones in the engine's URN form (show them beside
    `engine_plan(current)` to see them under their components)."""
    old_engine, new_engine = engine_plan(baseline), engine_plan(current)
    matched = match_old(old_engine, new_engine)
    ops: dict[str, str] = {}
    claimed: set[str] = set()
    # engine_plan keeps the order of the resources: pair each engine form with the resource it came from.
    for engine, resource in zip(new_engine.resources, current.resources, strict=True):
        old = matched.get(engine.urn)
        ops[resource.urn] = "create" if old is None else operation(old, engine)
        if old is not None:
            claimed.add(old.urn)
    deleted = tuple(e for e in old_engine.resources if e.urn not in claimed)
    ops.update({r.urn: "discard" if r.external else "delete" for r in deleted if r.urn not in ops})
    return ops, deleted
