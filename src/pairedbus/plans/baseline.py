"""Comparing a plan with an earlier one: which changes would destroy state, and which are allowed.

Four kinds of change are reported, each naming the resource:

- **replace**: a create-only input changed, or the same entity got a new URN (below);
- **delete**: a stateful resource (namespace, queue, topic, subscription, backlog queue) left the
  program without `retainOnDelete`, so `pulumi up` deletes it and its messages; a protected one
  makes `pulumi up` fail instead (the engine refuses to delete it), which is reported the same way;
- **unprotect**: a resource protected in the baseline is not now (`production: true` -> `false`
  unprotects every namespace and entity);
- **retain**: a stateful resource left the program but carries `retainOnDelete` (lowering the
  backlog-queue count): it stays in Azure, unmanaged. Information only, never a failure;
- **forget**: a resource the program only read (`external: true` in the state: `Resource.get`) left the
  program: Pulumi drops it from the state (its `read-discard` step) and deletes nothing. A note, never a
  failure.

The first three fail the gate unless the user passes that kind's flag (`FLAGS`).

Replacing a queue, topic or subscription deletes it with its messages. Partitioning, sessions and
duplicate detection can only be set when an entity is created (partitioning.md; the ARM specs lack
the create-only marker, azure-rest-api-specs#16679, so the provider would try an update the service
rejects, or replace); the names in an entity's ARM path (namespace, entity, resource group) and a
namespace's location or Premium partition count force a new resource. A logical-name change
(new URN, same entity) is a delete plus a create as well, unless the program adds an alias. A value not
known offline is no evidence of a change: an output not yet known (None) and a secret, which both the
render and a state show only as `SECRET_MASK`.

Resources are paired as the engine pairs them (`pairedbus.plans.urns.match_old`): both plans in
the engine's URN form, each current resource with the baseline resource of its URN or, failing
that, of one of its aliases, resolved from the current plan's registrations. A rename an alias
covers is the same resource, not a change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from pairedbus import contract
from pairedbus.plans.model import SECRET_MASK, Plan, PlannedResource
from pairedbus.plans.urns import engine_plan, match_old
from pairedbus.rules.namespace import normalise_region

#: Create-only inputs per resource type (ARM camelCase).
CREATE_ONLY: Final[Mapping[str, tuple[str, ...]]] = {
    contract.TYPE_NAMESPACE: ("namespaceName", "resourceGroupName", "location", "premiumMessagingPartitions"),
    contract.TYPE_QUEUE: (
        "namespaceName",
        "queueName",
        "resourceGroupName",
        "enablePartitioning",
        "requiresSession",
        "requiresDuplicateDetection",
    ),
    contract.TYPE_TOPIC: (
        "namespaceName",
        "topicName",
        "resourceGroupName",
        "enablePartitioning",
        "requiresDuplicateDetection",
    ),
    contract.TYPE_SUBSCRIPTION: (
        "namespaceName",
        "topicName",
        "subscriptionName",
        "resourceGroupName",
        "requiresSession",
    ),
    # The backlog dynamic resources: their provider re-creates the queue when these change.
    contract.TYPE_BACKLOG_QUEUE: ("namespaceName", "queueName", "enablePartitioning"),
    contract.TYPE_DYNAMIC_RESOURCE: ("namespaceName", "queueName", "enablePartitioning"),
}
_ABSENT: Final = object()

ChangeKind = Literal["replace", "delete", "unprotect", "retain", "forget"]
#: The flag of `pairedbus plan` that accepts each blocking kind of change.
FLAGS: Final[Mapping[str, str]] = {
    "replace": "--allow-replace",
    "delete": "--allow-delete",
    "unprotect": "--allow-unprotect",
}


@dataclass(frozen=True)
class BaselineChange:
    """One change of `current` against the baseline: its kind and a line naming the resource."""

    kind: ChangeKind
    message: str

    @property
    def blocking(self) -> bool:
        """Whether it fails the gate unless allowed (a retained resource never does)."""
        return self.kind in FLAGS

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message}


def _is_entity(resource: PlannedResource) -> bool:
    if resource.type not in (contract.TYPE_DYNAMIC_RESOURCE, contract.TYPE_BACKLOG_QUEUE):
        return resource.type in CREATE_ONLY
    return {"queueName", "namespaceName"} <= resource.inputs.keys()


def _identity(resource: PlannedResource) -> tuple[str, ...] | None:
    """What the service knows the entity by; None when a part is not known offline."""
    inputs = resource.inputs
    keys = [k for k in ("namespaceName", "topicName", "queueName", "subscriptionName") if k in inputs]
    values = [inputs[k] for k in keys]
    if not keys or any(not isinstance(v, str) or v == SECRET_MASK for v in values):
        return None
    return (resource.type, *(v.lower() for v in values))


def _label(resource: PlannedResource) -> str:
    inputs = resource.inputs
    for key in ("queueName", "topicName", "namespaceName"):
        value = inputs.get(key)
        if isinstance(value, str):
            sub = inputs.get("subscriptionName")
            return f"{value}/subscriptions/{sub}" if isinstance(sub, str) else value
    return resource.name


def _show(value: Any) -> str:
    return "<absent>" if value is _ABSENT else ("<unknown>" if value is None else repr(value))


def input_changed(prop: str, old: Any, new: Any) -> bool:
    """Whether an input differs between two plans as ARM would see it. None is an output not known offline,
    and `SECRET_MASK` a value not shown: neither is evidence of a change, a mask at any depth (`sku.name`)."""
    if old is None or new is None or old == SECRET_MASK or new == SECRET_MASK:
        return False
    if prop == "location" and isinstance(old, str) and isinstance(new, str):
        return normalise_region(old) != normalise_region(new)  # "West Europe" is "westeurope"
    return _differs(old, new) or type(old) is not type(new)


def _differs(old: Any, new: Any) -> bool:
    """`old != new`, but a mask inside either compares equal to anything."""
    if old == SECRET_MASK or new == SECRET_MASK:
        return False
    if isinstance(old, dict) and isinstance(new, dict):
        return old.keys() != new.keys() or any(_differs(old[k], new[k]) for k in old)
    if isinstance(old, list) and isinstance(new, list):
        return len(old) != len(new) or any(_differs(a, b) for a, b in zip(old, new, strict=True))
    return bool(old != new)


@dataclass(frozen=True)
class Pairing:
    """Both plans in the engine's URN form, and each current URN's baseline resource (`match_old`)."""

    baseline: Plan
    current: Plan
    old_by_urn: Mapping[str, PlannedResource]

    @classmethod
    def of(cls, baseline: Plan, current: Plan) -> Pairing:
        baseline, current = engine_plan(baseline), engine_plan(current)
        return cls(baseline, current, match_old(baseline, current))


def find_replacements(
    baseline: Plan, current: Plan, *, types: Iterable[str] | None = None, pairing: Pairing | None = None
) -> list[str]:
    """One line per change in `current` that would replace an entity or namespace of `baseline`."""
    wanted = set(types) if types is not None else set(CREATE_ONLY)
    pairing = pairing or Pairing.of(baseline, current)
    baseline, current, old_by_urn = pairing.baseline, pairing.current, pairing.old_by_urn
    matched_olds = {old.urn for old in old_by_urn.values()}
    lines: list[str] = []
    for new in current.resources:
        old = old_by_urn.get(new.urn)
        if old is None or new.type not in wanted or not _is_entity(new):
            continue
        for prop in CREATE_ONLY[new.type]:
            before, after = old.inputs.get(prop, _ABSENT), new.inputs.get(prop, _ABSENT)
            if input_changed(prop, before, after):
                lines.append(
                    f"{_label(new)} ({new.type}) would be replaced: {prop} {_show(before)} -> {_show(after)} "
                    "can only be set at creation; replacing deletes its messages"
                )
    # Same entity, new URN: Pulumi deletes the old resource and creates a new one.
    new_identities = {_identity(r): r for r in current.resources if _is_entity(r) and _identity(r) is not None}
    for old in baseline.resources:
        if old.urn in matched_olds or old.type not in wanted or not _is_entity(old):
            continue
        moved = new_identities.get(_identity(old)) if _identity(old) is not None else None
        if moved is not None:
            lines.append(
                f"{_label(old)} ({old.type}) would be replaced: URN {old.urn} -> {moved.urn} "
                "(add an alias to keep the entity and its messages)"
            )
    return lines


def find_deletions(baseline: Plan, current: Plan, *, pairing: Pairing | None = None) -> list[BaselineChange]:
    """Stateful resources of `baseline` that `current` no longer declares (and that did not just
    move to a new URN, which `find_replacements` reports): deleted, refused, or retained."""
    pairing = pairing or Pairing.of(baseline, current)
    baseline, current = pairing.baseline, pairing.current
    current_urns = {old.urn for old in pairing.old_by_urn.values()}
    current_identities = {_identity(r) for r in current.resources if _is_entity(r)} - {None}
    changes: list[BaselineChange] = []
    for old in baseline.resources:
        if old.urn in current_urns or old.type not in CREATE_ONLY or not _is_entity(old):
            continue
        if _identity(old) is not None and _identity(old) in current_identities:
            continue  # same entity under a new URN: a replacement
        what = f"{_label(old)} ({old.type}) leaves the program"
        if old.external:
            message = f"{what}; it was read (external), not created, so Pulumi forgets it and Azure keeps it"
            changes.append(BaselineChange("forget", message))
        elif old.protect:
            message = f"{what}: it is protected, so `pulumi up` refuses; unprotecting it first means it is deleted"
            changes.append(BaselineChange("delete", message))
        elif old.retain_on_delete:
            changes.append(BaselineChange("retain", f"{what} and is retained in Azure (retainOnDelete), unmanaged"))
        else:
            changes.append(BaselineChange("delete", f"{what} and would be deleted with its messages"))
    return changes


def find_unprotections(baseline: Plan, current: Plan, *, pairing: Pairing | None = None) -> list[BaselineChange]:
    """Resources protected in `baseline` and not in `current` (e.g. `production` true -> false)."""
    pairing = pairing or Pairing.of(baseline, current)
    current, old_by_urn = pairing.current, pairing.old_by_urn
    return [
        BaselineChange("unprotect", f"{_label(new)} ({new.type}) loses its protection: protect true -> false")
        for new in current.resources
        if (old := old_by_urn.get(new.urn)) is not None and old.protect and not new.protect
    ]


def compare_plans(baseline: Plan, current: Plan) -> list[BaselineChange]:
    """Every reportable change of `current` against `baseline`: replacements, deletions, lowered
    protection and retained resources, in that order."""
    pairing = Pairing.of(baseline, current)  # once: both plans may hold thousands of resources
    return [
        *(BaselineChange("replace", line) for line in find_replacements(baseline, current, pairing=pairing)),
        *find_deletions(baseline, current, pairing=pairing),
        *find_unprotections(baseline, current, pairing=pairing),
    ]
