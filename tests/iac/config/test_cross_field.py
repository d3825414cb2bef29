"""Rules over more than one field of the stack config (`iac/config/cross_field.py`), called one by one on a
config whose single fields are each valid, as `parse_stack_config` calls them after the field checks."""

from __future__ import annotations

import copy

from pairedbus.iac.config import StackConfig, parse_stack_config
from pairedbus.iac.config.cross_field import (
    cross_field_problems,
    pair_is_two_namespaces,
    pair_spans_two_regions,
    premium_capacity_divides_into_partitions,
    syphon_memory_matches_cpu,
)
from tests.conftest import BASE_CONFIG


def _valid() -> StackConfig:
    return parse_stack_config(copy.deepcopy(BASE_CONFIG))


def _with(config: StackConfig, role: str, **changes: object) -> StackConfig:
    return config.model_copy(update={role: getattr(config, role).model_copy(update=changes)})


def test_a_valid_config_has_no_cross_field_problem() -> None:
    assert cross_field_problems(_valid()) == []


def test_the_pair_is_two_namespaces_without_regard_to_case() -> None:
    config = _valid()
    same = _with(config, "secondary", name=config.primary.name.upper())
    assert list(pair_is_two_namespaces(same)) == [
        f"secondary.name: expected a namespace other than the primary ({config.primary.name!r})"
    ]


def test_the_pair_spans_two_regions_whatever_the_regions_spelling() -> None:
    config = _with(_valid(), "primary", location="westeurope")
    config = _with(config, "secondary", location="West Europe")
    assert list(pair_spans_two_regions(config)) == [
        "secondary.location: expected a region other than the primary's ('westeurope')"
    ]


def test_premium_capacity_must_divide_into_its_partitions() -> None:
    config = _with(_valid(), "primary", sku="Premium", capacity=2, premium_messaging_partitions=4)
    assert [p.split(":")[0] for p in premium_capacity_divides_into_partitions(config)] == ["primary.capacity"]
    fine = _with(config, "primary", capacity=4)
    assert list(premium_capacity_divides_into_partitions(fine)) == []


def test_syphon_memory_is_twice_its_cpu_in_gib() -> None:
    config = _valid()
    odd = config.model_copy(update={"syphon": config.syphon.model_copy(update={"cpu": 1.0, "memory": "3Gi"})})
    assert list(syphon_memory_matches_cpu(odd)) == [
        "syphon.memory: expected 2Gi for 1 CPU (Container Apps sizes), got '3Gi'"
    ]
    even = config.model_copy(update={"syphon": config.syphon.model_copy(update={"cpu": 1.0, "memory": "2.0Gi"})})
    assert list(syphon_memory_matches_cpu(even)) == []


def test_every_problem_is_listed_in_rule_order_pair_before_syphon() -> None:
    config = _valid()
    config = _with(config, "secondary", name=config.primary.name)
    config = config.model_copy(update={"syphon": config.syphon.model_copy(update={"cpu": 1.0, "memory": "3Gi"})})
    assert [p.split(":")[0] for p in cross_field_problems(config)] == ["secondary.name", "syphon.memory"]
