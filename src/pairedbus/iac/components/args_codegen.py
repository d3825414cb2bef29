"""Writes `args.py`, the components' typed settings, from the stack-config model: the model is the one declaration.

Pulumi's component analyzer builds the package schema (what every other language sees) from `TypedDict`s and reads
each field's description from the docstring under it in the source (`pulumi.provider.experimental.analyzer`,
`get_docstring`), so the settings must exist as source. This module writes that source from the model: each model
becomes a `TypedDict` (`NamespaceConfig` -> `NamespaceSettings`, `StackConfig` -> `PairedNamespaceArgs`), each field
keeps its name, its description (with the model's default and range appended), and a type that says what a program
may pass: a choice's enum, `NotRequired` where the model has a default, `pulumi.Input` where an output of another
resource may stand (`args_mapping.INPUT_PATHS`). `tests/iac/components/test_args.py` fails when the file and the
model differ; `python -m pairedbus.iac.components.args_codegen` writes it again.
"""

from __future__ import annotations

import inspect
import sys
import textwrap
import types
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from pairedbus.iac.config.args_mapping import may_be_input
from pairedbus.iac.config.schema import StackConfig

#: Where the generated module lives (beside this one).
TARGET = Path(__file__).with_name("args.py")
#: The whole pair's args: its own name and words (the model's speak of a stack file).
ROOT_NAME = "PairedNamespaceArgs"
ROOT_DOC = "A paired namespace: the same settings a stack's `pairedbus:` config holds, in snake_case."
#: The parts' defaults for use one by one (a part given no value assumes the model's): name -> model.
DEFAULTS = {
    "NAMESPACE_DEFAULTS": "NamespaceConfig",
    "ENTITY_DEFAULTS": "QueueConfig",
    "SYPHON_DEFAULTS": "SyphonConfig",
    "STACK_DEFAULTS": "StackConfig",
}
WIDTH = 120

Loc = tuple[str, ...]


def settings_name(model: type[BaseModel]) -> str:
    return ROOT_NAME if model is StackConfig else model.__name__.removesuffix("Config") + "Settings"


def _optional(annotation: Any) -> Any:
    """`X | None` and `Annotated[X, ...]` -> X."""
    if get_origin(annotation) is Annotated:
        return _optional(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        inner = [a for a in get_args(annotation) if a is not type(None)]
        if len(inner) == 1:
            return _optional(inner[0])
    return annotation


def _python_type(annotation: Any, loc: Loc, found: dict[type, Loc]) -> str:
    """The args' type for a model annotation at a config key path (models found on the way are noted)."""
    annotation = _optional(annotation)
    origin = get_origin(annotation)
    if inspect.isclass(annotation) and issubclass(annotation, BaseModel):
        found.setdefault(annotation, loc)
        plain = settings_name(annotation)
    elif inspect.isclass(annotation) and issubclass(annotation, Enum):
        found.setdefault(annotation, loc)
        plain = annotation.__name__
    elif origin is Literal:
        kinds = {type(v) for v in get_args(annotation)}
        plain = "str" if kinds == {str} else "int" if kinds == {int} else "float"
    elif origin is list:
        plain = f"list[{_python_type(get_args(annotation)[0], (*loc, '*'), found)}]"
    elif origin is dict:
        plain = f"dict[str, {_python_type(get_args(annotation)[1], (*loc, '*'), found)}]"
    elif annotation in (str, int, float, bool):
        plain = annotation.__name__
    else:
        raise TypeError(f"{'.'.join(loc)}: no args type for {annotation!r}")
    return f"pulumi.Input[{plain}]" if may_be_input(loc) else plain


def _shown(value: Any) -> str:
    """A default as a stack file writes it."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, list):
        return ", ".join(_shown(v) for v in value)
    return str(value)


def _bounds(field: FieldInfo) -> str:
    low = next((m.ge for m in field.metadata if isinstance(m, annotated_types.Ge)), None)
    high = next((m.le for m in field.metadata if isinstance(m, annotated_types.Le)), None)
    if low is None or high is None:
        return ""
    return f" From {low} to {high}."


def description(field: FieldInfo) -> str:
    """The field's description, with its range and its default as the model declares them."""
    text = (field.description or "").strip()
    text += _bounds(field)
    default = field.get_default(call_default_factory=True)
    if not field.is_required() and default is not None and default not in ([], {}):
        text += f" Default: {_shown(default)}."
    return text


def _docstring(text: str, indent: str) -> list[str]:
    """A docstring as the analyzer reads it and ruff formats it: wrapped, closing quotes on its last line."""
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = textwrap.wrap(f'"""{text}"""', WIDTH - len(indent), break_long_words=False, break_on_hyphens=False)
    return [f"{indent}{line}" for line in lines]


def _field_line(name: str, field: FieldInfo, loc: Loc, found: dict[type, Loc]) -> str:
    annotation = _python_type(field.annotation, loc, found)
    return f"    {name}: {annotation if field.is_required() else f'NotRequired[{annotation}]'}"


def _models(root: type[BaseModel]) -> Iterator[tuple[type[BaseModel], Loc]]:
    """Every model under `root` with the key path it is first met at, each after the models its fields use."""
    done: set[type] = set()

    def visit(model: type[BaseModel], loc: Loc) -> Iterator[tuple[type[BaseModel], Loc]]:
        done.add(model)
        found: dict[type, Loc] = {}
        for name, field in model.model_fields.items():
            _python_type(field.annotation, (*loc, field.alias or name), found)
        for inner, at in found.items():
            if issubclass(inner, BaseModel) and inner not in done:
                yield from visit(inner, at)
        yield model, loc

    yield from visit(root, ())


def _enums(root: type[BaseModel]) -> list[str]:
    found: dict[type, Loc] = {}
    for model, loc in _models(root):
        for name, field in model.model_fields.items():
            _python_type(field.annotation, (*loc, field.alias or name), found)
    return sorted(t.__name__ for t in found if issubclass(t, Enum))


def _class_lines(model: type[BaseModel], loc: Loc) -> list[str]:
    doc = ROOT_DOC if model is StackConfig else " ".join((model.__doc__ or "").split())
    lines = [f"class {settings_name(model)}(TypedDict):", *_docstring(doc, "    "), ""]
    found: dict[type, Loc] = {}
    for name, field in model.model_fields.items():
        lines.append(_field_line(name, field, (*loc, field.alias or name), found))
        lines += _docstring(description(field), "    ")
    return lines


HEADER = '''"""The components' typed settings: plain dicts (TypedDicts), the form a Pulumi program in any language can pass
and Pulumi's component-provider analyzer (`pulumi.provider.experimental.analyzer`) turns into the package schema.

GENERATED from the stack-config model (`pairedbus.iac.config.schema`) by `python -m
pairedbus.iac.components.args_codegen`: do not edit; change the model and run it (tests/iac/components/test_args.py
fails while the two differ). Field names are the model's (the stack config's keys in snake_case; the schema and every
other language spell them in camelCase, exactly as `stacks/Pulumi.<stack>.yaml` does). Plain fields must be known
before anything is registered; `pulumi.Input[...]` fields may be outputs of other resources
(`args_mapping.INPUT_PATHS`), passed through to resource inputs and checked when they resolve.

No `from __future__ import annotations` here: the analyzer reads these annotations as live types.
"""
'''


def args_source() -> str:
    """The source of `args.py` for the model as it is."""
    enums = _enums(StackConfig)
    models = sorted(set(DEFAULTS.values()) | {"defaults_of"})
    out = [
        HEADER,
        "from typing import Any, NotRequired, TypedDict",
        "",
        "import pulumi",
        "",
        f"from pairedbus.iac.config.choices import {', '.join(enums)}",
        f"from pairedbus.iac.config.schema import {', '.join(models)}",
        "",
        "#: What a part assumes when used on its own and a setting is left out: the model's defaults, read from it.",
        *(f"{name}: dict[str, Any] = defaults_of({model})" for name, model in DEFAULTS.items()),
    ]
    for model, loc in _models(StackConfig):
        out += ["", "", *_class_lines(model, loc)]
    return "\n".join(out) + "\n"


def main() -> None:
    TARGET.write_text(args_source(), encoding="utf-8")
    print(f"wrote {TARGET}", file=sys.stderr)


if __name__ == "__main__":
    main()
