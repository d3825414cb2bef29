"""The components' typed settings are generated from the stack-config model, the one declaration of every setting
(issue 37 item 1): the file is what the generator writes, each choice is one enum, and the parts' own defaults
(for use one by one) are the model's."""

from __future__ import annotations

import typing
from enum import Enum
from typing import Any

from pydantic import BaseModel, Field

from pairedbus.iac.components import args, args_codegen
from pairedbus.iac.components.args import ENTITY_DEFAULTS, NAMESPACE_DEFAULTS, SYPHON_DEFAULTS
from pairedbus.iac.config import NamespaceConfig, StackConfig, parse_stack_config
from pairedbus.iac.config.schema import SyphonConfig

MINIMAL = {
    "resourceGroups": {"primary": {"name": "rg-p"}, "secondary": {"name": "rg-s"}},
    "primary": {"name": "contoso-p1", "location": "westeurope"},
    "secondary": {"name": "contoso-s1", "location": "northeurope"},
    "queues": [{"name": "q"}],
    "topics": [{"name": "t", "subscriptions": [{"name": "s"}]}],
    "syphon": {"image": "x"},
}


def test_the_args_module_is_what_the_model_generates() -> None:
    # A setting added, renamed, retyped or redescribed in the model and not in args.py (or the reverse) fails here.
    assert args_codegen.TARGET.read_text(encoding="utf-8") == args_codegen.args_source(), (
        "src/pairedbus/iac/components/args.py differs from the model: run "
        "`python -m pairedbus.iac.components.args_codegen`"
    )


def test_a_settings_type_default_and_range_come_from_the_model_field() -> None:
    field = SyphonConfig.model_fields["min_replicas"]
    assert args_codegen.description(field) == (
        "Replicas always running: at least one syphon must always run. From 1 to 30. Default: 1."
    )
    assert args_codegen.description(StackConfig.model_fields["backlog_auth"]).endswith(" Default: entra.")
    assert args_codegen.description(NamespaceConfig.model_fields["zone_redundant"]).endswith(" Default: false.")
    found: dict[type, Any] = {}
    # What may be an output of another resource is an Input there, and only there (args_mapping.INPUT_PATHS).
    name = NamespaceConfig.model_fields["name"].annotation
    assert args_codegen._python_type(name, ("primary", "name"), found) == "pulumi.Input[str]"
    sku = NamespaceConfig.model_fields["sku"].annotation
    assert args_codegen._python_type(sku, ("primary", "sku"), found) == "Sku"
    tags = StackConfig.model_fields["tags"].annotation
    assert args_codegen._python_type(tags, ("tags",), found) == "dict[str, pulumi.Input[str]]"


def test_a_new_model_setting_reaches_the_generated_args() -> None:
    class Wider(SyphonConfig):
        """A syphon with one more setting."""

        drain_batch: int = Field(10, ge=1, le=100, description="Messages per batch.")

    lines = args_codegen._class_lines(Wider, ("syphon",))
    at = lines.index("    drain_batch: NotRequired[int]")
    assert lines[at + 1] == '    """Messages per batch. From 1 to 100. Default: 10."""'


def _enum_of(annotation: Any) -> type[Enum] | None:
    """The enum inside `Annotated[E, ...]`, `NotRequired[E]` or `E | None`."""
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return annotation
    return next((e for arg in typing.get_args(annotation) if (e := _enum_of(arg)) is not None), None)


def test_each_choice_is_one_enum_shared_by_the_model_and_the_args() -> None:
    # Was: a StrEnum in args.py beside a Literal of the same values in the model.
    pairs: list[tuple[type[BaseModel], Any, str]] = [
        (NamespaceConfig, args.NamespaceSettings, "sku"),
        (NamespaceConfig, args.NamespaceSettings, "public_network_access"),
        (StackConfig, args.PairedNamespaceArgs, "backlog_auth"),
        (StackConfig, args.PairedNamespaceArgs, "deployer_principal_type"),
    ]
    for model, settings, name in pairs:
        declared = _enum_of(model.model_fields[name].annotation)
        assert declared is not None, name
        assert _enum_of(settings.__annotations__[name]) is declared, name


def test_the_parts_defaults_are_the_models() -> None:
    config = parse_stack_config(MINIMAL)
    assert {k: getattr(config.primary, k) for k in NAMESPACE_DEFAULTS} == NAMESPACE_DEFAULTS
    assert {k: getattr(config.queues[0], k) for k in ENTITY_DEFAULTS} == ENTITY_DEFAULTS
    topic_defaults = {k: v for k, v in ENTITY_DEFAULTS.items() if k != "requires_session"}
    assert {k: getattr(config.topics[0], k) for k in topic_defaults} == topic_defaults
    assert config.topics[0].subscriptions[0].requires_session is ENTITY_DEFAULTS["requires_session"]
    assert {k: getattr(config.syphon, k) for k in SYPHON_DEFAULTS} == SYPHON_DEFAULTS


def test_paired_namespace_args_name_every_stack_setting() -> None:
    from pairedbus.iac import PairedNamespaceArgs

    assert set(PairedNamespaceArgs.__annotations__) == set(StackConfig.model_fields)
