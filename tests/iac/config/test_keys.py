"""Config keys parsed the way Pulumi's config.ParseKey parses them (pulumi/pulumi,
sdk/go/common/resource/config/key.go)."""

from __future__ import annotations

import pytest

from pairedbus.iac.config import config_from_pulumi_settings
from pairedbus.iac.config.keys import is_namespace_typo, parse_config_key


@pytest.mark.parametrize(
    ("key", "parsed"),
    [
        ("pairedbus:production", ("pairedbus", "production")),
        ("pairedbus:config:production", ("pairedbus", "production")),  # the legacy form, same key
        ("azure-native:location", ("azure-native", "location")),
        ("backlogQueueCount", None),  # "could not parse backlogQueueCount as a configuration key"
        ("a:b:c", None),  # two colons only with "config" in the middle
        ("a:b:c:d", None),
        (123, None),
    ],
)
def test_keys_parse_as_pulumi_parses_them(key, parsed):
    assert parse_config_key(key) == parsed


@pytest.mark.parametrize(
    ("namespace", "typo"),
    [
        ("pairedBus", True),
        ("PAIREDBUS", True),
        ("paireddbus", True),
        ("pairdbus", True),
        ("azure-native", False),
        ("azure", False),
        ("pulumi", False),
        ("pairedbus", False),
    ],
)
def test_namespaces_close_to_the_projects_are_typos(namespace, typo):
    assert is_namespace_typo(namespace) is typo


def test_the_running_programs_settings_carry_key_problems():
    """`pulumi up` hands the program every key of the stack: one in a misspelt namespace is
    reported by the program too, not silently ignored."""
    values = config_from_pulumi_settings({"pairedBus:production": "true", "pairedbus:backlogQueueCount": "4"})
    assert values == {"backlogQueueCount": 4}
    assert values.problems == [
        "pairedBus:production: namespace 'pairedBus' is not this project's, so the program would never read this "
        "value (did you mean pairedbus:production?)"
    ]
