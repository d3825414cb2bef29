"""Between `PairedNamespace` args and the stack-config model: one validation for both ways in.

A stack's config (`stacks/Pulumi.<stack>.yaml`) and a program's `PairedNamespaceArgs` describe the same pair.
Args are mapped to the config's shape (snake_case field names to the model's keys) and validated by
`parse_stack_config`, so a mistake gets the same one-line error on both paths. The repository's own program
needs none of this: it hands its validated `StackConfig` to `PairedNamespace.from_config` as it is.

Names, resource-group names, locations, tag values, the image, the registry, the network ids, the diagnostics
workspace, the customer-managed key (vault, key, version, identity) and the firewall rules may be `pulumi.Input`s
(another resource's outputs): each is passed through to a resource input and none decides which resources exist
(`INPUT_PATHS`; an output anywhere else is refused saying what the value decides, `why_known`). No stand-in value
takes their place, ever:
- known values are validated when the component is built, exactly as a stack's config (rules that need a value
  that is not known yet are left for later, so they can neither fail spuriously nor pass a wrong value);
- the whole config is validated again, with every value, inside `Output.apply` once the outputs resolve; a
  failed check raises the same one-line `StackConfigError`, and every resource input that takes an output
  comes from that validated config, so the deployment fails instead of deploying an unchecked value. In a
  preview, where upstream outputs are unknown, those inputs stay unknown.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from enum import Enum
from typing import Annotated, Any, Union, get_args, get_origin

import pulumi
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

from pairedbus.iac.config import StackConfig, StackConfigError, parse_stack_config
from pairedbus.iac.config.cross_field import CROSS_FIELD_RULES
from pairedbus.iac.config.keys import CONFIG_NAMESPACE, key_problems_of
from pairedbus.iac.config.messages import config_problem, inner_model, loc_path
from pairedbus.iac.config.model import _with_outage_windows, with_tier_defaults
from pairedbus.iac.config.partial import _constructed, cross_field_problems_despite

#: The prefix of every problem line, as the stack config's.

#: Where an args value may be a `pulumi.Input` that is not known yet (config key paths; `*` is any key or index).
#: These name, place, tag, run, encrypt, log or let something in: each is passed through to a resource input, and
#: none decides which resources exist (`DECIDES` says what the others decide).
_NAMESPACE_INPUTS: tuple[tuple[str, ...], ...] = (
    ("name",),
    ("location",),
    # Customer-managed key: the key and the identity reading it may come from the same program's Key Vault.
    ("encryption", "keyVaultUri"),
    ("encryption", "keyName"),
    ("encryption", "keyVersion"),
    ("encryption", "userAssignedIdentityId"),
    # Firewall rules: the whole list, or any rule in it (a NAT gateway's address, a subnet's id).
    ("networkRuleSet", "ipRules"),
    ("networkRuleSet", "ipRules", "*"),
    ("networkRuleSet", "virtualNetworkRules"),
    ("networkRuleSet", "virtualNetworkRules", "*"),
)
INPUT_PATHS: tuple[tuple[str, ...], ...] = (
    ("resourceGroups", "*", "name"),
    *((role, *path) for role in ("primary", "secondary") for path in _NAMESPACE_INPUTS),
    ("tags", "*"),
    ("syphon", "image"),
    ("syphon", "location"),
    ("syphon", "registry", "server"),
    ("syphon", "registry", "resourceId"),
    ("network", "*"),
    ("diagnostics", "workspaceId"),
)

#: What a value that must be known decides, by config key path (as INPUT_PATHS): the refusal of an output says it.
DECIDES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("backlogQueueCount",), "how many backlog queues are created"),
    (("backlogAuth",), "whether the deployer's Data Owner role assignment is created"),
    (("resourceGroups", "*", "create"), "whether the resource group is created"),
    (("*", "sku"), "whether the namespace gets a private endpoint"),
    (("network",), "whether private endpoints are created"),
    (("queues",), "which queues are created"),
    (("queues", "*"), "which queues are created"),
    (("queues", "*", "name"), "which queues are created"),
    (("topics",), "which topics and subscriptions are created"),
    (("topics", "*"), "which topics and subscriptions are created"),
    (("topics", "*", "name"), "which topics and subscriptions are created"),
    (("topics", "*", "subscriptions"), "which subscriptions are created"),
    (("topics", "*", "subscriptions", "*"), "which subscriptions are created"),
    (("topics", "*", "subscriptions", "*", "name"), "which subscriptions are created"),
    (("production",), "which resources are protected"),
    (("namespaceLock",), "whether the namespaces' locks are created"),
    (("diagnostics",), "whether diagnostic settings are created"),
    (("*", "networkRuleSet"), "whether a network rule set is created"),
    (("syphon", "minReplicas"), "whether the syphon gets a scale rule and its Data Owner role assignment"),
    (("syphon", "maxReplicas"), "whether the syphon gets a scale rule and its Data Owner role assignment"),
    (("syphon", "registry"), "whether the syphon's AcrPull role assignment is created"),
)

Loc = tuple[str | int, ...]


class _Deferred:
    """Where an output stood while the known values are checked: never a value, never reaches a resource (the
    checks treat it as not there; the config handed on holds the validated output instead)."""

    __slots__ = ("loc",)

    def __init__(self, loc: Loc) -> None:
        self.loc = loc

    def __repr__(self) -> str:
        return f"<output at {loc_path(self.loc)}>"


def _matches(pattern: tuple[str, ...], loc: Loc) -> bool:
    return len(pattern) == len(loc) and all(a in ("*", b) for a, b in zip(pattern, loc, strict=True))


def may_be_input(loc: Loc) -> bool:
    """Whether the value at this config key path may be an output of another resource."""
    return any(_matches(p, loc) for p in INPUT_PATHS)


def why_known(loc: Loc) -> str:
    """Why the value at this config key path must be known when the component is built, truthfully: what it
    decides, or that the component reads it to build the rest."""
    decides = next((what for pattern, what in DECIDES if _matches(pattern, loc)), None)
    if decides is not None:
        return f"it decides {decides}"
    return (
        "the component reads it to build its resources; outputs may be names, locations, tag values, the image, "
        "ARM ids, Key Vault keys and firewall rules"
    )


def _unwrap(annotation: Any) -> list[Any]:
    """The candidate types of an annotation: `X | None` and `Annotated[X, ...]` give X."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _unwrap(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return [t for arg in get_args(annotation) if arg is not type(None) for t in _unwrap(arg)]
    return [annotation]


def _model(annotation: Any) -> type[BaseModel] | None:
    for candidate in _unwrap(annotation):
        if inspect.isclass(candidate) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _contained(annotation: Any, container: type) -> Any:
    """The item type of `list[X]` (container=list) or the value type of `dict[str, X]` (container=dict)."""
    for candidate in _unwrap(annotation):
        if get_origin(candidate) is container:
            return get_args(candidate)[-1]
    return None


def _config_shape(
    value: Any, annotation: Any, path: str, twice: list[str], loc: Loc = (), deferred: dict[Loc, Any] | None = None
) -> Any:
    if isinstance(value, pulumi.Output) or inspect.isawaitable(value):
        if deferred is None:
            raise TypeError(f"{path}: an output where none can be")
        deferred[loc] = value
        return _Deferred(loc)
    if isinstance(value, Enum):  # another language's enum value arrives as the schema enum's member
        value = value.value
    model = _model(annotation)
    if model is not None and isinstance(value, Mapping):
        return _model_shape(value, model, path, twice, loc, deferred)
    if isinstance(value, list | tuple):
        item_type = _contained(annotation, list)
        return [_config_shape(v, item_type, f"{path}[{i}]", twice, (*loc, i), deferred) for i, v in enumerate(value)]
    if isinstance(value, Mapping):  # a free-form map such as tags: its keys are data, never renamed
        value_type = _contained(annotation, dict)
        return {k: _config_shape(v, value_type, f"{path}.{k}", twice, (*loc, k), deferred) for k, v in value.items()}
    # Numbers as they are: the model is strict, so `4.0` for an integer is refused here as in a stack file
    # (another language's `4`, a double on Pulumi's wire, is decoded by the provider: `iac.provider.served`).
    return value


def _model_shape(
    value: Mapping[Any, Any], model: Any, path: str, twice: list[str], loc: Loc, deferred: dict[Loc, Any] | None
) -> dict[str, Any]:
    """A mapping for a pydantic model: each key under the config's spelling (alias), each value shaped
    by its field's annotation; a key given twice (as `snake` and `camelCase`) is a problem line."""
    by_alias = {field.alias: name for name, field in model.model_fields.items() if field.alias}
    shaped: dict[str, Any] = {}
    given_as: dict[str, str] = {}
    for key, item in value.items():
        name = key if key in model.model_fields else by_alias.get(key)
        field = model.model_fields[name] if name is not None else None
        # unknown keys keep the config's spelling, so the model's "unknown key" line names them as a config would
        config_key = (field.alias or name) if field is not None else (to_camel(key) if isinstance(key, str) else key)
        where = f"{path}.{config_key}" if path else str(config_key)
        if config_key in shaped:
            twice.append(f"{where}: given twice (as {given_as[config_key]!r} and {key!r}), expected once")
            continue
        given_as[config_key] = key
        inner = (*loc, config_key)
        annotation = field.annotation if field is not None else None
        shaped[config_key] = _config_shape(item, annotation, where, twice, inner, deferred)
    return shaped


def _shape(args: Mapping[str, Any], deferred: dict[Loc, Any] | None) -> dict[str, Any]:
    if not isinstance(args, Mapping):
        raise TypeError(f"PairedNamespace args: expected a mapping (PairedNamespaceArgs), got {type(args).__name__}")
    twice: list[str] = []
    shaped = _config_shape(args, StackConfig, "", twice, (), deferred)
    if twice:
        raise StackConfigError([f"{CONFIG_NAMESPACE}:{problem}" for problem in twice])
    return shaped


def config_values(args: Mapping[str, Any]) -> dict[str, Any]:
    """`PairedNamespaceArgs` in the stack config's shape (`pairedbus:` keys without the prefix); every value must
    be known (a value that is an output: `stack_config_from_args`)."""
    return _shape(args, None)


def stack_config_from_args(args: Mapping[str, Any], pair: str | None = None) -> StackConfig:
    """Validate args exactly as a stack's config is validated; raises StackConfigError, one line per problem.

    Where args hold outputs (at `INPUT_PATHS` only), the config returned holds, at those places, outputs of the
    values validated once they resolve (see the module docstring); everything else is plain and validated now.
    `pair`: the component's name, which then starts every problem line instead of the config's namespace
    (`billing: primary.location: ...`), now and when the outputs resolve, so a program with several pairs says
    which one is wrong.
    """
    with _problems_of(pair):
        return _stack_config_from_args(args, pair)


@contextmanager
def _problems_of(pair: str | None) -> Iterator[None]:
    """Re-raise a StackConfigError with each line naming `pair` (None: as the stack config words it)."""
    try:
        yield
    except StackConfigError as exc:
        if pair is None:
            raise
        prefix = f"{CONFIG_NAMESPACE}:"
        raise StackConfigError([f"{pair}: {p.removeprefix(prefix)}" for p in exc.problems]) from None


def _stack_config_from_args(args: Mapping[str, Any], pair: str | None) -> StackConfig:
    deferred: dict[Loc, Any] = {}
    shaped = with_tier_defaults(_shape(args, deferred))
    if not deferred:
        return parse_stack_config(shaped)
    _check_known(shaped, deferred)

    def validated(values: list[Any]) -> StackConfig:
        with _problems_of(pair):
            return _validated(shaped, list(deferred), values)

    resolved = pulumi.Output.all(*deferred.values()).apply(validated)
    config = _with_outage_windows(_constructed(StackConfig, shaped))
    for loc in deferred:
        config = _replaced(config, loc, resolved.apply(lambda whole, at=loc: _at(whole, at)))
    for loc, value in _known_inputs(shaped, deferred):
        config = _replaced(config, loc, _field_value(loc, value))
    return config


def _qualified(problem: str) -> str:
    return f"{CONFIG_NAMESPACE}:{problem}"


def _under(loc: tuple[Any, ...], deferred: Mapping[Loc, Any]) -> bool:
    return any(loc[: len(at)] == at for at in deferred)


def _check_known(shaped: dict[str, Any], deferred: Mapping[Loc, Any]) -> None:
    """Every problem of the known values, as `parse_stack_config` words it; nothing about the outputs' places."""
    problems = [
        _qualified(
            f"{loc_path(loc)}: expected a value known when the component is built, got an output of another "
            f"resource ({why_known(loc)})"
        )
        for loc in deferred
        if not may_be_input(loc)
    ]
    if problems:
        raise StackConfigError(problems)
    try:
        StackConfig.model_validate(shaped)
        errors: list[Any] = []
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    known = [e for e in errors if not _under(tuple(e["loc"]), deferred)]
    problems = [_qualified(f"{loc_path(e['loc'])}: {config_problem(e, StackConfig)}") for e in known]
    # Rules that touch a value not known yet are skipped here (as for an invalid value) and run on resolution. A
    # tag value not known yet counts as empty, so the tag rules still check every tag name and every known value
    # now (an empty value breaks no rule: nothing can fail on its account, and it is checked when it resolves).
    unknown = [{"loc": loc, "type": "deferred"} for loc in deferred if loc[0] != "tags"]
    checked = _filled(shaped, {loc: "" for loc in deferred if loc[0] == "tags"}, keep_others=True)
    problems += [
        _qualified(p) for p in cross_field_problems_despite(StackConfig, checked, [*known, *unknown], CROSS_FIELD_RULES)
    ]
    carried = key_problems_of(shaped)
    if carried or problems:
        raise StackConfigError([*carried, *problems])


def _validated(shaped: dict[str, Any], locs: list[Loc], values: list[Any]) -> StackConfig:
    """The whole config with the outputs' resolved values, validated; raises StackConfigError as at build time."""
    whole = _filled(shaped, dict(zip(locs, values, strict=True)))
    return parse_stack_config(config_values(whole))


def _filled(value: Any, values: Mapping[Loc, Any], *, keep_others: bool = False) -> Any:
    """`value` with the outputs' places filled from `values` (with keep_others, places not in it stay as they are)."""
    if isinstance(value, _Deferred):
        return values.get(value.loc, value) if keep_others else values[value.loc]
    if isinstance(value, dict):
        return {k: _filled(v, values, keep_others=keep_others) for k, v in value.items()}
    if isinstance(value, list):
        return [_filled(v, values, keep_others=keep_others) for v in value]
    return value


def _known_inputs(shaped: Mapping[str, Any], deferred: Mapping[Loc, Any]) -> list[tuple[Loc, Any]]:
    """The known values at the places that may hold outputs (they are normalised by their field's rule)."""
    found: list[tuple[Loc, Any]] = []

    def walk(value: Any, loc: Loc) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, (*loc, key))
        elif loc and may_be_input(loc) and loc not in deferred and value is not None and not _holds_output(value):
            found.append((loc, value))

    walk(shaped, ())
    return found


def _holds_output(value: Any) -> bool:
    """Whether a known list holds an output (its items are then in the config as they were given, each output
    replaced by its validated value: the list as a whole is validated when they resolve)."""
    return isinstance(value, list) and any(isinstance(v, _Deferred) or _holds_output(v) for v in value)


def _field(loc: Loc) -> Any:
    """The pydantic field of a config key path (a free-form map's value: the map's value type)."""
    model: Any = StackConfig
    field = None
    for part in loc:
        if model is None:  # inside a free-form map
            return None
        field = model.model_fields.get(part) or next(f for f in model.model_fields.values() if f.alias == part)
        model = inner_model(field.annotation)
    return field


def _field_value(loc: Loc, value: Any) -> Any:
    field = _field(loc)
    if field is None:
        return value
    return TypeAdapter(Annotated[field.annotation, *field.metadata]).validate_python(value, strict=True)


def _name_of(model: BaseModel, part: str) -> str:
    fields = type(model).model_fields
    return part if part in fields else next(name for name, f in fields.items() if f.alias == part)


def _at(value: Any, loc: Loc) -> Any:
    for part in loc:
        value = value[part] if isinstance(value, dict | list) else getattr(value, _name_of(value, part))
    return value


def _replaced(value: Any, loc: Loc, new: Any) -> Any:
    """`value` with the thing at `loc` replaced (frozen models are copied, never validated again)."""
    if not loc:
        return new
    head, rest = loc[0], loc[1:]
    if isinstance(value, BaseModel):
        name = _name_of(value, head)
        return value.model_copy(update={name: _replaced(getattr(value, name), rest, new)})
    if isinstance(value, dict):
        return {**value, head: _replaced(value[head], rest, new)}
    items = list(value)
    items[head] = _replaced(items[head], rest, new)
    return items


def settings_of(value: Any) -> Any:
    """A validated config (part) as plain args: models as dicts of their set fields (None left out); outputs stay
    as they are (`model_dump` would warn about them)."""
    if isinstance(value, BaseModel):
        return {name: settings_of(v) for name in type(value).model_fields if (v := getattr(value, name)) is not None}
    if isinstance(value, list):
        return [settings_of(v) for v in value]
    if isinstance(value, dict):
        return {k: settings_of(v) for k, v in value.items()}
    return value


def args_from_stack_config(config: StackConfig) -> dict[str, Any]:
    """`PairedNamespaceArgs` saying exactly what the validated config says (its defaults stay the model's): a
    second pair's args derived from a stack's (tests/iac/render/test_stacks_unchanged.py); a program with a
    validated config builds its pair with `PairedNamespace.from_config` instead."""
    return config.model_dump(exclude_unset=True)
