"""What the Pulumi engine refuses when a program registers its resources, checked offline.

Pulumi's mock monitor accepts anything: a second registration of a URN silently replaces the first.
The engine's step generator does not, and `pulumi up` stops. The offline render records every
registration (`Registration`) and `engine_refusals` replays them as the step generator does, so
`pairedbus plan` and the tests stop where the engine would, in the engine's words
(pulumi/pulumi, sdk/go/common/diag/errors.go):

- a URN registered twice: `generateURN` in pkg/resource/deploy/step_generator.go, diag 2001
  "Duplicate resource URN '%v'; try giving it a unique name";
- a child whose parent was never registered: `checkParent`, same file, "could not find parent
  resource %v";
- an alias two resources claim, or an alias that is another live resource's URN: `getOldResource`,
  same file, diag 2008 "Duplicate resource alias '%v' applied to resource with URN '%v' conflicting
  with resource with URN '%v'" and diag 2016 "Duplicate resource URN '%v' conflicting with alias on
  resource with URN '%v'". The engine raises these when the alias names a resource of the stack's
  state; aliases exist to name such resources, so the offline render assumes they do. (For an alias
  that is a live URN, the engine's 2008 repeats the resource's own URN as the third argument; we name
  the live resource.)

URNs are the engine's (`urn:pulumi:<stack>::<project>::<parent type chain>$<type>::<name>`, the
root stack's type left out: `Deployment.generateURN`, pkg/resource/deploy/deployment.go), not the
mock monitor's shorter ones, so two resources the engine tells apart are never called duplicates.
Aliases are collapsed as `collapseAliasToUrn` and inherited from a parent's aliases as
`inheritedChildAlias` do (step_generator.go; `resource.CreateURN` in sdk/go/common/resource/alias.go).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pairedbus.errors import UserError
from pairedbus.plans.urns import ROOT_STACK_TYPE


class EngineRefusal(UserError):
    """The program registers resources the Pulumi engine would refuse; one line per refusal, in the
    engine's words (exit 2, like every user error of `pairedbus plan`)."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class AliasSpec:
    """One alias as the SDK sends it: a full URN, or a spec whose empty fields mean "as the resource"."""

    urn: str = ""
    name: str = ""
    type: str = ""
    stack: str = ""
    project: str = ""
    parent_urn: str = ""
    no_parent: bool = False

    @classmethod
    def from_request(cls, alias: Any) -> AliasSpec:
        """From a RegisterResourceRequest's `alias_pb2.Alias`."""
        if alias.WhichOneof("alias") == "urn":
            return cls(urn=alias.urn)
        spec = alias.spec
        return cls(
            name=spec.name,
            type=spec.type,
            stack=spec.stack,
            project=spec.project,
            parent_urn=spec.parentUrn,
            no_parent=spec.noParent,
        )


@dataclass(frozen=True)
class Registration:
    """One RegisterResource (or ReadResource) request, with the URN the mock monitor answered.

    `parent` and the aliases' parents are the URNs the SDK sent: the mock monitor's."""

    mock_urn: str
    type: str
    name: str
    parent: str
    aliases: tuple[AliasSpec, ...] = ()
    read: bool = False


def _split(urn: str) -> tuple[str, str, str]:
    """(`urn:pulumi:<stack>::<project>` prefix, qualified type, name) of a URN."""
    prefix, project, qualified_type, name = urn.split("::", 3)
    return f"{prefix}::{project}", qualified_type, name


def _qualified_type(urn: str) -> str:
    return _split(urn)[1]


def _urn_name(urn: str) -> str:
    return _split(urn)[2]


def _last_type(urn: str) -> str:
    return _qualified_type(urn).split("$")[-1]


class EngineLedger:
    """Registrations in the order the monitor received them; thread-safe (the SDK registers from
    executor threads)."""

    def __init__(self, project: str, stack: str) -> None:
        self.project = project
        self.stack = stack
        self._lock = threading.Lock()
        self._registrations: list[Registration] = []

    def record(self, registration: Registration) -> None:
        with self._lock:
            self._registrations.append(registration)

    @property
    def registrations(self) -> list[Registration]:
        with self._lock:
            return list(self._registrations)

    def refusals(self) -> list[str]:
        return _Replay(self.project, self.stack).run(self.registrations)


class _Replay:
    """The step generator's bookkeeping (`sg.urns`, `sg.aliased`) over the recorded registrations."""

    def __init__(self, project: str, stack: str) -> None:
        self.project = project
        self.stack = stack
        #: mock URN -> engine URN; None when two registrations with different engine URNs share it
        #: (the mock's URN holds only the parent's last type): their children cannot be placed.
        self.engine_of: dict[str, str | None] = {}
        self.urns: set[str] = set()
        self.aliased: dict[str, str] = {}  # alias URN -> the URN of the resource that claimed it
        self.alias_urns: dict[str, list[str]] = {}  # engine URN -> the aliases it may have had
        self.problems: list[str] = []

    def run(self, registrations: list[Registration]) -> list[str]:
        for registration in registrations:
            self._step(registration)
        return self.problems

    def _step(self, reg: Registration) -> None:
        parent = ""
        if reg.parent:
            if reg.parent not in self.engine_of:
                self.problems.append(f"could not find parent resource {reg.parent}")
                return
            known = self.engine_of[reg.parent]
            if known is None:
                return  # an ambiguous parent: say nothing rather than something wrong
            parent = known
        urn = self._urn(parent, reg.type, reg.name)
        self.engine_of[reg.mock_urn] = urn if self.engine_of.get(reg.mock_urn, urn) == urn else None
        if urn in self.urns:
            self.problems.append(f"Duplicate resource URN '{urn}'; try giving it a unique name")
            return
        self.urns.add(urn)
        if reg.read:
            return  # reads have no aliases (GenerateReadSteps)
        if urn in self.aliased:
            self.problems.append(
                f"Duplicate resource URN '{urn}' conflicting with alias on resource with URN '{self.aliased[urn]}'"
            )
        aliases = self._aliases(reg, parent, urn)
        for alias in aliases:
            other = alias if alias in self.urns else self.aliased.get(alias)
            if other is not None and other != urn:
                self.problems.append(
                    f"Duplicate resource alias '{alias}' applied to resource with URN '{urn}' "
                    f"conflicting with resource with URN '{other}'"
                )
            self.aliased.setdefault(alias, urn)
        self.alias_urns[urn] = aliases

    def _urn(self, parent: str, type_: str, name: str) -> str:
        """`Deployment.generateURN` and `urn.New`: the parent's whole type chain, the root stack's left out."""
        parent_type = _qualified_type(parent) if parent else ""
        qualified = type_ if parent_type in ("", ROOT_STACK_TYPE) else f"{parent_type}${type_}"
        return f"urn:pulumi:{self.stack}::{self.project}::{qualified}::{name}"

    def _engine_parent(self, urn: str) -> str:
        """An alias's parent as the SDK sent it (a registered resource's mock URN, or an old URN as written)."""
        return self.engine_of.get(urn) or urn

    def _collapse(self, alias: AliasSpec, name: str, type_: str, parent: str) -> str:
        """`collapseAliasToUrn` (step_generator.go) with `resource.CreateURN` (alias.go)."""
        if alias.urn:
            return alias.urn
        alias_parent = self._engine_parent(alias.parent_urn) if alias.parent_urn else parent
        if alias.no_parent or (alias_parent and _qualified_type(alias_parent) == ROOT_STACK_TYPE):
            alias_parent = ""
        alias_name, alias_type = alias.name or name, alias.type or type_
        if not alias_parent:
            return (
                f"urn:pulumi:{alias.stack or self.stack}::{alias.project or self.project}::{alias_type}::{alias_name}"
            )
        return f"{alias_parent[: alias_parent.rindex('::')]}${alias_type}::{alias_name}"

    def _inherited(self, type_: str, name: str, parent: str, parent_alias: str) -> str:
        """`inheritedChildAlias`: a child named `<parent name>-x` keeps the parent's old name as prefix."""
        parent_name = _urn_name(parent)
        alias_name = _urn_name(parent_alias) + name[len(parent_name) :] if name.startswith(parent_name) else name
        return self._urn(parent_alias, type_, alias_name)  # `resource.NewURN` in this stack and project

    def _aliases(self, reg: Registration, parent: str, urn: str) -> list[str]:
        """`generateAliases`: the resource's own aliases, then those inherited from each alias its
        parent may have had (the engine uses the one that matched the state; offline, any may)."""
        own = [self._collapse(alias, reg.name, reg.type, parent) for alias in reg.aliases]
        found = list(own)
        for parent_alias in self.alias_urns.get(parent, []) if parent else []:
            found.append(self._inherited(reg.type, reg.name, parent, parent_alias))
            found.extend(self._inherited(_last_type(o), _urn_name(o), parent, parent_alias) for o in own)
        return [alias for alias in dict.fromkeys(found) if alias != urn]
