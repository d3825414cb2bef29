"""Pydantic's errors as this project's problem lines: `expected ..., got ...`, with the closest
known key for an unknown one and the right spelling for an enum value in the wrong case."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from pairedbus.iac.config.keys import CONFIG_NAMESPACE
from pairedbus.iac.config.problems import did_you_mean


def loc_path(loc: tuple[Any, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _model_at(root: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class a key path (without its last part) points into, for did-you-mean hints."""
    model = root
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part) or next((f for f in model.model_fields.values() if f.alias == part), None)
        if field is None:
            return None
        inner = inner_model(field.annotation)
        if inner is None:
            return None
        model = inner
    return model


def inner_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = inner_model(arg)
        if found is not None:
            return found
    return None


def _unknown_key(root: type[BaseModel], loc: tuple[Any, ...]) -> str:
    model = _model_at(root, loc[:-1])
    known = [f.alias or name for name, f in model.model_fields.items()] if model else []
    hint = did_you_mean(str(loc[-1]), known)
    if hint and len(loc) == 1:
        hint = hint.replace("did you mean ", f"did you mean {CONFIG_NAMESPACE}:")
    return "unknown key" + (hint or " (check its spelling against the config reference in README.md)")


def config_problem(error: Mapping[str, Any], root: type[BaseModel]) -> str:
    """One pydantic error as `expected ..., got ...` (unknown keys with the closest known one)."""
    if error["type"] == "missing":
        return "expected a value, none given"
    if error["type"] == "extra_forbidden":
        return _unknown_key(root, tuple(error["loc"]))
    message = str(error["msg"]).removeprefix("Value error, ")
    if message.startswith("expected"):
        return message
    message = message.removeprefix("Input should be ").removeprefix("Input should ")
    shown = repr(error.get("input"))
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return f"expected {message[0].lower()}{message[1:]}, got {shown}{_literal_hint(error)}"


def _literal_hint(error: Mapping[str, Any]) -> str:
    """`serviceprincipal` -> ` (did you mean 'ServicePrincipal'? the case matters)`."""
    value = error.get("input")
    if error["type"] not in ("literal_error", "enum") or not isinstance(value, str):
        return ""
    choices = [
        c.strip().strip("'") for c in str(error.get("ctx", {}).get("expected", "")).replace(" or ", ",").split(",")
    ]
    same_but_case = [c for c in choices if c.lower() == value.strip().lower()]
    return f" (did you mean {same_but_case[0]!r}? the case matters)" if same_but_case else ""
