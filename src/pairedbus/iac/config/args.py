"""Between `PairedNamespace` args and the stack-config model: one validation for both ways in.

A stack's config (`stacks/Pulumi.<stack>.yaml`) and a program's `PairedNamespaceArgs` describe the same pair.
Args are mapped to the config's shape (snake_case field names to the model's keys) and validated by
`parse_stack_config`, so a mistake gets the same one-line error on both paths; a validated `StackConfig`
maps back to args for the repository's own program.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import pulumi
from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from pairedbus.iac.config import StackConfig, StackConfigError, parse_stack_config

#: The prefix of every problem line, as the stack config's.
CONFIG_NAMESPACE = "pairedbus"

#: Stands in for a value that is an output of another resource (e.g. an image built in the same program):
#: it cannot be checked before deployment, only its presence can.
UNKNOWN_UNTIL_DEPLOYMENT = "unknown-until-deployment"


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


def _config_shape(value: Any, annotation: Any, path: str, twice: list[str]) -> Any:
    if isinstance(value, pulumi.Output) or inspect.isawaitable(value):
        return UNKNOWN_UNTIL_DEPLOYMENT
    model = _model(annotation)
    if model is not None and isinstance(value, Mapping):
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
            shaped[config_key] = _config_shape(item, field.annotation, where, twice) if field is not None else item
        return shaped
    if isinstance(value, list | tuple):
        item_type = _contained(annotation, list)
        return [_config_shape(v, item_type, f"{path}[{i}]", twice) for i, v in enumerate(value)]
    if isinstance(value, Mapping):  # a free-form map such as tags: its keys are data, never renamed
        value_type = _contained(annotation, dict)
        return {k: _config_shape(v, value_type, f"{path}.{k}", twice) for k, v in value.items()}
    if isinstance(value, float) and value.is_integer() and not _takes_float(annotation):
        # Pulumi's wire has one number type, a double: another language's `3` arrives here as 3.0.
        return int(value)
    return value


def _takes_float(annotation: Any) -> bool:
    candidates = _unwrap(annotation)
    literals = [v for c in candidates if get_origin(c) is Literal for v in get_args(c)]
    return float in candidates or any(isinstance(v, float) for v in literals)


def config_values(args: Mapping[str, Any]) -> dict[str, Any]:
    """`PairedNamespaceArgs` in the stack config's shape (`pairedbus:` keys without the prefix)."""
    if not isinstance(args, Mapping):
        raise TypeError(f"PairedNamespace args: expected a mapping (PairedNamespaceArgs), got {type(args).__name__}")
    twice: list[str] = []
    shaped = _config_shape(args, StackConfig, "", twice)
    if twice:
        raise StackConfigError([f"{CONFIG_NAMESPACE}:{problem}" for problem in twice])
    return shaped


def stack_config_from_args(args: Mapping[str, Any]) -> StackConfig:
    """Validate args exactly as a stack's config is validated; raises StackConfigError, one line per problem."""
    return parse_stack_config(config_values(args))


def args_from_stack_config(config: StackConfig) -> dict[str, Any]:
    """`PairedNamespaceArgs` saying exactly what the validated config says (its defaults stay the model's)."""
    return config.model_dump(exclude_unset=True)
