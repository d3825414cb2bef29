"""Comparing a plan with an earlier one: which changes would destroy state, and which are allowed.

Four kinds of change are reported, each naming the resource:

- **replace**: an input changed that makes the provider replace the resource (`plans.replacements`: for
  azure-native the provider's own metadata, for every type the program uses), or the same entity got a new
  URN (below), or a setting the service fixes at creation changed (`replacements.SERVICE_CREATE_ONLY`: the
  provider tries an update the service refuses);
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

Replacing a queue, topic or subscription deletes it with its messages; replacing a resource group deletes
everything in it (ARM cannot move a resource group: a new location is a new group). A logical-name change
(new URN, same entity) is a delete plus a create as well, unless the program adds an alias. Inputs are compared
property by property as the engine would (`plans.diff`): a value not known offline, or one the mocks derived
from another resource's computed outputs, is no evidence of a change.

Resources are matched as the engine matches them (`pairedbus.plans.urns.match_old`): both plans in
the engine's URN form, each current resource with the baseline resource of its URN or, failing
that, of one of its aliases, resolved from the current plan's registrations. A rename an alias
covers is the same resource, not a change.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from pairedbus import contract
from pairedbus.plans.diff import UNKNOWN, PropertyChange, diff_inputs, operation
from pairedbus.plans.model import SECRET_MASK, Plan, PlannedResource
from pairedbus.plans.replacements import SERVICE_CREATE_ONLY
from pairedbus.plans.urns import engine_plan, match_old

#: The types whose resources hold messages: leaving the program deletes them, a new URN replaces them.
STATEFUL_TYPES: Final = frozenset(
    {
        contract.TYPE_NAMESPACE,
        contract.TYPE_QUEUE,
        contract.TYPE_TOPIC,
        contract.TYPE_SUBSCRIPTION,
        contract.TYPE_BACKLOG_QUEUE,
        contract.TYPE_DYNAMIC_RESOURCE,
    }
)
_RESOURCE_GROUP: Final = "azure-native:resources:ResourceGroup"

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
        return resource.type in STATEFUL_TYPES
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
    if value is UNKNOWN:
        return "<unknown until deployed>"
    return "<absent>" if value is None else repr(value)


def _consequence(resource: PlannedResource) -> str:
    if resource.type == _RESOURCE_GROUP:
        return "ARM cannot change it in place; replacing a resource group deletes every resource in it"
    if resource.type in STATEFUL_TYPES:
        return "replacing deletes its messages"
    return "replacing deletes it and creates a new one"


@dataclass(frozen=True)
class ResourceMatch:
    """Both plans in the engine's URN form, each current URN's baseline resource (`match_old`), and each
    matched resource's property changes (`plans.diff`), judged upstream first: an input fed by a resource
    that is created or replaced takes a new value, known only once deployed."""

    baseline: Plan
    current: Plan
    old_by_urn: Mapping[str, PlannedResource]
    changes: Mapping[str, tuple[PropertyChange, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, baseline: Plan, current: Plan) -> ResourceMatch:
        baseline, current = engine_plan(baseline), engine_plan(current)
        old_by_urn = match_old(baseline, current)
        return cls(baseline, current, old_by_urn, _judge(current, old_by_urn))

    def operation(self, urn: str) -> str:
        """create, replace, update or same, for a current resource."""
        return "create" if urn not in self.old_by_urn else operation(self.changes.get(urn, ()))


def _judge(current: Plan, old_by_urn: Mapping[str, PlannedResource]) -> dict[str, tuple[PropertyChange, ...]]:
    by_urn = current.by_urn()
    changes: dict[str, tuple[PropertyChange, ...]] = {}
    visiting: set[str] = set()

    def new_value(urn: str) -> bool:
        """Whether the resource is created or replaced: its computed outputs (ids, principal ids) are new."""
        if urn not in by_urn:
            return False  # not of this plan (the root stack, another stack's resource): nothing new
        if urn not in old_by_urn:
            return True
        return operation(judge(urn)) == "replace"

    def judge(urn: str) -> tuple[PropertyChange, ...]:
        if urn in changes or urn in visiting:
            return changes.get(urn, ())  # a cycle cannot come from the engine; never loop on one
        visiting.add(urn)
        new, old = by_urn[urn], old_by_urn[urn]
        renewed = [key for key, deps in new.property_dependencies.items() if any(new_value(d) for d in deps)]
        changes[urn] = diff_inputs(old, new, renewed=renewed)
        visiting.discard(urn)
        return changes[urn]

    for urn in old_by_urn:
        if urn in by_urn:
            judge(urn)
    return changes


def find_replacements(
    baseline: Plan, current: Plan, *, types: Iterable[str] | None = None, match: ResourceMatch | None = None
) -> list[str]:
    """One line per change in `current` that replaces a resource of `baseline` (every type, or `types`), or
    that the service refuses on an existing entity."""
    wanted = set(types) if types is not None else None
    match = match or ResourceMatch.of(baseline, current)
    return [*_replaced_in_place(match, wanted), *_moved_to_new_urns(match, wanted)]


def _replaced_in_place(match: ResourceMatch, wanted: set[str] | None) -> Iterator[str]:
    """Same URN: a change the provider replaces for, or one Service Bus only takes at creation."""
    for new in match.current.resources:
        if new.urn not in match.old_by_urn or (wanted is not None and new.type not in wanted):
            continue
        fixed = SERVICE_CREATE_ONLY.get(new.type, ())
        for change in match.changes.get(new.urn, ()):
            change_text = f"{change.path} {_show(change.old)} -> {_show(change.new)}"
            if change.replaces:
                yield f"{_label(new)} ({new.type}) would be replaced: {change_text}; {_consequence(new)}"
            elif change.path.split(".", 1)[0].split("[", 1)[0] in fixed:
                yield (
                    f"{_label(new)} ({new.type}): {change_text} can only be set at creation; the provider would "
                    "try an update, which Service Bus refuses: only a new one (deleting this one and its messages) "
                    "takes it"
                )


def _moved_to_new_urns(match: ResourceMatch, wanted: set[str] | None) -> Iterator[str]:
    """Same entity, new URN: Pulumi deletes the old resource and creates a new one."""
    matched_olds = {old.urn for old in match.old_by_urn.values()}
    new_identities = {_identity(r): r for r in match.current.resources if _is_entity(r) and _identity(r) is not None}
    for old in match.baseline.resources:
        if old.urn in matched_olds or (wanted is not None and old.type not in wanted) or not _is_entity(old):
            continue
        moved = new_identities.get(_identity(old)) if _identity(old) is not None else None
        if moved is not None:
            yield (
                f"{_label(old)} ({old.type}) would be replaced: URN {old.urn} -> {moved.urn} "
                "(add an alias to keep the entity and its messages)"
            )


def find_deletions(baseline: Plan, current: Plan, *, match: ResourceMatch | None = None) -> list[BaselineChange]:
    """Stateful resources of `baseline` that `current` no longer declares (and that did not just
    move to a new URN, which `find_replacements` reports): deleted, refused, or retained."""
    match = match or ResourceMatch.of(baseline, current)
    baseline, current = match.baseline, match.current
    current_urns = {old.urn for old in match.old_by_urn.values()}
    current_identities = {_identity(r) for r in current.resources if _is_entity(r)} - {None}
    changes: list[BaselineChange] = []
    for old in baseline.resources:
        if old.urn in current_urns or not _is_entity(old):
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


def find_unprotections(baseline: Plan, current: Plan, *, match: ResourceMatch | None = None) -> list[BaselineChange]:
    """Resources protected in `baseline` and not in `current` (e.g. `production` true -> false)."""
    match = match or ResourceMatch.of(baseline, current)
    current, old_by_urn = match.current, match.old_by_urn
    return [
        BaselineChange("unprotect", f"{_label(new)} ({new.type}) loses its protection: protect true -> false")
        for new in current.resources
        if (old := old_by_urn.get(new.urn)) is not None and old.protect and not new.protect
    ]


def compare_plans(baseline: Plan, current: Plan, *, match: ResourceMatch | None = None) -> list[BaselineChange]:
    """Every reportable change of `current` against `baseline`: replacements, deletions, lowered
    protection and retained resources, in that order (`match`: theirs, when already made)."""
    match = match or ResourceMatch.of(baseline, current)  # once: both plans may hold thousands of resources
    return [
        *(BaselineChange("replace", line) for line in find_replacements(baseline, current, match=match)),
        *find_deletions(baseline, current, match=match),
        *find_unprotections(baseline, current, match=match),
    ]
