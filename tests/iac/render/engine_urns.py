"""Plans with the URNs the Pulumi engine would give, and a comparison that ignores only component type names.

Pulumi's mock monitor makes simplified URNs (the parent's type only, the root stack's type included); the
engine's URN holds the whole chain of parent types below the stack. `engine_plan` rewrites a plan's URNs
(own, parent, dependencies) into the engine's form, so that plans of different component nestings compare.

Reference plans: `python -m tests.iac.render.engine_urns PLAN.json > tests/iac/fixtures/plans/<name>.json`.
"""

from __future__ import annotations

import json
import sys
from typing import Any

STACK_TYPE = "pulumi:pulumi:Stack"


def _chains(resources: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Mock URN -> the engine's type chain of that resource."""
    by_urn = {r["urn"]: r for r in resources}
    chains: dict[str, list[str]] = {}

    def chain(urn: str) -> list[str]:
        if urn not in chains:
            resource = by_urn[urn]
            parent = resource.get("parent")
            above = chain(parent) if parent in by_urn else []
            chains[urn] = [*above, resource["type"]]
        return chains[urn]

    for resource in resources:
        chain(resource["urn"])
    return chains


def engine_urn(project: str, stack: str, chain: list[str], name: str) -> str:
    return f"urn:pulumi:{stack}::{project}::{'$'.join(chain)}::{name}"


def engine_plan(plan: dict[str, Any]) -> dict[str, Any]:
    """The plan's resources keyed and linked by engine URNs; the root stack as a parent becomes None."""
    resources = plan["resources"]
    chains = _chains(resources)
    names = {r["urn"]: r["name"] for r in resources}

    def real(urn: str | None) -> str | None:
        if urn is None or urn not in chains:
            return None  # the root stack
        return engine_urn(plan["project"], plan["stack"], chains[urn], names[urn])

    converted = []
    for resource in resources:
        converted.append(
            {
                **resource,
                "urn": real(resource["urn"]),
                "parent": real(resource.get("parent")),
                "dependencies": sorted(u for u in map(real, resource["dependencies"]) if u),
                "property_dependencies": {
                    k: sorted(u for u in map(real, v) if u)
                    for k, v in sorted(resource["property_dependencies"].items())
                },
            }
        )
    converted.sort(key=lambda r: r["urn"])
    return {"project": plan["project"], "stack": plan["stack"], "resources": converted, "outputs": plan["outputs"]}


def without_component(plan: dict[str, Any], component_type: str) -> dict[str, Any]:
    """The engine plan as if `component_type` did not exist: dropped, and its name left out of every URN's
    type chain (its children's parent becomes the root stack). Nothing else changes."""

    def strip(urn: str | None) -> str | None:
        if urn is None:
            return None
        head, _, name = urn.rpartition("::")
        prefix, _, chain = head.rpartition("::")
        return f"{prefix}::{'$'.join(t for t in chain.split('$') if t != component_type)}::{name}"

    dropped = {r["urn"] for r in plan["resources"] if r["type"] == component_type}
    resources = []
    for resource in plan["resources"]:
        if resource["type"] == component_type:
            continue
        resources.append(
            {
                **resource,
                "urn": strip(resource["urn"]),
                "parent": None if resource["parent"] in dropped else strip(resource["parent"]),
                "dependencies": sorted(strip(u) for u in resource["dependencies"] if u not in dropped),
                "property_dependencies": {
                    k: sorted(strip(u) for u in v if u not in dropped)
                    for k, v in resource["property_dependencies"].items()
                },
            }
        )
    return {**plan, "resources": sorted(resources, key=lambda r: r["urn"])}


if __name__ == "__main__":
    with open(sys.argv[1]) as source:
        json.dump(engine_plan(json.load(source)), sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
