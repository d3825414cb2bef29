"""What `pulumi up` would do to each resource, judged offline against a baseline plan.

By URN, as the engine matches them: new URN -> create, gone -> delete, a create-only input
changed -> replace, any other input changed -> update, else same. Inputs not known offline
(None) are no evidence of a change.
"""

from __future__ import annotations

from typing import Any

from pairedbus.iac.plan.baseline import CREATE_ONLY
from pairedbus.iac.plan.model import Plan, PlannedResource
from pairedbus.rules.namespace import normalise_region


def _differs(prop: str, old: Any, new: Any) -> bool:
    if old is None or new is None:
        return False
    if prop == "location" and isinstance(old, str) and isinstance(new, str):
        return normalise_region(old) != normalise_region(new)
    return old != new or type(old) is not type(new)


def operation(old: PlannedResource, new: PlannedResource) -> str:
    changed = {
        prop
        for prop in old.inputs.keys() | new.inputs.keys()
        if _differs(prop, old.inputs.get(prop, "<absent>"), new.inputs.get(prop, "<absent>"))
    }
    if changed & set(CREATE_ONLY.get(new.type, ())):
        return "replace"
    return "update" if changed else "same"


def operations(baseline: Plan, current: Plan) -> tuple[dict[str, str], tuple[PlannedResource, ...]]:
    """URN -> operation for every resource of both plans, and the baseline's deleted resources."""
    old_by_urn = baseline.by_urn()
    ops = {r.urn: operation(old_by_urn[r.urn], r) if r.urn in old_by_urn else "create" for r in current.resources}
    deleted = tuple(r for r in baseline.resources if r.urn not in ops)
    ops.update({r.urn: "delete" for r in deleted})
    return ops, deleted
