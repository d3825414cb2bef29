"""URNs as the Pulumi engine makes them, and aliases resolved as the engine resolves them.

Pulumi's mock monitor (which `pairedbus plan` renders with) builds a URN from the parent's *last*
type only (`pulumi/runtime/mocks.py`, `MockMonitor.make_urn`); the engine builds it from the whole
chain of parent types below the root stack (`resource.NewURN`/`CreateURN` in
`sdk/go/common/resource/urn.go`). A state export holds engine URNs, so a plan compared with one is
first put into the engine's form (`engine_plan`); the rewrite is idempotent, so an engine-form plan
is left as it is.

Aliases follow the engine's step generator (pulumi/pulumi `pkg/resource/deploy/step_generator.go`,
`collapseAliasToUrn`, `inheritedChildAlias`, `generateAliases`, `getOldResource`): a resource is
matched with the old resource of its own URN first, then of each alias URN; an alias spec's empty
name, type, project or stack default to the resource's own; a child inherits an alias for every
parent that matched an old resource under another URN, with the parent's old name swapped into a
child name that starts with the parent's name.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pairedbus.plans.model import Plan, PlannedResource

ROOT_STACK_TYPE: Final = "pulumi:pulumi:Stack"
#: What a stack or project name may hold (Pulumi's `tokens.ValidateProjectName` and stack-name rule:
#: "alphanumerics, hyphens, underscores, and periods", at most 100 characters).
_NAME_TOKEN: Final = re.compile(r"[A-Za-z0-9_.-]{1,100}")
#: C0 controls, DEL and C1 controls: a URN holding one was not written by Pulumi, and would reach a terminal.
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def parse_urn(urn: str) -> tuple[str, str, str, str] | None:
    """(stack, project, qualified type, name) of `urn:pulumi:STACK::PROJECT::QTYPE::NAME`, or None.

    The name may itself contain `::` (Pulumi allows it), so only the first three separators split.
    """
    if not isinstance(urn, str) or not urn.startswith("urn:pulumi:"):
        return None
    parts = urn[len("urn:pulumi:") :].split("::", 3)
    if len(parts) != 4 or not all(parts[:3]):
        return None
    stack, project, qualified, name = parts
    return stack, project, qualified, name


def urn_problem(urn: str) -> str | None:
    """Why Pulumi would never write `urn`, or None: a control character anywhere, not the shape
    `urn:pulumi:STACK::PROJECT::TYPE::NAME`, a stack or project name Pulumi refuses, or an empty type in the
    parent chain (`a:b:C$$d:e:F`)."""
    control = _CONTROL.search(urn)
    if control:
        return f"a control character (U+{ord(control.group()):04X}) in the URN, which Pulumi never writes"
    parsed = parse_urn(urn)
    if parsed is None:
        return f"expected a Pulumi URN (urn:pulumi:STACK::PROJECT::TYPE::NAME), got {_shown(urn)}"
    stack, project, qualified, _name = parsed
    for what, value in (("stack", stack), ("project", project)):
        if not _NAME_TOKEN.fullmatch(value):
            return f"{what} {_shown(value)} is not a Pulumi {what} name (letters, digits, -, _, .; at most 100)"
    if not all(qualified.split("$")):
        return f"an empty type in the type chain {_shown(qualified)}"
    return None


def _shown(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def make_urn(stack: str, project: str, parent_qualified: str | None, type_: str, name: str) -> str:
    """`resource.NewURN`: the parent's qualified type joined with `$`, except the root stack's."""
    qualified = f"{parent_qualified}${type_}" if parent_qualified and parent_qualified != ROOT_STACK_TYPE else type_
    return f"urn:pulumi:{stack}::{project}::{qualified}::{name}"


def _qualified(urn: str) -> str | None:
    parsed = parse_urn(urn)
    return parsed[2] if parsed else None


def engine_plan(plan: Plan) -> Plan:
    """The plan keyed and linked by engine URNs: its own, parents, dependencies, providers and alias
    specs' parents. A parent that is not a resource of the plan (the root stack) becomes None."""
    by_urn = plan.by_urn()
    engine: dict[str, str] = {}

    def convert(urn: str) -> str:
        if urn not in engine:
            resource = by_urn[urn]
            parent = resource.parent if resource.parent in by_urn else None
            # Iterative over deep chains: a hostile plan must not exhaust the stack.
            chain = []
            seen = set()
            cursor: str | None = parent
            while cursor is not None and cursor in by_urn and cursor not in engine and cursor not in seen:
                seen.add(cursor)
                chain.append(cursor)
                up = by_urn[cursor].parent
                cursor = up if up in by_urn else None
            for ancestor in reversed(chain):
                above = by_urn[ancestor].parent
                engine[ancestor] = _engine_urn(plan, by_urn[ancestor], engine.get(above) if above else None)
            engine[urn] = _engine_urn(plan, resource, engine.get(parent) if parent else None)
        return engine[urn]

    def link(urn: str | None) -> str | None:
        if urn is None:
            return None
        if urn in by_urn:
            return convert(urn)
        # A provider reference `<urn>::<id>` keeps its id.
        head, sep, tail = urn.rpartition("::")
        if sep and head in by_urn:
            return f"{convert(head)}::{tail}"
        return None if _qualified(urn) == ROOT_STACK_TYPE else urn

    resources = []
    for resource in plan.resources:
        resources.append(
            dataclasses.replace(
                resource,
                urn=convert(resource.urn),
                parent=link(resource.parent),
                dependencies=tuple(sorted(u for u in map(link, resource.dependencies) if u)),
                property_dependencies={
                    k: tuple(sorted(u for u in map(link, v) if u)) for k, v in resource.property_dependencies.items()
                },
                provider=link(resource.provider),
                alias_specs=tuple(_link_spec(spec, link) for spec in resource.alias_specs),
            )
        )
    return dataclasses.replace(plan, resources=tuple(resources))


def _engine_urn(plan: Plan, resource: PlannedResource, parent_urn: str | None) -> str:
    return make_urn(
        plan.stack, plan.project, _qualified(parent_urn) if parent_urn else None, resource.type, resource.name
    )


def _link_spec(spec: Mapping[str, Any], link: Any) -> dict[str, Any]:
    spec = dict(spec)
    if spec.get("parentUrn"):
        linked = link(spec.pop("parentUrn"))
        if linked:
            spec["parentUrn"] = linked
        else:
            spec["noParent"] = True  # the root stack as the parent: no parent in the engine's URN
    return spec


def alias_spec_json(alias: Any) -> dict[str, Any]:
    """One `pulumirpc.Alias` of a RegisterResource request as the plan records it (`PlannedResource.alias_specs`):
    `{"urn": ...}`, or the spec's non-empty fields. The Python SDK sends an empty `parentUrn` for "the
    resource's own parent" (the engine reads it so too: source_eval.go), so an empty one is left out."""
    if alias.HasField("spec"):
        spec = alias.spec
        data: dict[str, Any] = {k: getattr(spec, k) for k in ("name", "type", "stack", "project") if getattr(spec, k)}
        which = spec.WhichOneof("parent")
        if which == "parentUrn" and spec.parentUrn:
            data["parentUrn"] = spec.parentUrn
        elif which == "noParent" and spec.noParent:
            data["noParent"] = True
        return data
    return {"urn": alias.urn}


# --- Aliases --------------------------------------------------------------------------------


def _collapse(resource: PlannedResource, spec: Mapping[str, Any], plan: Plan, old_of: Mapping[str, str]) -> str:
    """`collapseAliasToUrn`: one alias spec as a URN, in the plan's (engine) URN space."""
    if spec.get("urn"):
        return str(spec["urn"])
    name = spec.get("name") or resource.name
    type_ = spec.get("type") or resource.type
    parent = spec.get("parentUrn") or resource.parent or ""
    if spec.get("parentUrn") and parent in old_of:
        parent = old_of[parent]  # a parent that matched under an alias: that is the child's old parent too
    if spec.get("noParent") or (parent and _qualified(parent) == ROOT_STACK_TYPE):
        parent = ""
    return make_urn(
        spec.get("stack") or plan.stack,
        spec.get("project") or plan.project,
        _qualified(parent) if parent else None,
        type_,
        name,
    )


def _inherited(type_: str, name: str, parent_name: str, parent_alias: str, plan: Plan) -> str:
    """`inheritedChildAlias`: the child under its parent's old URN, `{parent}-x` renamed with it."""
    parsed = parse_urn(parent_alias)
    alias_name = name
    if parsed and name.startswith(parent_name):
        alias_name = parsed[3] + name[len(parent_name) :]
    return make_urn(plan.stack, plan.project, parsed[2] if parsed else None, type_, alias_name)


def alias_urns(resource: PlannedResource, plan: Plan, old_of: Mapping[str, str]) -> list[str]:
    """`generateAliases`: every URN the resource may have had, given which old URN each of its
    ancestors matched (`old_of`: new URN -> old URN, only where they differ)."""
    result: list[str] = []

    def add(urn: str) -> None:
        if urn not in result:
            result.append(urn)

    collapsed = [_collapse(resource, spec, plan, old_of) for spec in resource.alias_specs]
    for urn in collapsed:
        add(urn)
    parent = resource.parent
    if parent and parent in old_of:
        parsed = parse_urn(parent)
        parent_name = parsed[3] if parsed else ""
        add(_inherited(resource.type, resource.name, parent_name, old_of[parent], plan))
        for urn in collapsed:
            parsed = parse_urn(urn)
            if parsed:
                add(_inherited(parsed[2].rsplit("$", 1)[-1], parsed[3], parent_name, old_of[parent], plan))
    return result


def match_old(baseline: Plan, current: Plan) -> dict[str, PlannedResource]:
    """New URN -> the baseline resource the engine would take it to be (`getOldResource`): by its own
    URN first, then by its aliases; each old resource is claimed at most once. Parents are
    registered before their children, so the plan is walked parents first."""
    olds = baseline.by_urn()
    matched: dict[str, PlannedResource] = {}
    old_of: dict[str, str] = {}
    claimed: set[str] = set()
    for resource in _parents_first(current.resources):
        candidates = (
            [resource.urn, *alias_urns(resource, current, old_of)]
            if resource.alias_specs or (resource.parent in old_of)
            else [resource.urn]
        )
        for urn in candidates:
            if urn in olds and urn not in claimed:
                matched[resource.urn] = olds[urn]
                claimed.add(urn)
                if urn != resource.urn:
                    old_of[resource.urn] = urn
                break
    return matched


def _parents_first(resources: Sequence[PlannedResource]) -> list[PlannedResource]:
    by_urn = {r.urn: r for r in resources}
    depth: dict[str, int] = {}
    for resource in resources:
        chain, cursor = [], resource.urn
        while cursor in by_urn and cursor not in depth and cursor not in chain:
            chain.append(cursor)
            cursor = by_urn[cursor].parent or ""
        base = depth.get(cursor, -1)
        for offset, urn in enumerate(reversed(chain), start=1):
            depth[urn] = base + offset
    return sorted(resources, key=lambda r: depth.get(r.urn, 0))
