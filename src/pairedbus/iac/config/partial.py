"""Cross-field rules over a config whose fields are not all valid, so that every problem of a
stack shows in one pass, not only after the first batch is fixed."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from pairedbus.iac.config.messages import inner_model

Rule = Callable[[Any], Iterable[str]]


class _Invalid:
    """Stands for a value that failed validation: a cross-field rule that touches it (compares,
    tests, reads it) stops, so no rule reports a consequence of a value already reported."""

    def _stop(self, *args: Any, **kwargs: Any) -> Any:
        raise _InvalidInput

    __bool__ = __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __hash__ = _stop
    __mod__ = __rmod__ = __mul__ = __rmul__ = __len__ = __iter__ = __contains__ = __getattr__ = _stop
    __format__ = __str__ = __repr__ = __index__ = __int__ = __float__ = _stop


class _InvalidInput(Exception):
    pass


def _mark_invalid(data: Any, loc: tuple[Any, ...], unknown_key: bool) -> None:
    """Replace the value at `loc` (or the deepest part of it that exists) with _Invalid, or drop an
    unknown key."""
    node = data
    for depth, part in enumerate(loc):
        last = depth == len(loc) - 1
        present = (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        )
        if last or not present or not isinstance(node[part], (dict, list)):
            if isinstance(node, dict) and unknown_key and last:
                node.pop(part, None)
            elif isinstance(node, dict) and isinstance(part, str):
                node[part] = _Invalid()
            elif present:
                node[part] = _Invalid()
            return
        node = node[part]


def _constructed(model: type[BaseModel], data: Any) -> Any:
    """The model built from raw values without validating them, so that cross-field rules can look
    at the parts of a config that are fine."""
    if not isinstance(data, Mapping):
        return data
    values: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        key = field.alias if field.alias in data else name
        if key not in data:
            values[name] = _Invalid() if field.is_required() else field.get_default(call_default_factory=True)
            continue
        raw, inner = data[key], inner_model(field.annotation)
        if inner is not None and isinstance(raw, list):
            values[name] = [_constructed(inner, item) for item in raw]
        else:
            values[name] = _constructed(inner, raw) if inner is not None else raw
    return model.model_construct(**values)


def cross_field_problems_despite(
    root: type[BaseModel], values: Mapping[str, Any], errors: list[Any], rules: Iterable[Rule]
) -> list[str]:
    """The cross-field problems of a config whose fields are not all valid, so that every problem
    shows in one pass: each rule runs on the values as given, with every invalid one replaced by
    a marker; a rule that touches a marker is skipped (its input is reported already)."""
    data = copy.deepcopy(dict(values))
    for error in errors:
        _mark_invalid(data, tuple(error["loc"]), error["type"] == "extra_forbidden")
    config = _constructed(root, data)
    problems: list[str] = []
    for rule in rules:
        try:
            problems += list(rule(config))
        except Exception:  # a value it needs is invalid (or missing), and reported already
            continue
    return problems
