"""The stack config's shape (`iac/config/schema.py`): camelCase keys, strict types, frozen parts, and the
derived facts of a namespace (messaging units, partitions) that the rules read."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pairedbus.iac.config.schema import NamespaceConfig, ResourceGroupConfig


def test_keys_are_camel_case_and_snake_case_names_also_populate() -> None:
    by_key = NamespaceConfig.model_validate({"name": "contoso-p1", "location": "westeurope", "zoneRedundant": True})
    by_name = NamespaceConfig.model_validate({"name": "contoso-p1", "location": "westeurope", "zone_redundant": True})
    assert by_key.zone_redundant is True and by_key == by_name


def test_an_unknown_key_and_a_string_for_a_bool_are_refused() -> None:
    with pytest.raises(ValidationError, match=r"Extra inputs are not permitted"):
        ResourceGroupConfig.model_validate({"name": "rg-p", "creat": False})
    with pytest.raises(ValidationError, match="bool"):
        ResourceGroupConfig.model_validate({"name": "rg-p", "create": "false"})


def test_a_part_is_frozen() -> None:
    group = ResourceGroupConfig(name="rg-p")
    with pytest.raises(ValidationError):
        group.create = False  # type: ignore[misc]


def test_a_standard_namespace_has_no_messaging_units_and_needs_no_partitioned_entities() -> None:
    ns = NamespaceConfig(name="contoso-p1", location="westeurope")
    assert ns.sku == "Standard" and not ns.is_premium
    assert ns.messaging_units is None and not ns.requires_partitioned_entities


def test_messaging_units_are_the_capacity_else_one_per_partition() -> None:
    ns = NamespaceConfig(name="contoso-p1", location="westeurope", sku="Premium", premium_messaging_partitions=4)
    assert ns.is_premium and ns.partitions == 4 and ns.messaging_units == 4
    assert ns.requires_partitioned_entities
    one = NamespaceConfig(name="contoso-p1", location="westeurope", sku="Premium")
    assert one.partitions == 1 and one.messaging_units == 1 and not one.requires_partitioned_entities
    sized = NamespaceConfig(name="contoso-p1", location="westeurope", sku="Premium", capacity=8)
    assert sized.messaging_units == 8
