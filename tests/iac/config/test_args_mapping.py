"""Between `PairedNamespace` args and the stack-config model (`iac/config/args_mapping.py`): both spellings
are accepted, a setting given in both is refused, and a config maps to args and back unchanged."""

from __future__ import annotations

import pytest

from pairedbus.iac.config import StackConfigError, config_from_pulumi_settings, parse_stack_config
from pairedbus.iac.config.args_mapping import (
    args_from_stack_config,
    config_values,
    may_be_input,
    stack_config_from_args,
)
from pairedbus.iac.plan.project import PulumiProject
from tests.iac.components.test_args import MINIMAL
from tests.iac.config.conftest import REPO


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
