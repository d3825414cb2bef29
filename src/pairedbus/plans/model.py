"""What an offline render of the Pulumi program produces: the resources it would register."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Final

#: How a plan holds a secret value (the render's and a state's alike): shown as it is, never compared, since
#: the value behind it is not known offline (`baseline.input_changed`). A real value of exactly this text
#: is taken for a mask too: the price of a plan that stays plain JSON.
SECRET_MASK: Final = "[secret]"


@dataclass(frozen=True)
class PlannedResource:
    """One resource registration as the engine receives it.

    `inputs` carry the engine's property names (camelCase, e.g. `enablePartitioning`); a value not
    known until deployment (an output of another resource) is None, a secret is `SECRET_MASK`.
    `parent` and `dependencies` are URNs of other planned resources.
    """

    urn: str
    type: str
    name: str
    inputs: dict[str, Any]
    custom: bool
    parent: str | None = None
    dependencies: tuple[str, ...] = ()
    property_dependencies: dict[str, tuple[str, ...]] = field(default_factory=dict)
    protect: bool = False
    retain_on_delete: bool = False
    provider: str | None = None
    #: How many aliases (type or name history) the registration carried to the engine.
    aliases: int = 0
    #: The registration's alias specs as the engine receives them (`pulumirpc.Alias`), in JSON:
    #: `{"urn": ...}` or any of `name`, `type`, `stack`, `project`, `parentUrn`, `noParent`
    #: (`urns.alias_spec_json`). The baseline comparison resolves them into previous URNs the way the
    #: engine does (`pairedbus.plans.urns`); empty when the render did not record them.
    alias_specs: tuple[dict[str, Any], ...] = ()
    #: Read, not managed (`external: true` in a state: `Resource.get`): leaving the program, Pulumi forgets it
    #: and deletes nothing.
    external: bool = False
    #: Paths of inputs whose value the mocks derived from another resource's computed output (an ARM id, a
    #: principal id, an endpoint): made up offline, so no evidence of a change (`plans.diff`).
    derived: tuple[str, ...] = ()
    #: The registration's `ignore_changes` (after transforms): paths whose change the engine does not apply.
    ignore_changes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["dependencies"] = list(self.dependencies)
        data["property_dependencies"] = {k: list(v) for k, v in self.property_dependencies.items()}
        # Not written: only the *current* plan's aliases pair resources (a baseline's never do), and every
        # azure-native resource carries a dozen versioned type aliases; `aliases` keeps their count.
        del data["alias_specs"]
        for key in ("external", "derived", "ignore_changes"):
            if not data[key]:
                del data[key]  # what most registrations carry: the plan JSON is as it was
            elif isinstance(data[key], tuple):
                data[key] = list(data[key])
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PlannedResource:
        return cls(
            **{
                **data,
                "dependencies": tuple(data.get("dependencies", ())),
                "property_dependencies": {k: tuple(v) for k, v in data.get("property_dependencies", {}).items()},
                "alias_specs": tuple(dict(spec) for spec in data.get("alias_specs", ())),
                "derived": tuple(data.get("derived", ())),
                "ignore_changes": tuple(data.get("ignore_changes", ())),
            }
        )


@dataclass(frozen=True)
class Plan:
    project: str
    stack: str
    resources: tuple[PlannedResource, ...]
    outputs: dict[str, Any] = field(default_factory=dict)
    #: What the program logged as warnings (`pulumi.log.warn`), once each, in order.
    warnings: tuple[str, ...] = ()

    def by_urn(self) -> dict[str, PlannedResource]:
        return {r.urn: r for r in self.resources}

    def of_type(self, type_: str) -> list[PlannedResource]:
        return [r for r in self.resources if r.type == type_]

    def to_json(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "stack": self.stack,
            "offline_render": True,
            "resources": [r.to_json() for r in self.resources],
            "outputs": self.outputs,
            **({"warnings": list(self.warnings)} if self.warnings else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Plan:
        return cls(
            project=data["project"],
            stack=data["stack"],
            resources=tuple(PlannedResource.from_json(r) for r in data["resources"]),
            outputs=data.get("outputs", {}),
            warnings=tuple(data.get("warnings", ())),
        )
