"""A resource's inputs against what the baseline holds, property by property, as `pulumi preview --diff` shows them.

Each change has the path Pulumi prints (`tags["pairedbus-backlog-queue-count"]`, `template.containers[0].image`),
its kind (`+` add, `-` delete, `~` update), the old and new values, and whether it forces a replacement
(`replacements.replace_keys`: the provider's own metadata; a nested change under a replacing input replaces too,
as azure-native's `calculateDetailedDiff` has it). Objects are diffed key by key and lists element by element,
as the engine's `ObjectDiff` does.

What is no evidence of a change, as the engine sees it before anything is deployed:

- a value not known offline: an output of another resource (None), or a secret (`SECRET_MASK`), at any depth;
- a value the mocks derived (`PlannedResource.derived`: an id, a principal id, an endpoint a provider computes,
  here made up from names): the engine reads it from the resource's state, which a baseline cannot tell us; only
  when that resource is itself created or replaced (`renewed`) is the value new, unknown until deployed;
- a path the resource's `ignore_changes` covers (the engine keeps the old value there);
- `location` written another way ("West Europe" is "westeurope": azure-native compares locations normalised).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any, Final, Literal

from pairedbus.plans.model import SECRET_MASK, PlannedResource
from pairedbus.plans.replacements import replace_keys
from pairedbus.rules.namespace import normalise_region

ChangeKind = Literal["add", "delete", "update"]
#: Marks, as `pulumi preview --diff` prints them.
MARKS: Final = {"add": "+", "delete": "-", "update": "~"}
_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Unknown:
    """A new value the engine shows as `output<string>`: known only once deployed."""

    def __repr__(self) -> str:
        return "output<string>"


UNKNOWN: Final = _Unknown()
_ABSENT: Final = object()


@dataclass(frozen=True)
class PropertyChange:
    path: str
    kind: ChangeKind
    old: Any
    new: Any
    replaces: bool = False

    def line(self) -> str:
        """`~ location: "westeurope" => "northeurope" (forces replacement)`, as `pulumi preview --diff` words it."""
        if self.kind == "add":
            text = f"+ {self.path}: {show(self.new)}"
        elif self.kind == "delete":
            text = f"- {self.path}: {show(self.old)}"
        else:
            text = f"~ {self.path}: {show(self.old)} => {show(self.new)}"
        return text + (" (forces replacement)" if self.replaces else "")

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path, "kind": self.kind, "replaces": self.replaces}
        if self.kind != "add":
            data["old"] = self.old
        if self.kind != "delete":
            data["new"] = None if self.new is UNKNOWN else self.new
        return data


def show(value: Any, limit: int = 80) -> str:
    """A value as Pulumi prints one: strings quoted, a secret as `[secret]`, an unknown as `output<string>`."""
    if value is UNKNOWN or value == SECRET_MASK:
        return str(UNKNOWN) if value is UNKNOWN else SECRET_MASK
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def key_path(base: str, key: str) -> str:
    """Pulumi's property path syntax: `a.b` for a name, `a["b-c"]` otherwise."""
    if _IDENTIFIER.fullmatch(key):
        return f"{base}.{key}" if base else key
    return f"{base}[{json.dumps(key)}]"


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(path, value) of every scalar inside `value`, paths in Pulumi's syntax."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, key_path(path, str(key)))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from leaves(item, f"{path}[{index}]")
    else:
        yield path, value


def _ignored(path: str, ignore: Collection[str]) -> bool:
    return any(path == p or path.startswith((f"{p}.", f"{p}[")) for p in ignore)


def _opaque(value: Any) -> bool:
    """A value not known offline: no evidence of a change."""
    return value is None or (isinstance(value, str) and value == SECRET_MASK)


@dataclass(frozen=True)
class _Walk:
    replacing: frozenset[str]
    derived: frozenset[str]
    ignore: tuple[str, ...]
    renewed: frozenset[str]

    def top(self, old: dict[str, Any], new: dict[str, Any]) -> Iterator[PropertyChange]:
        for key in sorted(old.keys() | new.keys()):
            before, after = old.get(key, _ABSENT), new.get(key, _ABSENT)
            if key == "location" and isinstance(before, str) and isinstance(after, str):
                if normalise_region(before) == normalise_region(after):
                    continue
            yield from self.value(key_path("", key), key, before, after, key in self.replacing)

    def value(self, path: str, top: str, old: Any, new: Any, replaces: bool) -> Iterator[PropertyChange]:
        if _ignored(path, self.ignore):
            return
        if path in self.derived:
            yield from self.derived_value(path, top, old, replaces)
        elif old is _ABSENT or new is _ABSENT:
            yield from _added_or_deleted(path, old, new, replaces)
        elif _opaque(old) or _opaque(new):
            return
        elif isinstance(old, dict) and isinstance(new, dict):
            yield from self.mapping(path, top, old, new, replaces)
        elif isinstance(old, list) and isinstance(new, list):
            yield from self.sequence(path, top, old, new, replaces)
        elif old != new or type(old) is not type(new):
            yield PropertyChange(path, "update", old, new, replaces)

    def derived_value(self, path: str, top: str, old: Any, replaces: bool) -> Iterator[PropertyChange]:
        """An input fed by another resource's output: new only when that resource is created or replaced."""
        if top in self.renewed:
            yield PropertyChange(path, "update", None if old is _ABSENT else old, UNKNOWN, replaces)

    def mapping(
        self, path: str, top: str, old: dict[str, Any], new: dict[str, Any], replaces: bool
    ) -> Iterator[PropertyChange]:
        for key in sorted(old.keys() | new.keys()):
            yield from self.value(key_path(path, key), top, old.get(key, _ABSENT), new.get(key, _ABSENT), replaces)

    def sequence(self, path: str, top: str, old: list[Any], new: list[Any], replaces: bool) -> Iterator[PropertyChange]:
        for index in range(max(len(old), len(new))):
            before = old[index] if index < len(old) else _ABSENT
            after = new[index] if index < len(new) else _ABSENT
            yield from self.value(f"{path}[{index}]", top, before, after, replaces)


def _added_or_deleted(path: str, old: Any, new: Any, replaces: bool) -> Iterator[PropertyChange]:
    """A value on one side only: an add or a delete, unless the side that has it is not known offline."""
    if not _opaque(new if old is _ABSENT else old):
        kind: ChangeKind = "add" if old is _ABSENT else "delete"
        yield PropertyChange(path, kind, None if old is _ABSENT else old, None if new is _ABSENT else new, replaces)


def diff_inputs(
    old: PlannedResource, new: PlannedResource, *, renewed: Collection[str] = ()
) -> tuple[PropertyChange, ...]:
    """Every change of `new`'s inputs against `old`'s. `renewed` are the inputs fed by a resource that is created
    or replaced: their derived values are new, shown as `output<string>`."""
    walk = _Walk(
        replacing=replace_keys(new.type) or frozenset(),
        derived=frozenset(old.derived) | frozenset(new.derived),
        ignore=new.ignore_changes,
        renewed=frozenset(renewed),
    )
    return tuple(walk.top(old.inputs, new.inputs))


def operation(changes: Collection[PropertyChange]) -> str:
    """`replace` when a change forces it, else `update` when there is one, else `same`."""
    if any(c.replaces for c in changes):
        return "replace"
    return "update" if changes else "same"
