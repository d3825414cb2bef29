"""The parts' own defaults (for use one by one) are the stack-config model's, so both ways in agree."""

from __future__ import annotations

from pairedbus.iac.components.args import ENTITY_DEFAULTS, NAMESPACE_DEFAULTS, SYPHON_DEFAULTS
from pairedbus.iac.config import parse_stack_config

MINIMAL = {
    "resourceGroups": {"primary": {"name": "rg-p"}, "secondary": {"name": "rg-s"}},
    "primary": {"name": "contoso-p1", "location": "westeurope"},
    "secondary": {"name": "contoso-s1", "location": "northeurope"},
    "queues": [{"name": "q"}],
    "topics": [{"name": "t", "subscriptions": [{"name": "s"}]}],
    "syphon": {"image": "x"},
}


def test_the_parts_defaults_are_the_models() -> None:
    config = parse_stack_config(MINIMAL)
    assert {k: getattr(config.primary, k) for k in NAMESPACE_DEFAULTS} == NAMESPACE_DEFAULTS
    assert {k: getattr(config.queues[0], k) for k in ENTITY_DEFAULTS} == ENTITY_DEFAULTS
    topic_defaults = {k: v for k, v in ENTITY_DEFAULTS.items() if k != "requires_session"}
    assert {k: getattr(config.topics[0], k) for k in topic_defaults} == topic_defaults
    assert config.topics[0].subscriptions[0].requires_session is ENTITY_DEFAULTS["requires_session"]
    assert {k: getattr(config.syphon, k) for k in SYPHON_DEFAULTS} == SYPHON_DEFAULTS


def test_paired_namespace_args_name_every_stack_setting() -> None:
    from pairedbus.iac.components.paired_namespace import PairedNamespaceArgs
    from pairedbus.iac.config import StackConfig

    assert set(PairedNamespaceArgs.__annotations__) == set(StackConfig.model_fields)
