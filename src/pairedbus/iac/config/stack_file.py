"""Reading a stack file (`Pulumi.<stack>.yaml`) as the Pulumi CLI does, refusing what it refuses.

- Text must be UTF-8 (the CLI's YAML parser, go-yaml v3, reads nothing else).
- YAML is read with go-yaml v3's scalar rules, not PyYAML's YAML 1.1 ones: only true/false are
  booleans (`yes`, `on` stay strings), a date stays the string it is written as (go-yaml keeps
  timestamp-like scalars as strings when decoding into interface{}), no base-60 numbers.
- A key twice in one mapping is an error (go-yaml v3: "mapping key ... already defined").
- Aliases may not expand beyond MAX_EXPANDED_VALUES values, nor refer to themselves: an alias bomb
  is refused before anything expands it.
- Top-level keys are the ones Pulumi reads (`STACK_FILE_KEYS`); the CLI ignores any other in silence,
  so a misspelt `encryptionsaltt:` would quietly lose its setting: refused here, with a did-you-mean.
- Every key of `config:` goes through Pulumi's ParseKey (`keys.parse_config_key`);
  `ns:config:name` is the same key as `ns:name`.

Problems with single keys are collected (every one, in one pass) and travel with the settings
(`StackSettings.problems`); a file that cannot be read at all is one UserError line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Final

import yaml

from pairedbus.errors import UserError
from pairedbus.iac.config.keys import parse_config_key, unparsable_key_problem

#: Values (scalars, sequences, mappings) a stack file may hold once its aliases are expanded:
#: 1,000 entities with all their options fit a hundred times over; an alias bomb does not.
MAX_EXPANDED_VALUES: Final = 200_000
#: How deeply values may nest (the deepest real value, a subscription option, is at depth 5).
MAX_STACK_FILE_DEPTH: Final = 32
#: Bytes a stack file may have.
MAX_STACK_FILE_BYTES: Final = 8 * 1024 * 1024
#: The top-level keys of a stack file the Pulumi CLI reads: the yaml tags of `workspace.ProjectStack`
#: (pulumi/pulumi sdk/go/common/workspace/project.go, at 1b5949891b3cefcb9974752b24a5ecef0acc86c8). go-yaml
#: matches them case-sensitively; `LoadProjectStackBytes` (loaders.go) drops every other key without a word.
STACK_FILE_KEYS: Final = ("config", "encryptedkey", "encryptionsalt", "environment", "secretsprovider")
#: Stand-in for a `secure:` value: the offline render cannot decrypt it and must not need to.
SECRET_PLACEHOLDER: Final = "[secret]"

_MERGE_TAG = "tag:yaml.org,2002:merge"
_GO_YAML_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_GO_YAML_INT = re.compile(r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+)$")
_GO_YAML_FLOAT = re.compile(
    r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)


class _GoYamlLoader(yaml.SafeLoader):
    """SafeLoader with go-yaml v3's implicit scalar types (see the module docstring)."""


_GoYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag.rsplit(":", 1)[-1] not in {"bool", "int", "float", "timestamp"}]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_GoYamlLoader.add_implicit_resolver("tag:yaml.org,2002:bool", _GO_YAML_BOOL, list("tTfF"))
_GoYamlLoader.add_implicit_resolver("tag:yaml.org,2002:int", _GO_YAML_INT, list("-+0123456789"))
_GoYamlLoader.add_implicit_resolver("tag:yaml.org,2002:float", _GO_YAML_FLOAT, list("-+0123456789."))


class StackSettings(dict[str, str]):
    """A stack's config as the CLI passes it to the program (full keys, string values), plus the
    problems found reading it, reported with the config's own problems in one pass."""

    def __init__(self, problems: list[str] | None = None) -> None:
        super().__init__()
        self.problems: list[str] = list(problems or [])


def read_text(path: Path) -> str:
    """The file as text; one line naming it when it is too big or not UTF-8."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path.name}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_STACK_FILE_BYTES:
        raise UserError(f"{path.name}: expected at most {MAX_STACK_FILE_BYTES} bytes, got {len(data)}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UserError(
            f"{path.name} line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); save the file as UTF-8"
        ) from None


def _expanded_size(node: yaml.Node, memo: dict[int, int], in_progress: set[int], name: str, depth: int = 0) -> int:
    """How many values the node stands for once every alias in it is expanded."""
    if depth > MAX_STACK_FILE_DEPTH:
        raise UserError(f"{name} line {node.start_mark.line + 1}: values nested more than {MAX_STACK_FILE_DEPTH} deep")
    key = id(node)
    if key in memo:
        return memo[key]
    if key in in_progress:
        raise UserError(f"{name} line {node.start_mark.line + 1}: an alias refers to the value it is part of")
    in_progress.add(key)
    size = 1
    if isinstance(node, yaml.SequenceNode):
        children = node.value
    elif isinstance(node, yaml.MappingNode):
        children = [child for pair in node.value for child in pair]
    else:
        children = []
    for child in children:
        size += _expanded_size(child, memo, in_progress, name, depth + 1)
        if size > MAX_EXPANDED_VALUES:
            raise UserError(
                f"{name} line {node.start_mark.line + 1}: YAML aliases expand to more than {MAX_EXPANDED_VALUES} "
                "values (an alias bomb?); write the values out or use fewer aliases"
            )
    in_progress.discard(key)
    memo[key] = size
    return size


def _child_path(path: str, key: str) -> str:
    if not path:
        return key
    if path == "config":
        return key  # config keys are shown as Pulumi names them: `pairedbus:primary`
    return f"{path}.{key}"


def _duplicate_keys(node: yaml.Node, path: str, name: str, seen_nodes: set[int]) -> list[str]:
    """`<file> line N: <key path>: duplicate key` for every key repeated in one mapping."""
    if id(node) in seen_nodes:
        return []
    seen_nodes.add(id(node))
    problems: list[str] = []
    if isinstance(node, yaml.SequenceNode):
        for i, child in enumerate(node.value):
            problems += _duplicate_keys(child, f"{path}[{i}]", name, seen_nodes)
    elif isinstance(node, yaml.MappingNode):
        first_line: dict[tuple[str, str], int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            key_text = str(key_node.value) if isinstance(key_node, yaml.ScalarNode) else "<complex key>"
            key_path = _child_path(path, key_text)
            line = key_node.start_mark.line + 1
            identity = (key_node.tag, key_text)
            if identity in first_line:
                problems.append(
                    f"{name} line {line}: {key_path}: duplicate key, already set on line {first_line[identity]} "
                    "(Pulumi refuses the file; YAML readers that accept it keep only the last value)"
                )
            first_line.setdefault(identity, line)
            problems += _duplicate_keys(value_node, key_path, name, seen_nodes)
    return problems


def load_yaml_document(path: Path) -> tuple[dict[str, Any], list[str]]:
    """The file's top-level mapping, and its duplicate-key problems. Raises UserError (one line)
    for a file that cannot be read: not UTF-8, not YAML, an alias bomb, not a mapping."""
    text = read_text(path)
    loader = _GoYamlLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise UserError(f"{path.name}: expected a YAML mapping at the top level, the file is empty")
        _expanded_size(node, {}, set(), path.name)
        problems = _duplicate_keys(node, "", path.name, set())
        data = loader.construct_document(node)
    except RecursionError:
        raise UserError(f"{path.name}: values nested more than {MAX_STACK_FILE_DEPTH} deep") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise UserError(f"{path.name}{where}: not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        raise UserError(f"{path.name}: expected a YAML mapping at the top level")
    return data, problems


def _as_setting(value: Any) -> str:
    """A config value as the CLI hands it to the program: strings as they are, the rest as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def _unknown_top_level_keys(document: dict[Any, Any], name: str) -> list[str]:
    import difflib

    problems = []
    for key in document:
        if key in STACK_FILE_KEYS:
            continue
        shown = str(key)[:80]
        close = difflib.get_close_matches(shown.lower(), STACK_FILE_KEYS, n=1, cutoff=0.7)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        problems.append(
            f"{name}: {shown!r}: not a stack file key{hint}; Pulumi reads {', '.join(STACK_FILE_KEYS)} and ignores "
            "any other"
        )
    return problems


def read_stack_settings(path: Path) -> tuple[StackSettings, list[str]]:
    """The stack's config as the CLI passes it to the program: full keys (`project:key`),
    values as strings (structured ones as JSON), and the keys of secrets."""
    document, problems = load_yaml_document(path)
    problems = [*problems, *_unknown_top_level_keys(document, path.name)]
    config = document.get("config") or {}
    if not isinstance(config, dict):
        raise UserError(f"{path.name}: 'config' must be a mapping of keys to values")
    settings = StackSettings(problems)
    secrets: list[str] = []
    for key, value in config.items():
        parsed = parse_config_key(key)
        if parsed is None:
            settings.problems.append(f"{path.name}: {unparsable_key_problem(key)}")
            continue
        full_key = ":".join(parsed)
        if full_key in settings:
            settings.problems.append(f"{path.name}: {key}: duplicate key, {full_key} is already set")
        if isinstance(value, dict) and set(value) == {"secure"}:
            secrets.append(full_key)
            value = SECRET_PLACEHOLDER
        try:
            settings[full_key] = _as_setting(value)
        except (TypeError, ValueError):
            settings.problems.append(f"{path.name}: {key}: expected plain YAML values, got a {type(value).__name__}")
    return settings, secrets
