"""The stack config's shape (`iac/config/schema.py`): camelCase keys, strict types, frozen parts, and the
derived facts of a namespace (messaging units, partitions) that the rules read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from pairedbus.iac.components import args_codegen
from pairedbus.iac.config.messages import inner_model
from pairedbus.iac.config.schema import NamespaceConfig, ResourceGroupConfig, StackConfig


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


# --- The README's reference table states the model's defaults (the model declares them, once) ----------------

README = Path(__file__).resolve().parents[3] / "README.md"


def _readme_rows() -> list[tuple[list[str], str]]:
    """(key spans, default cell) of each row of the README's stack config reference."""
    text = README.read_text(encoding="utf-8")
    table = text[text.index("| key | default | rule |") :].split("\n\n", 1)[0].splitlines()[2:]
    return [(re.findall(r"`([^`]+)`", row.split("|")[1]), row.split("|")[2].strip()) for row in table]


def _field(path: str, relative_to: type[BaseModel]) -> tuple[type[BaseModel], str] | None:
    """The model and field name a README key names (`syphon.cpu`; `.sku` under a namespace), or None."""
    model: type[BaseModel] = relative_to
    parts = path.lstrip(".").split(".")
    for i, part in enumerate(parts):
        by_alias = {f.alias or name: name for name, f in model.model_fields.items()}
        name = by_alias.get(part) or (next(iter(by_alias.values())) if part == "*" else None)
        if name is None:
            return None
        if i == len(parts) - 1:
            return model, name
        inner = inner_model(model.model_fields[name].annotation)
        if inner is None:
            return None
        model = inner
    return None


def test_the_readmes_defaults_are_the_models() -> None:
    checked = []
    for spans, cell in _readme_rows():
        keys = [s for s in spans if s not in ("primary", "secondary")]
        defaults = [d.strip().strip("`") for d in cell.split(" / ")]
        if len(keys) != len(defaults):
            continue
        parent: type[BaseModel] = StackConfig
        for key, shown in zip(keys, defaults, strict=True):
            found = _field(key, NamespaceConfig if key.startswith(".") and parent is StackConfig else parent)
            if found is None:
                continue
            model, name = found
            parent = model
            default = model.model_fields[name].get_default(call_default_factory=True)
            if model.model_fields[name].is_required() or default is None or isinstance(default, list | dict):
                continue  # "none", "—", prose: what the model leaves unset is described, not stated
            checked.append((key, shown, args_codegen._shown(default)))
    assert [(key, shown) for key, shown, _ in checked] == [(key, model) for key, _, model in checked]
    assert len(checked) >= 15, checked
