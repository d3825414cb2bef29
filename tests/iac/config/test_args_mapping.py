"""Between `PairedNamespace` args and the stack-config model (`iac/config/args_mapping.py`): both spellings
are accepted, a setting given in both is refused, and a config maps to args and back unchanged."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pairedbus.iac.config import StackConfigError, config_from_pulumi_settings, parse_stack_config
from pairedbus.iac.config.args_mapping import (
    args_from_stack_config,
    config_values,
    may_be_input,
    stack_config_from_args,
)
from pairedbus.iac.render.project import PulumiProject
from tests.iac.components.test_args import MINIMAL
from tests.iac.config.conftest import REPO, read_stack


def test_a_setting_given_in_both_spellings_is_refused_not_silently_picked() -> None:
    args = {
        "resource_groups": {"primary": {"name": "rg-p"}, "secondary": {"name": "rg-s"}},
        "primary": {"name": "contoso-p1", "location": "westeurope"},
        "secondary": {"name": "contoso-s1", "location": "northeurope"},
        "syphon": {"image": "x", "min_replicas": 1, "minReplicas": 2},
        "backlog_queue_count": 3,
        "backlogQueueCount": 4,
    }
    with pytest.raises(StackConfigError) as caught:
        stack_config_from_args(args)
    assert caught.value.problems == [
        "pairedbus:syphon.minReplicas: given twice (as 'min_replicas' and 'minReplicas'), expected once",
        "pairedbus:backlogQueueCount: given twice (as 'backlog_queue_count' and 'backlogQueueCount'), expected once",
    ]


def test_the_config_spelling_is_accepted_too() -> None:
    assert stack_config_from_args(MINIMAL) == parse_stack_config(MINIMAL)


def test_args_must_be_a_mapping() -> None:
    with pytest.raises(TypeError, match="expected a mapping"):
        stack_config_from_args(["not", "args"])  # type: ignore[arg-type]


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_a_stack_config_and_the_args_built_from_it_validate_to_the_same_config(stack: str) -> None:
    settings, _ = PulumiProject.find(REPO).stack_settings(stack)
    config = parse_stack_config(config_from_pulumi_settings(settings))
    args = args_from_stack_config(config)
    assert "resource_groups" in args and "resourceGroups" not in args
    assert stack_config_from_args(args) == config


def test_snake_case_args_are_shaped_as_the_configs_camel_case_keys() -> None:
    shaped = config_values({"backlog_queue_count": 3, "syphon": {"image": "x", "min_replicas": 1}})
    assert shaped == {"backlogQueueCount": 3, "syphon": {"image": "x", "minReplicas": 1}}


def test_names_locations_and_tag_values_may_be_outputs_but_what_decides_resources_may_not() -> None:
    assert may_be_input(("primary", "name")) and may_be_input(("primary", "location"))
    assert may_be_input(("tags", "costCenter")) and may_be_input(("syphon", "image"))
    assert not may_be_input(("primary", "sku")) and not may_be_input(("backlogQueueCount",))


#: Integer settings at three depths: (where in the config, an integral float, the problem line's key).
INTEGER_SETTINGS = [
    (("backlogQueueCount",), 4.0, "pairedbus:backlogQueueCount"),
    (("syphon", "maxReplicas"), 2.0, "pairedbus:syphon.maxReplicas"),
    (("queues", 0, "maxDeliveryCount"), 10.0, "pairedbus:queues[0].maxDeliveryCount"),
]


def _with(config: dict[str, Any], where: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(config)
    holder: Any = changed
    for part in where[:-1]:
        holder = holder[part]
    holder[where[-1]] = value
    return changed


def _stack_file(write_stack: Any, config: dict[str, Any]) -> Any:
    return write_stack({"config": {f"pairedbus:{key}": value for key, value in config.items()}})


@pytest.mark.parametrize(("where", "number", "key"), INTEGER_SETTINGS, ids=[key for *_, key in INTEGER_SETTINGS])
def test_a_float_for_an_integer_is_refused_alike_in_a_stack_file_and_in_the_components_args(
    write_stack: Any, where: tuple[str | int, ...], number: float, key: str
) -> None:
    # The model is strict: 4.0 is not an integer, written in a stack file or passed by a Python program.
    config = _with(MINIMAL, where, number)
    expected = [f"{key}: expected a valid integer, got {number}"]
    with pytest.raises(StackConfigError) as from_file:
        read_stack(_stack_file(write_stack, config))
    with pytest.raises(StackConfigError) as from_args:
        stack_config_from_args(config)
    assert from_file.value.problems == from_args.value.problems == expected
    # The same number written as an integer passes both ways, to the same config.
    config = _with(MINIMAL, where, int(number))
    assert stack_config_from_args(config) == read_stack(_stack_file(write_stack, config))
