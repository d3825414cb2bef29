"""Reading a `--baseline`: a plan (`pairedbus plan --json`) or what is deployed (`pulumi stack export`).

A state export is Pulumi's deployment format, version 3 (pulumi/pulumi `sdk/go/common/apitype/core.go`:
`UntypedDeployment` `{"version", "deployment"}`, `DeploymentV3` `{"manifest", "resources", ...}`,
`ResourceV3` `{"urn", "custom", "id", "type", "inputs", "outputs", "parent", "protect", "retainOnDelete",
"provider", "dependencies", "propertyDependencies", "aliases", "delete", ...}`; the JSON schemas
`deployments.json` and `resources.json` beside it). Other versions are refused by name: version 4
exists for deployments that need features an older CLI must not read.

A baseline is hostile input until checked: every field has the type the schema gives it (a boolean
is `true` or `false`, never the string `"false"`), nothing is nested deeper than `MAX_STATE_DEPTH`, every
URN is a URN, and all of them belong to one stack. Each problem is one line naming `--baseline`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from pairedbus.errors import UserError
from pairedbus.plans.model import Plan, PlannedResource
from pairedbus.plans.urns import ROOT_STACK_TYPE, parse_urn

#: The deployment version `pulumi stack export` writes (apitype.DeploymentSchemaVersionCurrent).
DEPLOYMENT_VERSION: Final = 3
#: How deep a baseline may nest; ARM's documents stay far below, and the comparison recurses.
MAX_STATE_DEPTH: Final = 64
#: Pulumi's marker for special values in state (`resource.SigKey`) and the one for secrets.
_SIG_KEY: Final = "4dabf18193072939515e22adb298388d"
_SECRET_SIG: Final = "1b47061264138c4ac30d75fd1eb44270"


class BaselineError(UserError):
    """A `--baseline` file that cannot be read as a plan or a state export."""


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {shown!r}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if value is None:
        return "null"
    return f"a {'list' if isinstance(value, list) else 'object'}"


class _Reader:
    """Checks fields of one document, naming the file and the field in every problem."""

    def __init__(self, path: Path | str) -> None:
        self.path = path

    def fail(self, where: str, problem: str) -> BaselineError:
        return BaselineError(f"--baseline {self.path}: {where}: {problem}")

    def expect(self, value: Any, kind: type | tuple[type, ...], where: str, what: str) -> Any:
        ok = isinstance(value, kind) and not (isinstance(value, bool) and bool not in _as_tuple(kind))
        if not ok:
            raise self.fail(where, f"expected {what}, got {_describe(value)}")
        return value

    def boolean(self, data: Mapping[str, Any], key: str, where: str) -> bool:
        return self.expect(data.get(key, False), bool, f"{where}.{key}", "true or false")

    def optional_str(self, data: Mapping[str, Any], key: str, where: str) -> str | None:
        value = data.get(key)
        return None if value is None else self.expect(value, str, f"{where}.{key}", "a string")

    def urn(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or parse_urn(value) is None:
            raise self.fail(
                where, f"expected a Pulumi URN (urn:pulumi:STACK::PROJECT::TYPE::NAME), got {_describe(value)}"
            )
        return value

    def urns(self, value: Any, where: str) -> tuple[str, ...]:
        self.expect(value, list, where, "a list of URNs")
        return tuple(self.urn(item, f"{where}[{i}]") for i, item in enumerate(value))

    def urn_map(self, value: Any, where: str) -> dict[str, tuple[str, ...]]:
        self.expect(value, dict, where, "an object of property name -> list of URNs")
        return {key: self.urns(urns, f"{where}.{key}") for key, urns in value.items()}


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _too_deep(document: Any, limit: int) -> bool:
    """Whether anything nests deeper than `limit`, without recursion (the document may be hostile)."""
    stack = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > limit:
                return True
            children = value.values() if isinstance(value, dict) else value
            stack.extend((child, depth + 1) for child in children)
    return False


def _plan_value_from_state(value: Any) -> Any:
    """A state value as the plan holds it: secrets masked as the render masks them."""
    if isinstance(value, dict):
        if value.get(_SIG_KEY) == _SECRET_SIG:
            return "[secret]"
        return {k: _plan_value_from_state(v) for k, v in value.items() if k != "__provider"}
    if isinstance(value, list):
        return [_plan_value_from_state(v) for v in value]
    return value


def read_baseline(path: Path | str) -> Plan:
    """The baseline in `path` as a plan, whichever format it is in; one-line `BaselineError` otherwise."""
    reader = _Reader(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"--baseline {path}: not readable ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        document = json.loads(text)
    except RecursionError:
        raise BaselineError(f"--baseline {path}: nested deeper than {MAX_STATE_DEPTH} levels") from None
    except ValueError as exc:
        raise BaselineError(f"--baseline {path}: not JSON ({exc})") from None
    if _too_deep(document, MAX_STATE_DEPTH):
        raise BaselineError(f"--baseline {path}: nested deeper than {MAX_STATE_DEPTH} levels")
    reader.expect(document, dict, "the document", "a JSON object")
    if "deployment" in document or "version" in document:
        return _from_deployment(document, reader)
    if "resources" in document and "stack" in document:
        return _from_plan(document, reader)
    raise reader.fail(
        "the document",
        "expected a plan written by `pairedbus plan --json` or a state written by `pulumi stack export`",
    )


# --- pulumi stack export --------------------------------------------------------------------


def _from_deployment(document: Mapping[str, Any], reader: _Reader) -> Plan:
    version = document.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise reader.fail("version", f"expected the deployment version {DEPLOYMENT_VERSION}, got {_describe(version)}")
    if version != DEPLOYMENT_VERSION:
        features = document.get("features")
        needs = f" (features: {', '.join(map(str, features))})" if isinstance(features, list) and features else ""
        raise reader.fail(
            "version",
            f"a Pulumi deployment of version {version}{needs} is not read; only version {DEPLOYMENT_VERSION}, "
            "what `pulumi stack export` writes",
        )
    deployment = reader.expect(document.get("deployment"), dict, "deployment", "an object")
    reader.expect(deployment.get("manifest"), dict, "deployment.manifest", "an object")
    entries = reader.expect(deployment.get("resources", []), list, "deployment.resources", "a list")
    stack = project = None
    resources: list[PlannedResource] = []
    outputs: dict[str, Any] = {}
    for index, entry in enumerate(entries):
        where = f"deployment.resources[{index}]"
        reader.expect(entry, dict, where, "an object")
        urn = reader.urn(entry.get("urn"), f"{where}.urn")
        own_stack, own_project, qualified, name = parse_urn(urn)  # type: ignore[misc]
        if stack is None:
            stack, project = own_stack, own_project
        elif (own_stack, own_project) != (stack, project):
            raise reader.fail(
                f"{where}.urn", f"stack {own_project}/{own_stack} differs from the rest ({project}/{stack})"
            )
        type_ = reader.expect(entry.get("type"), str, f"{where}.type", "a type token")
        if qualified.rsplit("$", 1)[-1] != type_:
            raise reader.fail(
                f"{where}.type", f"{type_!r} is not the type its URN names ({qualified.rsplit('$', 1)[-1]!r})"
            )
        inputs = reader.expect(entry.get("inputs", {}), dict, f"{where}.inputs", "an object")
        state_outputs = reader.expect(entry.get("outputs", {}), dict, f"{where}.outputs", "an object")
        flags = {
            key: reader.boolean(entry, key, where)
            for key in ("custom", "protect", "retainOnDelete", "delete", "external")
        }
        parent = entry.get("parent")
        parent = None if parent in (None, "") else reader.urn(parent, f"{where}.parent")
        provider = reader.optional_str(entry, "provider", where)
        reader.optional_str(entry, "id", where)
        dependencies = reader.urns(entry.get("dependencies", []), f"{where}.dependencies")
        property_dependencies = reader.urn_map(entry.get("propertyDependencies", {}), f"{where}.propertyDependencies")
        reader.urns(entry.get("aliases", []), f"{where}.aliases")
        if type_ == ROOT_STACK_TYPE:
            outputs = _plan_value_from_state(state_outputs)
            continue
        if flags["delete"] or (type_.startswith("pulumi:providers:") and name.startswith("default")):
            # A replaced resource's old copy awaiting deletion, and the engine's default providers:
            # neither is something the program registers.
            continue
        root = parent is not None and (parse_urn(parent) or ("", "", ""))[2] == ROOT_STACK_TYPE
        resources.append(
            PlannedResource(
                urn=urn,
                type=type_,
                name=name,
                inputs=_plan_value_from_state(inputs),
                custom=flags["custom"],
                parent=None if root else parent,
                dependencies=tuple(d for d in dependencies if (parse_urn(d) or ("", "", ""))[2] != ROOT_STACK_TYPE),
                property_dependencies=property_dependencies,
                protect=flags["protect"],
                retain_on_delete=flags["retainOnDelete"],
                provider=provider,
            )
        )
    return Plan(project=project or "", stack=stack or "", resources=tuple(resources), outputs=outputs)


# --- pairedbus plan --json ------------------------------------------------------------------


def _from_plan(document: Mapping[str, Any], reader: _Reader) -> Plan:
    project = reader.expect(document.get("project"), str, "project", "the project name")
    stack = reader.expect(document.get("stack"), str, "stack", "the stack name")
    entries = reader.expect(document.get("resources"), list, "resources", "a list")
    outputs = reader.expect(document.get("outputs", {}), dict, "outputs", "an object")
    resources = []
    for index, entry in enumerate(entries):
        where = f"resources[{index}]"
        reader.expect(entry, dict, where, "an object")
        urn = reader.urn(entry.get("urn"), f"{where}.urn")
        parent = entry.get("parent")
        provider = entry.get("provider")
        aliases = entry.get("aliases", 0)
        reader.expect(aliases, int, f"{where}.aliases", "a count")
        specs = reader.expect(entry.get("alias_specs", []), list, f"{where}.alias_specs", "a list")
        for i, spec in enumerate(specs):
            reader.expect(spec, dict, f"{where}.alias_specs[{i}]", "an object")
        resources.append(
            PlannedResource(
                urn=urn,
                type=reader.expect(entry.get("type"), str, f"{where}.type", "a type token"),
                name=reader.expect(entry.get("name"), str, f"{where}.name", "a string"),
                inputs=reader.expect(entry.get("inputs", {}), dict, f"{where}.inputs", "an object"),
                custom=reader.boolean(entry, "custom", where),
                parent=None if parent is None else reader.urn(parent, f"{where}.parent"),
                dependencies=reader.urns(entry.get("dependencies", []), f"{where}.dependencies"),
                property_dependencies=reader.urn_map(
                    entry.get("property_dependencies", {}), f"{where}.property_dependencies"
                ),
                protect=reader.boolean(entry, "protect", where),
                retain_on_delete=reader.boolean(entry, "retain_on_delete", where),
                provider=None if provider is None else reader.expect(provider, str, f"{where}.provider", "a string"),
                aliases=aliases,
                alias_specs=tuple(dict(spec) for spec in specs),
            )
        )
    return Plan(project=project, stack=stack, resources=tuple(resources), outputs=outputs)


def check_same_stack(baseline: Plan, *, project: str, stack: str, path: Path | str) -> None:
    """A baseline of another stack or project compares unrelated resources: refuse it by name."""
    if not baseline.resources and not baseline.stack:
        return  # an empty stack's export names no stack: nothing to compare, nothing to mix up
    if (baseline.project, baseline.stack) != (project, stack):
        raise BaselineError(
            f"--baseline {path}: is of stack {baseline.project}/{baseline.stack}, not {project}/{stack} "
            "(pass --baseline-any-stack to compare anyway)"
        )
