"""ARM's own definitions of a resource body, read from the generated `azure-mgmt-*` models, and a
checker that walks a rendered resource's inputs against them.

Why a test helper and not shipped code: the definitions come from dev-only packages (one
`azure-mgmt-*` per resource provider, pinned to the API version pulumi-azure-native uses), and
what they check is what *this repository's* components render. Nothing at run time needs them.

Two generations of generated models are read:

- msrest models (`_attribute_map`, `_validation`): wire names, flattening (`properties.x` keys come
  from `x-ms-client-flatten`, the same flag azure-native flattens on), types, required, read-only,
  and the spec's minimum/maximum/length/pattern constraints.
- TypeSpec models (`rest_field(name=..., visibility=[...])` plus type annotations): wire names,
  types, required (a non-Optional annotation), read-only (`visibility == ["read"]`) and
  flattening (`__flattened_items`). They carry no constraints: the test restates those from the
  spec JSON of the same API version, with a citation, as `Limit`s.

azure-native's inputs are the ARM wire names (camelCase), with every flattened `properties.x`
lifted to the top level and the URL's path parameters (`resourceGroupName`, `queueName`, ...)
beside them. The checker maps them back: a top-level input key is a body property, a flattened
property, or a declared path parameter; anything else is a mismatch.
"""

from __future__ import annotations

import datetime
import enum
import functools
import importlib
import re
import sys
import typing
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Prop:
    """One property of an ARM definition."""

    wire: str  # the ARM wire path from the body's root, e.g. `properties.lockDuration`
    kind: str  # string, integer, number, boolean, duration, date-time, object, array, map, any
    required: bool = False
    readonly: bool = False
    enum: frozenset[str] | None = None
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    min_items: int | None = None
    max_items: int | None = None
    model: type | None = None  # the nested definition of an object
    item: Prop | None = None  # the element of an array, or the value of a map


@dataclass(frozen=True)
class Limit:
    """A constraint the generated model does not carry, restated with its source.

    `path` is the input path with `[]` for any list element and `{}` for any map value, e.g.
    `template.containers[].probes[].failureThreshold`. Durations compare in seconds."""

    path: str
    source: str
    minimum: float | Decimal | None = None
    maximum: float | Decimal | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    enum: frozenset[Any] | None = None
    max_items: int | None = None
    max_key_length: int | None = None  # of a map's keys
    key_pattern: str | None = None  # every key of a map must match


@dataclass(frozen=True)
class Mismatch:
    stack: str
    resource: str
    path: str
    rule: str
    value: Any
    detail: str = ""

    def __str__(self) -> str:
        value = repr(self.value)
        if len(value) > 80:
            value = value[:77] + "..."
        detail = f" ({self.detail})" if self.detail else ""
        return f"{self.stack} {self.resource} {self.path}: {self.rule}{detail}; value={value}"


@dataclass(frozen=True)
class Definition:
    """The ARM definition of one resource type at one API version."""

    model: type  # the PUT body's model
    api_version: str  # the API version of the package the model comes from
    path_params: Mapping[str, Prop] = field(default_factory=dict)
    limits: tuple[Limit, ...] = ()

    @functools.cached_property
    def body(self) -> dict[str, Prop]:
        return properties_of(self.model)


# ------------------------------------------------------------------ reading the generated models


def model_api_version(model: type) -> str:
    """The API version a generated model belongs to: the `vYYYY_MM_DD[_preview]` package of a
    multi-API SDK, else the default of the single-API package's client configuration."""
    match = re.search(r"\.v(\d{4})_(\d{2})_(\d{2})(_preview)?\.", model.__module__ + ".")
    if match:
        return f"{match[1]}-{match[2]}-{match[3]}" + ("-preview" if match[4] else "")
    package = model.__module__.split(".models", 1)[0]
    root = Path(importlib.import_module(package).__file__).parent
    source = (root / "_configuration.py").read_text()
    versions = set(re.findall(r'kwargs\.pop\("api_version",\s*"([^"]+)"\)', source))
    if not versions:
        # Newer single-API packages (azure-mgmt-network 28.x) set the version per request builder:
        # the package's API version is the one (nearly) all of them use.
        builders = (root / "operations" / "_operations.py").read_text()
        found = re.findall(r'_params\.pop\("api-version",\s*"([^"]+)"\)', builders)
        (version, _), *_ = Counter(found).most_common(1)
        return version
    (version,) = versions
    return version


def _models_package(model: type) -> Any:
    return importlib.import_module(model.__module__.rsplit(".", 1)[0])


def _is_msrest(model: type) -> bool:
    return hasattr(model, "_attribute_map")


def _split_key(key: str) -> list[str]:
    """msrest keys separate flattened levels with `.`; a literal dot is escaped as `\\.`."""
    return [part.replace("\\.", ".") for part in re.split(r"(?<!\\)\.", key)]


def _enum_values(annotation: Any) -> frozenset[str] | None:
    for arg in typing.get_args(annotation) or (annotation,):
        if isinstance(arg, type) and issubclass(arg, enum.Enum):
            return frozenset(str(member.value) for member in arg)
        nested = _enum_values(arg) if typing.get_args(arg) else None
        if nested:
            return nested
    return None


@functools.cache
def properties_of(model: type) -> dict[str, Prop]:
    """The definition's properties keyed as azure-native names its inputs: flattened properties
    by their own name, with `wire` holding the full ARM path."""
    return _msrest_properties(model) if _is_msrest(model) else _typespec_properties(model)


def _msrest_kind(type_name: str, package: Any) -> tuple[str, type | None, Prop | None]:
    simple = {
        "str": "string",
        "int": "integer",
        "long": "integer",
        "float": "number",
        "bool": "boolean",
        "duration": "duration",
        "iso-8601": "date-time",
        "rfc-1123": "date-time",
        "date": "string",
        "time": "string",
        "bytearray": "string",  # base64 on the wire
        "base64": "string",
        "decimal": "number",
        "unix-time": "integer",
        "object": "any",
    }
    if type_name in simple:
        return simple[type_name], None, None
    if type_name.startswith("[") and type_name.endswith("]"):
        kind, model, item = _msrest_kind(type_name[1:-1], package)
        return "array", None, Prop(wire="[]", kind=kind, model=model, item=item)
    if type_name.startswith("{") and type_name.endswith("}"):
        kind, model, item = _msrest_kind(type_name[1:-1], package)
        return "map", None, Prop(wire="{}", kind=kind, model=model, item=item)
    model = getattr(package, type_name, None)
    if not isinstance(model, type):
        raise TypeError(f"unknown msrest type {type_name!r} in {package.__name__}")
    return "object", model, None


def _msrest_properties(model: type) -> dict[str, Prop]:
    package = _models_package(model)
    module = sys.modules[model.__module__]
    hints = typing.get_type_hints(model.__init__, globalns=vars(module), localns={"_models": package})
    validation: Mapping[str, Mapping[str, Any]] = getattr(model, "_validation", {})
    props: dict[str, Prop] = {}
    for attr, spec in model._attribute_map.items():
        path = _split_key(spec["key"])
        kind, nested, item = _msrest_kind(spec["type"], package)
        rules = validation.get(attr, {})
        props[path[-1]] = Prop(
            wire=".".join(path),
            kind=kind,
            required=bool(rules.get("required")),
            readonly=bool(rules.get("readonly")),
            enum=_enum_values(hints.get(attr)) if kind == "string" else None,
            minimum=rules.get("minimum"),
            maximum=rules.get("maximum"),
            min_length=rules.get("min_length"),
            max_length=rules.get("max_length"),
            pattern=rules.get("pattern"),
            min_items=rules.get("min_items"),
            max_items=rules.get("max_items"),
            model=nested,
            item=item,
        )
    return props


def _typespec_kind(annotation: Any) -> tuple[str, bool, frozenset[str] | None, type | None, Prop | None]:
    """(kind, optional, enum, model, item) of a TypeSpec model's annotation."""
    args = typing.get_args(annotation)
    optional = type(None) in args
    if typing.get_origin(annotation) is typing.Union:
        members = [a for a in args if a is not type(None)]
        values = _enum_values(annotation)
        if values is not None or all(m is str for m in members):
            return "string", optional, values, None, None
        if len(members) == 1:
            kind, _, values, model, item = _typespec_kind(members[0])
            return kind, optional, values, model, item
        return "any", optional, None, None, None
    origin = typing.get_origin(annotation)
    if origin in (list, typing.List):  # noqa: UP006 - the generated code may use either
        kind, _, values, model, item = _typespec_kind(args[0])
        return "array", False, None, None, Prop(wire="[]", kind=kind, enum=values, model=model, item=item)
    if origin in (dict, typing.Dict):  # noqa: UP006
        kind, _, values, model, item = _typespec_kind(args[1])
        return "map", False, None, None, Prop(wire="{}", kind=kind, enum=values, model=model, item=item)
    if origin is typing.Literal:
        return "string", False, frozenset(str(a) for a in args), None, None
    simple = {
        str: "string",
        int: "integer",
        float: "number",
        bool: "boolean",
        datetime.timedelta: "duration",
        datetime.datetime: "date-time",
    }
    if annotation in simple:
        return simple[annotation], False, None, None, None
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "string", False, _enum_values(annotation), None, None
    if (isinstance(annotation, type) and hasattr(annotation, "_attr_to_rest_field")) or _is_typespec_model(annotation):
        return "object", False, None, annotation, None
    return "any", False, None, None, None


def _is_typespec_model(value: Any) -> bool:
    return isinstance(value, type) and any(hasattr(v, "_rest_name_input") for v in vars(value).values())


def _typespec_fields(model: type) -> Iterator[tuple[str, Any]]:
    seen: set[str] = set()
    for klass in model.__mro__:
        for attr, value in vars(klass).items():
            if attr not in seen and not attr.startswith("_") and hasattr(value, "_rest_name_input"):
                seen.add(attr)
                yield attr, value


def _typespec_properties(model: type) -> dict[str, Prop]:
    package = _models_package(model)
    module = sys.modules[model.__module__]
    hints = typing.get_type_hints(model, globalns=vars(module), localns={"_models": package})
    flattened = set(getattr(model, f"_{model.__name__}__flattened_items", ()))
    props: dict[str, Prop] = {}
    for attr, rest_field in _typespec_fields(model):
        wire = rest_field._rest_name_input or attr
        kind, optional, values, nested, item = _typespec_kind(hints[attr])
        readonly = rest_field._visibility == ["read"]
        if wire == "properties" and flattened and nested is not None:
            for name, inner in properties_of(nested).items():
                props[name] = replace(inner, wire=f"properties.{inner.wire}", readonly=inner.readonly or readonly)
            continue
        props[wire] = Prop(
            wire=wire,
            kind=kind,
            required=not optional and not readonly,
            readonly=readonly,
            enum=values,
            model=nested,
            item=item,
        )
    return props


# ------------------------------------------------------------------ checking rendered inputs

_DURATION = re.compile(
    r"^P(?!$)(?:(?P<y>\d+)Y)?(?:(?P<mo>\d+)M)?(?:(?P<w>\d+)W)?(?:(?P<d>\d+)D)?"
    r"(?:T(?=\d)(?:(?P<h>\d+)H)?(?:(?P<mi>\d+)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?$"
)


def duration_seconds(text: str) -> Decimal | None:
    """Seconds in an ISO 8601 duration as ARM (.NET `XmlConvert.ToTimeSpan`) reads it, exactly
    (a year is 365 days and a month 30, as .NET counts them); None if it is not one."""
    match = _DURATION.match(text)
    if match is None:
        return None
    parts = {k: Decimal(v) if v else Decimal(0) for k, v in match.groupdict().items()}
    days = parts["y"] * 365 + parts["mo"] * 30 + parts["w"] * 7 + parts["d"]
    return ((days * 24 + parts["h"]) * 60 + parts["mi"]) * 60 + parts["s"]


def _type_ok(kind: str, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "duration":
        return isinstance(value, str) and duration_seconds(value) is not None
    if kind == "date-time":
        if not isinstance(value, str):
            return False
        try:
            datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return False
        return True
    if kind in ("object", "map"):
        return isinstance(value, Mapping)
    if kind == "array":
        return isinstance(value, list)
    return True  # any


def _decimal(bound: Any) -> Decimal:
    """A bound as an exact decimal (a float through its shortest repr, so 0.1 stays 0.1)."""
    return bound if isinstance(bound, Decimal) else Decimal(str(bound))


def _generic(path: str) -> str:
    """`a.b[2].c` -> `a.b[].c`; map keys -> `{}` are inserted by the walker itself."""
    return re.sub(r"\[\d+\]", "[]", path)


class Checker:
    """Checks one rendered resource against its definition; collects every mismatch."""

    def __init__(self, stack: str, resource: str, definition: Definition) -> None:
        self.stack = stack
        self.resource = resource
        self.definition = definition
        self.limits: dict[str, list[Limit]] = {}
        for limit in definition.limits:
            self.limits.setdefault(limit.path, []).append(limit)
        self.mismatches: list[Mismatch] = []

    def fail(self, path: str, rule: str, value: Any, detail: str = "") -> None:
        self.mismatches.append(Mismatch(self.stack, self.resource, path, rule, value, detail))

    def check(self, inputs: Mapping[str, Any]) -> list[Mismatch]:
        body = self.definition.body
        params = self.definition.path_params
        for key, value in inputs.items():
            prop = params.get(key) or body.get(key)
            if prop is None:
                self.fail(key, "unknown-property", value, "not in the ARM definition nor a path parameter")
                continue
            self._value(key, key, prop, value)
        for key, prop in {**body, **params}.items():
            if prop.required and key not in inputs:
                self.fail(key, "required", None, f"ARM requires `{prop.wire}`")
        return self.mismatches

    def _object(self, path: str, generic: str, model: type, value: Mapping[str, Any]) -> None:
        props = properties_of(model)
        for key, inner in value.items():
            prop = props.get(key)
            if prop is None:
                self.fail(f"{path}.{key}", "unknown-property", inner, f"not in {model.__name__}")
                continue
            self._value(f"{path}.{key}", f"{generic}.{key}", prop, inner)
        for key, prop in props.items():
            if prop.required and key not in value:
                self.fail(f"{path}.{key}", "required", None, f"{model.__name__} requires `{prop.wire}`")

    def _value(self, path: str, generic: str, prop: Prop, value: Any) -> None:
        if value is None:  # not known until deployment: nothing to check
            return
        if prop.readonly:
            self.fail(path, "read-only", value, f"ARM sets `{prop.wire}`; a request may not")
            return
        if not _type_ok(prop.kind, value):
            self.fail(path, "type", value, f"expected {prop.kind}")
            return
        self._constraints(path, prop, value)
        for limit in self.limits.get(_generic(generic), ()):
            self._limit(path, limit, value)
        if prop.kind == "object" and prop.model is not None:
            self._object(path, generic, prop.model, value)
        elif prop.kind == "array" and prop.item is not None:
            for index, element in enumerate(value):
                self._value(f"{path}[{index}]", f"{generic}[]", prop.item, element)
        elif prop.kind == "map" and prop.item is not None:
            for key, element in value.items():
                self._value(f"{path}.{key}", f"{generic}.{{}}", prop.item, element)

    def _constraints(self, path: str, prop: Prop, value: Any) -> None:
        if prop.enum is not None and value not in prop.enum:
            self.fail(path, "enum", value, f"one of {sorted(prop.enum)}")
        self._bounds(path, value, prop.minimum, prop.maximum, "ARM")
        if isinstance(value, str):
            if prop.min_length is not None and len(value) < prop.min_length:
                self.fail(path, "min-length", value, f"ARM: at least {prop.min_length} characters")
            if prop.max_length is not None and len(value) > prop.max_length:
                self.fail(path, "max-length", value, f"ARM: at most {prop.max_length} characters")
            if prop.pattern is not None and re.search(prop.pattern, value) is None:
                self.fail(path, "pattern", value, f"ARM: must match {prop.pattern}")
        if isinstance(value, list):
            if prop.min_items is not None and len(value) < prop.min_items:
                self.fail(path, "min-items", value, f"ARM: at least {prop.min_items}")
            if prop.max_items is not None and len(value) > prop.max_items:
                self.fail(path, "max-items", value, f"ARM: at most {prop.max_items}")

    def _bounds(self, path: str, value: Any, minimum: Any, maximum: Any, source: str) -> None:
        number: Decimal | None = None
        if isinstance(value, int | float) and not isinstance(value, bool):
            number = Decimal(str(value))
        elif isinstance(value, str):
            number = duration_seconds(value)
        if number is None:
            return
        if minimum is not None and number < _decimal(minimum):
            self.fail(path, "minimum", value, f"{source}: at least {minimum}")
        if maximum is not None and number > _decimal(maximum):
            self.fail(path, "maximum", value, f"{source}: at most {maximum}")

    def _limit(self, path: str, limit: Limit, value: Any) -> None:
        source = f"limit, {limit.source}"
        if limit.enum is not None and value not in limit.enum:
            self.fail(path, "enum", value, f"{source}: one of {sorted(limit.enum, key=str)}")
        self._bounds(path, value, limit.minimum, limit.maximum, source)
        if isinstance(value, str):
            if limit.min_length is not None and len(value) < limit.min_length:
                self.fail(path, "min-length", value, f"{source}: at least {limit.min_length} characters")
            if limit.max_length is not None and len(value) > limit.max_length:
                self.fail(path, "max-length", value, f"{source}: at most {limit.max_length} characters")
            if limit.pattern is not None and re.search(limit.pattern, value) is None:
                self.fail(path, "pattern", value, f"{source}: must match {limit.pattern}")
        if isinstance(value, list | Mapping) and limit.max_items is not None and len(value) > limit.max_items:
            self.fail(path, "max-items", value, f"{source}: at most {limit.max_items}")
        if isinstance(value, Mapping) and limit.key_pattern is not None:
            for key in value:
                if re.search(limit.key_pattern, str(key)) is None:
                    self.fail(f"{path}.{key}", "pattern", key, f"{source}: keys must match {limit.key_pattern}")
        if isinstance(value, Mapping) and limit.max_key_length is not None:
            for key in value:
                if len(str(key)) > limit.max_key_length:
                    self.fail(
                        f"{path}.{key}", "max-length", key, f"{source}: keys at most {limit.max_key_length} characters"
                    )


def reachable_models(model: type) -> list[type]:
    """Every definition reachable from `model` (itself included), each once."""
    seen: dict[type, None] = {}
    pending = [model]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen[current] = None
        for prop in properties_of(current).values():
            while prop is not None:
                if prop.model is not None:
                    pending.append(prop.model)
                prop = prop.item
    return list(seen)


def check_resource(stack: str, resource: str, definition: Definition, inputs: Mapping[str, Any]) -> list[Mismatch]:
    return Checker(stack, resource, definition).check(inputs)
