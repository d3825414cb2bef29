"""The Pulumi engine's alias resolution, offline: which old URN of a stack each registration of a program claims.

A faithful port of the step generator (pulumi/pulumi, pkg/resource/deploy/step_generator.go: `generateAliases`,
`collapseAliasToUrn`, `inheritedChildAlias`, and the lookup in `generateSteps`): a resource's own alias specs
collapse to URNs (name and type default to its own, parent to its current parent unless the spec says none);
when its parent matched an old resource through an alias, the child also gets the inherited aliases, its own
name and each of its aliases' names under the parent's old URN, with the parent's old name in place of the new
one where the child's name starts with the parent's (the `{name}-details` convention). The first of (its URN,
its aliases) that the old state holds is what it becomes; claiming an old URN twice is the engine's error.
"""

from __future__ import annotations

from typing import Any

from pairedbus.iac.render.mocks import PlanMocks
from pairedbus.iac.render.program import RecordingMonitor
from tests.iac.render.engine_urns import STACK_TYPE, engine_plan, engine_urn


class AliasRecordingMonitor(RecordingMonitor):
    """Also keeps, per registration (mock URN), the alias specs it carried to the engine."""

    def __init__(self) -> None:
        super().__init__(PlanMocks())
        self.alias_specs: dict[str, list[Any]] = {}

    def RegisterResource(self, request: Any) -> Any:
        urn = self.make_urn(request.parent, request.type, request.name)
        self.alias_specs[urn] = [a.spec for a in request.aliases if a.HasField("spec")]
        assert all(a.HasField("spec") for a in request.aliases), "aliases reach the engine as specs"
        return super().RegisterResource(request)


def _chain(urn: str) -> list[str]:
    return urn.rpartition("::")[0].rpartition("::")[2].split("$")


def _name(urn: str) -> str:
    return urn.rpartition("::")[2]


def resolve(plan: dict[str, Any], specs: dict[str, list[Any]], olds: set[str]) -> dict[str, str | None]:
    """Engine URN of each resource of `plan` (a mock-URN plan) -> the old URN it takes over (its own when the
    old state holds it), or None: created. Raises AssertionError where the engine would refuse."""
    project, stack = plan["project"], plan["stack"]
    engine = {r["urn"]: r for r in engine_plan(plan)["resources"]}
    mock_to_engine = {
        mock["urn"]: converted for mock, converted in zip(plan["resources"], _converted(plan), strict=True)
    }
    matched: dict[str, str] = {}  # engine URN -> the old URN it matched through an alias
    claimed: dict[str, str] = {}  # old URN -> the engine URN that claimed it
    result: dict[str, str | None] = {}
    by_depth = sorted(plan["resources"], key=lambda r: len(_chain(mock_to_engine[r["urn"]])))
    for mock in by_depth:
        urn = mock_to_engine[mock["urn"]]
        resource = engine[urn]
        parent = resource["parent"]

        def collapse(spec: Any, resource: dict[str, Any] = resource, parent: str | None = parent) -> str:
            name = spec.name or resource["name"]
            type_ = spec.type or resource["type"]
            above = parent
            if spec.parentUrn:
                above = mock_to_engine.get(spec.parentUrn)
                above = matched.get(above, above) if above else None
            if spec.noParent or (above is not None and _chain(above)[-1] == STACK_TYPE):
                above = None
            chain = [*(_chain(above) if above else []), type_]
            return engine_urn(project, stack, chain, name)

        def inherited(type_: str, name: str, parent_alias: str, parent: str = parent) -> str:  # type: ignore[assignment]
            parent_name = _name(parent)
            alias_name = _name(parent_alias) + name[len(parent_name) :] if name.startswith(parent_name) else name
            return engine_urn(project, stack, [*_chain(parent_alias), type_], alias_name)

        own = [collapse(spec) for spec in specs.get(mock["urn"], [])]
        aliases = list(own)
        if parent is not None and parent in matched:
            aliases.append(inherited(resource["type"], resource["name"], matched[parent]))
            aliases += [inherited(_chain(alias)[-1], _name(alias), matched[parent]) for alias in own]
        result[urn] = None
        for candidate in [urn, *aliases]:
            if candidate in olds:
                if candidate != urn:
                    assert candidate not in claimed, f"{urn} and {claimed.get(candidate)} both claim {candidate}"
                    claimed[candidate] = urn
                    matched[urn] = candidate
                result[urn] = candidate
                break
    return result


def _converted(plan: dict[str, Any]) -> list[str]:
    """The engine URN of each resource of a mock-URN plan, in the plan's order."""
    from tests.iac.render.engine_urns import _chains

    chains = _chains(plan["resources"])
    return [engine_urn(plan["project"], plan["stack"], chains[r["urn"]], r["name"]) for r in plan["resources"]]
