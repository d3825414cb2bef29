"""Config keys read the way Pulumi reads them.

Pulumi parses every stack-config key with `config.ParseKey` (pulumi/pulumi,
`sdk/go/common/resource/config/key.go`): `<namespace>:<name>`, or the legacy
`<namespace>:config:<name>`, which means the same key; anything else fails the whole stack with
"could not parse KEY as a configuration key (configuration keys should be of the form
`<namespace>:<name>`)". Keys of other namespaces (`azure-native:location`) belong to providers
and pass untouched; a namespace that is this project's but for case or a typo would be silently
ignored by the program, so it is an error here.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any, Final

CONFIG_NAMESPACE: Final = "pairedbus"
#: How close (difflib ratio, case ignored) a namespace must be to this project's to be a typo.
NAMESPACE_TYPO_CUTOFF: Final = 0.8


class ProjectValues(dict[str, Any]):
    """This project's config values (keys without the namespace), plus the problems found in
    the keys and the stack file they came from, reported with the values' own in one pass."""

    def __init__(self, values: Mapping[str, Any] | None = None, problems: list[str] | None = None) -> None:
        super().__init__(values or {})
        self.problems: list[str] = list(problems or [])


def key_problems_of(values: Mapping[str, Any]) -> list[str]:
    return list(getattr(values, "problems", []))


def parse_config_key(key: object) -> tuple[str, str] | None:
    """(namespace, name) as Pulumi's ParseKey makes them, or None where it fails."""
    if not isinstance(key, str):
        return None
    parts = key.split(":")
    if len(parts) == 2:
        return parts[0], parts[1]
    if len(parts) == 3 and parts[1] == "config" and parts[0] and parts[2]:
        return parts[0], parts[2]
    return None


def unparsable_key_problem(key: object) -> str:
    hint = ""
    if isinstance(key, str) and ":" not in key:
        hint = f" (did you mean {CONFIG_NAMESPACE}:{key}?)"
    return (
        f"{key}: could not parse {key} as a configuration key "
        f"(configuration keys should be of the form `<namespace>:<name>`){hint}"
    )


def is_namespace_typo(namespace: str) -> bool:
    """`pairedBus`, `paireddbus`, `pairedbus ` -> True; `azure-native`, `pairedbus` -> False."""
    if namespace == CONFIG_NAMESPACE:
        return False
    ratio = difflib.SequenceMatcher(None, namespace.strip().lower(), CONFIG_NAMESPACE).ratio()
    return ratio >= NAMESPACE_TYPO_CUTOFF


def namespace_typo_problem(key: str, namespace: str, name: str) -> str:
    return (
        f"{key}: namespace {namespace!r} is not this project's, so the program would never read this "
        f"value (did you mean {CONFIG_NAMESPACE}:{name}?)"
    )


def decode_config_value(raw: str) -> Any:
    """Pulumi hands every config value over as a string; structured values are JSON."""
    try:
        return json.loads(raw)
    except (TypeError, ValueError):
        return raw


def config_from_pulumi_settings(settings: Mapping[str, str]) -> ProjectValues:
    """`{"pairedbus:primary": "{...}", "azure-native:location": ...}` -> this project's keys, decoded.

    Problems with the keys (and any the settings carry from their stack file) travel with the
    result, so `parse_stack_config` reports them together with the values' own.
    """
    values = ProjectValues(problems=key_problems_of(settings))
    for key, raw in settings.items():
        parsed = parse_config_key(key)
        if parsed is None:
            values.problems.append(unparsable_key_problem(key))
            continue
        namespace, name = parsed
        if namespace == CONFIG_NAMESPACE:
            if name in values:
                values.problems.append(f"{key}: duplicate key, {CONFIG_NAMESPACE}:{name} is set twice")
            values[name] = decode_config_value(raw)
        elif is_namespace_typo(namespace):
            values.problems.append(namespace_typo_problem(key, namespace, name))
    return values
