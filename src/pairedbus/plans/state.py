"""Reading a `--baseline`: a plan (`pairedbus plan --json`) or what is deployed (`pulumi stack export`).

A state export is Pulumi's deployment format, version 3 (pulumi/pulumi `sdk/go/common/apitype/core.go`:
`UntypedDeployment` `{"version", "deployment"}`, `DeploymentV3` `{"manifest", "resources", ...}`,
`ResourceV3` `{"urn", "custom", "id", "type", "inputs", "outputs", "parent", "protect", "retainOnDelete",
"provider", "dependencies", "propertyDependencies", "aliases", "delete", ...}`; the JSON schemas
`deployments.json` and `resources.json` beside it). Other versions are refused by name: version 4
exists for deployments that need features an older CLI must not read.

A baseline is hostile input until checked: it is a regular file of at most `MAX_BASELINE_BYTES`, checked
before a byte is read; every field has the type the schema gives it (a boolean is `true` or `false`, never
the string `"false"`), nothing is nested deeper than `MAX_STATE_DEPTH`, and every URN is one Pulumi could
have written (`urns.urn_problem`: no control characters, Pulumi's stack and project names), of the
document's stack, and names one resource (a state repeats a URN only for copies pending deletion, as the
engine's snapshot check allows). Parents form no cycle and no chain deeper than `MAX_PARENT_DEPTH`, and a
state's URNs are the ones the engine makes under their parents (`resource.NewURN`: the parent's type chain,
then the type), so putting them into the engine's form costs no more than reading them. Each problem is
one line naming `--baseline` and the field.

Pulumi's values the offline plan cannot compare are kept as what they are: a secret as the mask
`model.SECRET_MASK` (no evidence of a change, `baseline.input_changed`), and a resource the program only
read (`external: true`) as such, so that leaving the program is "forgotten", not "deleted".
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar, overload

from pairedbus.errors import UserError
from pairedbus.plans.model import SECRET_MASK, Plan, PlannedResource
from pairedbus.plans.urns import ROOT_STACK_TYPE, parse_urn, urn_problem

_T = TypeVar("_T")

#: The deployment version `pulumi stack export` writes (apitype.DeploymentSchemaVersionCurrent).
DEPLOYMENT_VERSION: Final = 3
#: How deep a baseline may nest; ARM's documents stay far below, and the comparison recurses.
MAX_STATE_DEPTH: Final = 64
#: The largest baseline read. This program's deployed resources take 2.4 KB each in a state export
#: (tests/iac/fixtures/state/prod.json: 104 KB, 44 resources), so 64 MiB holds some 28,000 of them.
MAX_BASELINE_BYTES: Final = 64 * 1024 * 1024
#: How many levels of parents a resource may sit under (its own level included). Pulumi programs nest
#: components a few levels deep (this one: 3); a state's URN carries every level's type.
MAX_PARENT_DEPTH: Final = 64
#: Pulumi's marker for special values in state (`resource.SigKey`) and the one for secrets.
_SIG_KEY: Final = "4dabf18193072939515e22adb298388d"
_SECRET_SIG: Final = "1b47061264138c4ac30d75fd1eb44270"


class BaselineError(UserError):
    """A `--baseline` file that cannot be read as a plan or a state export."""


def _json_shown(value: Any) -> str:
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
        #: (project, stack) every URN of the document must name, once known.
        self.home: tuple[str, str] | None = None

    def fail(self, where: str, problem: str) -> BaselineError:
        return BaselineError(f"--baseline {self.path}: {where}: {problem}")

    @overload
    def expect(self, value: Any, kind: type[_T], where: str, what: str) -> _T: ...
    @overload
    def expect(self, value: Any, kind: tuple[type, ...], where: str, what: str) -> Any: ...
    def expect(self, value: Any, kind: type | tuple[type, ...], where: str, what: str) -> Any:
        ok = isinstance(value, kind) and not (isinstance(value, bool) and bool not in _as_tuple(kind))
        if not ok:
            raise self.fail(where, f"expected {what}, got {_json_shown(value)}")
        return value

    def boolean(self, data: Mapping[str, Any], key: str, where: str) -> bool:
        return self.expect(data.get(key, False), bool, f"{where}.{key}", "true or false")

    def optional_str(self, data: Mapping[str, Any], key: str, where: str) -> str | None:
        value = data.get(key)
        return None if value is None else self.expect(value, str, f"{where}.{key}", "a string")

    def strings(self, data: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
        """An optional list of property paths."""
        values = self.expect(data.get(key, []), list, f"{where}.{key}", "a list of property paths")
        return tuple(self.expect(v, str, f"{where}.{key}[{i}]", "a property path") for i, v in enumerate(values))

    def urn(self, value: Any, where: str) -> str:
        """A URN Pulumi could have written, of any stack (an alias may name another)."""
        if not isinstance(value, str):
            raise self.fail(
                where, f"expected a Pulumi URN (urn:pulumi:STACK::PROJECT::TYPE::NAME), got {_json_shown(value)}"
            )
        problem = urn_problem(value)
        if problem is not None:
            raise self.fail(where, problem)
        return value

    def reference(self, value: Any, where: str) -> str:
        """A URN of this document's stack: its own, a parent, a dependency, a provider reference."""
        urn = self.urn(value, where)
        stack, project, _type, _name = parse_urn(urn)  # type: ignore[misc]  # self.urn checked it with urn_problem: it parses
        if self.home is not None and (project, stack) != self.home:
            raise self.fail(where, f"of stack {project}/{stack}, not the document's {self.home[0]}/{self.home[1]}")
        return urn

    def urns(self, value: Any, where: str, *, any_stack: bool = False) -> tuple[str, ...]:
        self.expect(value, list, where, "a list of URNs")
        read = self.urn if any_stack else self.reference
        return tuple(read(item, f"{where}[{i}]") for i, item in enumerate(value))

    def urn_map(self, value: Any, where: str) -> dict[str, tuple[str, ...]]:
        self.expect(value, dict, where, "an object of property name -> list of URNs")
        return {key: self.urns(urns, f"{where}.{key}") for key, urns in value.items()}

    def parent(self, entry: Mapping[str, Any], where: str) -> str | None:
        value = entry.get("parent")
        return None if value in (None, "") else self.reference(value, f"{where}.parent")

    def provider(self, entry: Mapping[str, Any], where: str) -> str | None:
        """A provider reference, `<provider URN>::<id>`: a URN whose name holds the id."""
        value = entry.get("provider")
        return None if value in (None, "") else self.reference(value, f"{where}.provider")


class _Urns:
    """Each URN a document names a resource by, once: the engine's snapshot check allows a repeat only
    for copies pending deletion (`delete: true`)."""

    def __init__(self, reader: _Reader, prefix: str) -> None:
        self.reader = reader
        self.prefix = prefix
        self.first: dict[str, int] = {}

    def claim(self, urn: str, index: int) -> None:
        first = self.first.setdefault(urn, index)
        if first != index:
            raise self.reader.fail(
                f"{self.prefix}[{index}].urn",
                f"duplicate of {self.prefix}[{first}] (a URN names one resource; only copies pending deletion repeat it)",
            )


def _resource_name(urn: str) -> str:
    name = (parse_urn(urn) or ("", "", "", urn))[3]
    return name if len(name) <= 40 else name[:37] + "..."


def _check_parents(reader: _Reader, links: Sequence[tuple[str, str | None, str]]) -> None:
    """`(urn, parent, where)` of each resource: no parent cycle and no resource more than `MAX_PARENT_DEPTH`
    levels deep. Each resource's level is found once (a walk stops at the first ancestor already known), so
    this is linear in the resources however deep their chains."""
    parent_of = {urn: parent for urn, parent, _where in links}
    level: dict[str, int] = {}
    for urn, _parent, where in links:
        path: list[str] = []
        on_path: set[str] = set()
        cursor: str | None = urn
        while cursor is not None and cursor in parent_of and cursor not in level:
            if cursor in on_path:
                cycle = [*path[path.index(cursor) :], cursor]
                names = [_resource_name(u) for u in cycle]
                shown = names if len(names) <= 5 else [*names[:3], "...", names[-1]]
                raise reader.fail(f"{where}.parent", f"a parent cycle ({' -> '.join(shown)})")
            on_path.add(cursor)
            path.append(cursor)
            cursor = parent_of[cursor]
        base = level.get(cursor, 0) if cursor is not None else 0
        for offset, known in enumerate(reversed(path), start=1):
            level[known] = base + offset
        if level[urn] > MAX_PARENT_DEPTH:
            raise reader.fail(
                f"{where}.parent",
                f"nested more than {MAX_PARENT_DEPTH} levels deep (a chain of parents; Pulumi programs nest a few)",
            )


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
            return SECRET_MASK
        return {k: _plan_value_from_state(v) for k, v in value.items() if k != "__provider"}
    if isinstance(value, list):
        return [_plan_value_from_state(v) for v in value]
    return value


#: What a file that is not a regular one is, for the refusal (`stat.S_IS*`).
_FILE_KINDS: Final = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def _read_text(path: Path | str) -> str:
    """The file's text: a regular file (`/dev/zero` or a FIFO never ends) of at most `MAX_BASELINE_BYTES`,
    both checked before a byte is read (and the size again while reading, should the file grow)."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            kind = next((what for test, what in _FILE_KINDS if test(info.st_mode)), "not a file")
            raise BaselineError(f"--baseline {path}: not a regular file ({kind}); expected a JSON file")
        if info.st_size > MAX_BASELINE_BYTES:
            raise BaselineError(
                f"--baseline {path}: {info.st_size} bytes, more than a baseline may hold ({MAX_BASELINE_BYTES})"
            )
        with open(path, "rb") as handle:
            data = handle.read(MAX_BASELINE_BYTES + 1)
        if len(data) > MAX_BASELINE_BYTES:
            raise BaselineError(f"--baseline {path}: more than a baseline may hold ({MAX_BASELINE_BYTES} bytes)")
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"--baseline {path}: not readable ({getattr(exc, 'strerror', None) or exc})") from None


def read_baseline(path: Path | str) -> Plan:
    """The baseline in `path` as a plan, whichever format it is in; one-line `BaselineError` otherwise."""
    reader = _Reader(path)
    text = _read_text(path)
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
    _check_deployment_version(document, reader)
    deployment = reader.expect(document.get("deployment"), dict, "deployment", "an object")
    reader.expect(deployment.get("manifest"), dict, "deployment.manifest", "an object")
    entries = reader.expect(deployment.get("resources", []), list, "deployment.resources", "a list")
    resources: list[PlannedResource] = []
    outputs: dict[str, Any] = {}
    claimed = _Urns(reader, "deployment.resources")
    links: list[tuple[str, str | None, str]] = []  # (urn, parent, where) of every entry not pending deletion
    chains: list[tuple[str, str, str | None, str]] = []  # (where, qualified type, parent, type) of the same
    for index, entry in enumerate(entries):
        state = _read_state_entry(reader, entry, f"deployment.resources[{index}]")
        if state.flags["delete"]:
            continue  # a replaced resource's old copy awaiting deletion: it shares the URN of its replacement
        claimed.claim(state.urn, index)
        links.append((state.urn, state.parent, state.where))
        chains.append((state.where, state.qualified, state.parent, state.type))
        if state.type == ROOT_STACK_TYPE:
            outputs = _plan_value_from_state(state.outputs)
        elif not (state.type.startswith("pulumi:providers:") and state.name.startswith("default")):
            resources.append(_planned_from_state(state))  # (the engine's default providers: nothing registered)
    _check_parents(reader, links)
    for where, qualified, parent, type_ in chains:
        _check_engine_urn(reader, where, qualified, parent, type_)
    project, stack = reader.home or ("", "")
    return Plan(project=project, stack=stack, resources=tuple(resources), outputs=outputs)


def _check_deployment_version(document: Mapping[str, Any], reader: _Reader) -> None:
    """Version 3, what `pulumi stack export` writes; any other refused by its number (and the features it needs)."""
    version = document.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise reader.fail(
            "version", f"expected the deployment version {DEPLOYMENT_VERSION}, got {_json_shown(version)}"
        )
    if version != DEPLOYMENT_VERSION:
        features = document.get("features")
        needs = f" (features: {', '.join(map(str, features))})" if isinstance(features, list) and features else ""
        raise reader.fail(
            "version",
            f"a Pulumi deployment of version {version}{needs} is not read; only version {DEPLOYMENT_VERSION}, "
            "what `pulumi stack export` writes",
        )


@dataclass(frozen=True)
class _StateEntry:
    """One `ResourceV3` of a state export, every field checked."""

    where: str
    urn: str
    qualified: str  # the URN's type chain
    name: str
    type: str
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    flags: dict[str, bool]
    parent: str | None
    provider: str | None
    dependencies: tuple[str, ...]
    property_dependencies: dict[str, tuple[str, ...]]


def _read_state_entry(reader: _Reader, entry: Any, where: str) -> _StateEntry:
    reader.expect(entry, dict, where, "an object")
    urn = reader.urn(entry.get("urn"), f"{where}.urn")
    own_stack, own_project, qualified, name = parse_urn(urn)  # type: ignore[misc]  # reader.urn checked it with urn_problem: it parses
    if reader.home is None:
        reader.home = (own_project, own_stack)
    elif (own_project, own_stack) != reader.home:
        project, stack = reader.home
        raise reader.fail(f"{where}.urn", f"stack {own_project}/{own_stack} differs from the rest ({project}/{stack})")
    type_ = reader.expect(entry.get("type"), str, f"{where}.type", "a type token")
    if qualified.rsplit("$", 1)[-1] != type_:
        raise reader.fail(
            f"{where}.type", f"{type_!r} is not the type its URN names ({qualified.rsplit('$', 1)[-1]!r})"
        )
    inputs = reader.expect(entry.get("inputs", {}), dict, f"{where}.inputs", "an object")
    state_outputs = reader.expect(entry.get("outputs", {}), dict, f"{where}.outputs", "an object")
    flags = {
        key: reader.boolean(entry, key, where) for key in ("custom", "protect", "retainOnDelete", "delete", "external")
    }
    parent = reader.parent(entry, where)
    provider = reader.provider(entry, where)
    reader.optional_str(entry, "id", where)
    dependencies = reader.urns(entry.get("dependencies", []), f"{where}.dependencies")
    property_dependencies = reader.urn_map(entry.get("propertyDependencies", {}), f"{where}.propertyDependencies")
    reader.urns(entry.get("aliases", []), f"{where}.aliases", any_stack=True)  # an alias may name another stack
    return _StateEntry(
        where,
        urn,
        qualified,
        name,
        type_,
        inputs,
        state_outputs,
        flags,
        parent,
        provider,
        dependencies,
        property_dependencies,
    )


def _planned_from_state(state: _StateEntry) -> PlannedResource:
    """The resource as the plan holds it: the root stack is no parent, nor a dependency."""
    root = state.parent is not None and (parse_urn(state.parent) or ("", "", ""))[2] == ROOT_STACK_TYPE
    return PlannedResource(
        urn=state.urn,
        type=state.type,
        name=state.name,
        inputs=_plan_value_from_state(state.inputs),
        custom=state.flags["custom"],
        parent=None if root else state.parent,
        dependencies=tuple(d for d in state.dependencies if (parse_urn(d) or ("", "", ""))[2] != ROOT_STACK_TYPE),
        property_dependencies=state.property_dependencies,
        protect=state.flags["protect"],
        retain_on_delete=state.flags["retainOnDelete"],
        provider=state.provider,
        external=state.flags["external"],
    )


def _check_engine_urn(reader: _Reader, where: str, qualified: str, parent: str | None, type_: str) -> None:
    """A state's URN is the one the engine made under its parent (`resource.NewURN`): the parent's type chain
    (none under the root stack), `$`, its own type. Checked against the parent's URN alone: no chain is walked."""
    above = (parse_urn(parent) or ("", "", ""))[2] if parent is not None else ""
    expected = type_ if above in ("", ROOT_STACK_TYPE) else f"{above}${type_}"
    if qualified != expected:
        raise reader.fail(
            f"{where}.urn",
            "not the URN Pulumi makes under its parent (the parent's type chain, then its own type, joined by $)",
        )


# --- pairedbus plan --json ------------------------------------------------------------------


def _from_plan(document: Mapping[str, Any], reader: _Reader) -> Plan:
    project = reader.expect(document.get("project"), str, "project", "the project name")
    stack = reader.expect(document.get("stack"), str, "stack", "the stack name")
    entries = reader.expect(document.get("resources"), list, "resources", "a list")
    outputs = reader.expect(document.get("outputs", {}), dict, "outputs", "an object")
    reader.home = (project, stack)
    claimed = _Urns(reader, "resources")
    resources = []
    for index, entry in enumerate(entries):
        where = f"resources[{index}]"
        reader.expect(entry, dict, where, "an object")
        urn = reader.reference(entry.get("urn"), f"{where}.urn")
        claimed.claim(urn, index)
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
                parent=reader.parent(entry, where),
                dependencies=reader.urns(entry.get("dependencies", []), f"{where}.dependencies"),
                property_dependencies=reader.urn_map(
                    entry.get("property_dependencies", {}), f"{where}.property_dependencies"
                ),
                protect=reader.boolean(entry, "protect", where),
                retain_on_delete=reader.boolean(entry, "retain_on_delete", where),
                provider=reader.provider(entry, where),
                aliases=aliases,
                alias_specs=tuple(dict(spec) for spec in specs),
                external=reader.boolean(entry, "external", where),
                derived=reader.strings(entry, "derived", where),
                ignore_changes=reader.strings(entry, "ignore_changes", where),
            )
        )
    _check_parents(reader, [(r.urn, r.parent, f"resources[{i}]") for i, r in enumerate(resources)])
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
