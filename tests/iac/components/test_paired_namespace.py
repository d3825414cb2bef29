"""PairedNamespace used directly from a Python program: same validation, same resources as the stack-config path."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pulumi
import pytest
from pulumi_azure_native import resources

from pairedbus import contract
from pairedbus.iac import PairedNamespace, PairedNamespaceArgs
from pairedbus.iac.config import StackConfigError, parse_stack_config
from pairedbus.iac.config.args_mapping import settings_of, stack_config_from_args
from pairedbus.iac.render.mocks import PlanMocks
from pairedbus.iac.render.program import RecordingMonitor, _render, _without_dead_work, render_program
from pairedbus.plans.model import Plan
from tests.iac.components.conftest import render_config

REPO = Path(__file__).resolve().parents[3]

#: The same pair as tests/conftest.py's BASE_CONFIG, written as a Python program would: snake_case args.
ARGS: dict[str, Any] = {
    "resource_groups": {"primary": {"name": "rg-primary"}, "secondary": {"name": "rg-secondary"}},
    "primary": {"name": "contoso-primary", "location": "westeurope", "sku": "Standard"},
    "secondary": {"name": "contoso-secondary", "location": "northeurope", "sku": "Standard"},
    "backlog_queue_count": 3,
    "queues": [{"name": "orders", "requires_session": True}, {"name": "invoices"}],
    "topics": [{"name": "events", "subscriptions": [{"name": "audit"}, {"name": "billing"}]}],
    "syphon": {"image": "example.azurecr.io/pairedbus-syphon:1.0.0"},
    "production": False,
}


def _args(**changes: Any) -> PairedNamespaceArgs:
    args = copy.deepcopy(ARGS)
    args.update(changes)
    return args  # type: ignore[return-value]


def _build(args: PairedNamespaceArgs) -> None:
    paired = PairedNamespace("pairedbus", args)
    for key in ("primary_namespace_id", "primary_endpoint", "queue_ids", "subscription_ids", "backlog_queue_names"):
        pulumi.export(key, getattr(paired, key))
    pulumi.export("syphon_principal_id", paired.syphon_principal_id)


def _stack_program() -> None:
    from pairedbus.iac.config import load_pulumi_stack_config

    PairedNamespace.from_config("pairedbus", load_pulumi_stack_config())


def _shape(plan: Plan) -> list[tuple[str, str, str]]:
    return sorted((r.type, r.name, json.dumps(r.inputs, sort_keys=True)) for r in plan.resources)


def test_direct_args_render_exactly_what_the_same_stack_config_renders(config_dict: dict[str, Any]) -> None:
    direct = render_program(lambda: _build(_args()), project="pairedbus", stack="test")
    from_config = render_config(config_dict, _stack_program)
    assert _shape(direct) == _shape(from_config)
    assert len(direct.of_type(contract.TYPE_BACKLOG_QUEUE)) == 3


# --- From a validated config (issue 37 item 1: the repository's program never goes model -> dict -> model) ------


def _refuse(*_: Any, **__: Any) -> Any:
    raise AssertionError("validated again")


def test_from_config_renders_what_the_args_of_the_same_config_render(
    config_dict: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = parse_stack_config(config_dict)

    def from_args() -> None:
        PairedNamespace("pairedbus", settings_of(config))

    def from_config() -> None:
        PairedNamespace.from_config("pairedbus", config)

    as_args = render_program(from_args, project="pairedbus", stack="test")
    # The config is used as it is: neither the args' mapping nor the model runs again.
    from pairedbus.iac.components import paired_namespace
    from pairedbus.iac.config import model

    monkeypatch.setattr(paired_namespace, "stack_config_from_args", _refuse)
    monkeypatch.setattr(model, "parse_stack_config", _refuse)
    direct = render_program(from_config, project="pairedbus", stack="test")
    assert _shape(direct) == _shape(as_args)
    assert len(direct.of_type(contract.TYPE_BACKLOG_QUEUE)) == config.backlog_queue_count


def test_the_repositorys_program_builds_its_pair_from_the_validated_config(monkeypatch: pytest.MonkeyPatch) -> None:
    # Was: __main__.py dumped the validated model to args, which PairedNamespace validated again.
    from pairedbus.iac.components import paired_namespace
    from pairedbus.iac.render import render_stack
    from pairedbus.iac.render.project import PulumiProject

    monkeypatch.setattr(paired_namespace, "stack_config_from_args", _refuse)
    _, plan = render_stack(PulumiProject.find(REPO), "dev")
    assert len(plan.of_type(contract.TYPE_BACKLOG_QUEUE)) == 10


def test_from_config_takes_a_validated_config_only() -> None:
    with pytest.raises(TypeError, match=r"^orders: config: expected a validated StackConfig .*got dict"):
        PairedNamespace.from_config("orders", dict(ARGS))  # type: ignore[arg-type]  # the mistake under test


def test_from_config_checks_the_pair_name_as_the_args_way_does(config_dict: dict[str, Any]) -> None:
    config = parse_stack_config(config_dict)
    with pytest.raises(StackConfigError) as from_config:
        PairedNamespace.from_config("Orders--", config)
    with pytest.raises(StackConfigError) as from_args:
        PairedNamespace("Orders--", settings_of(config))
    assert from_config.value.problems == from_args.value.problems
    assert from_config.value.problems[0].startswith("Orders--: name: expected a pair name")


def test_outputs_are_what_a_consumer_wires_onward() -> None:
    plan = render_program(lambda: _build(_args()), project="pairedbus", stack="test")
    assert plan.outputs["primary_namespace_id"].endswith("/providers/Microsoft.ServiceBus/namespaces/contoso-primary")
    assert plan.outputs["primary_endpoint"] == "https://contoso-primary.servicebus.windows.net:443/"
    assert sorted(plan.outputs["queue_ids"]) == ["invoices", "orders"]
    assert sorted(plan.outputs["subscription_ids"]) == ["events/audit", "events/billing"]
    assert plan.outputs["backlog_queue_names"] == [f"contoso-primary/x-servicebus-transfer/{i}" for i in range(3)]
    assert plan.outputs["syphon_principal_id"] == "pairedbus-syphon-identity-principal"  # named from the pair


@pytest.mark.parametrize(
    ("change", "config_change"),
    [
        (
            {"primary": {"name": "contoso-primary", "location": "westeurope", "sku": "premium"}},
            {"primary": {"name": "contoso-primary", "location": "westeurope", "sku": "premium"}},
        ),
        (
            {"secondary": {"name": "contoso-secondary", "location": "WestEurope"}},
            {"secondary": {"name": "contoso-secondary", "location": "WestEurope"}},
        ),
        ({"backlog_queue_count": 0}, {"backlogQueueCount": 0}),
        (
            {"syphon": {"image": "x", "min_replicas": 2, "max_replicas": 1}},
            {"syphon": {"image": "x", "minReplicas": 2, "maxReplicas": 1}},
        ),
        (
            {"queues": [{"name": "orders", "forward_to": "nowhere"}]},
            {"queues": [{"name": "orders", "forwardTo": "nowhere"}]},
        ),
        (
            {"primary": {"name": "contoso-primary", "location": "westeurope", "zone_redundnat": True}},
            {"primary": {"name": "contoso-primary", "location": "westeurope", "zoneRedundnat": True}},
        ),
        ({"backlog_auth": "SAS"}, {"backlogAuth": "SAS"}),
        ({"resource_groups": {"primary": {"name": ""}}}, {"resourceGroups": {"primary": {"name": ""}}}),
    ],
)
def test_a_mistake_gets_the_same_one_line_error_as_in_a_stack_config(
    change: dict[str, Any], config_change: dict[str, Any], config_dict: dict[str, Any]
) -> None:
    with pytest.raises(StackConfigError) as direct:
        stack_config_from_args(_args(**change))
    with pytest.raises(StackConfigError) as from_config:
        parse_stack_config({**config_dict, **config_change})
    assert direct.value.problems == from_config.value.problems
    assert all("\n" not in p and p.startswith("pairedbus:") for p in direct.value.problems)


def test_errors_name_the_field_as_the_stack_config_and_every_other_language_spell_it() -> None:
    with pytest.raises(StackConfigError) as caught:
        stack_config_from_args(
            _args(
                primary={"name": "contoso-primary", "location": "westeurope", "zone_redundnat": True},
                backlog_queue_count=0,
            )
        )
    assert sorted(caught.value.problems) == [
        "pairedbus:backlogQueueCount: expected greater than or equal to 1, got 0",
        "pairedbus:primary.zoneRedundnat: unknown key (did you mean zoneRedundant?)",
    ]


def test_nothing_is_registered_when_the_args_are_invalid() -> None:
    monitor = RecordingMonitor(PlanMocks())
    with _without_dead_work(), pytest.raises(StackConfigError, match=r"pairedbus: secondary\.location"):
        _render(
            lambda: PairedNamespace("pairedbus", _args(secondary={"name": "contoso-dr", "location": "westeurope"})),
            monitor,
            project="pairedbus",
            stack="test",
            config=None,
            secret_keys=None,
        )
    assert monitor.planned == []


def test_tag_keys_are_data_and_are_not_renamed() -> None:
    plan = render_program(
        lambda: _build(_args(tags={"cost_center": "42", "Owner": "me"})), project="pairedbus", stack="test"
    )
    namespace = plan.of_type(contract.TYPE_NAMESPACE)[0]
    assert namespace.inputs["tags"]["cost_center"] == "42" and namespace.inputs["tags"]["Owner"] == "me"


def test_the_image_may_be_an_output_of_another_resource_in_the_program() -> None:
    def program() -> None:
        group = resources.ResourceGroup("images", resource_group_name="rg-images", location="westeurope")
        image = group.name.apply(lambda name: f"acme.azurecr.io/{name}/syphon:2.0")
        PairedNamespace("pairedbus", _args(syphon={"image": image, "cpu": 1.0, "memory": "2Gi"}))

    plan = render_program(program, project="pairedbus", stack="test")
    (app,) = plan.of_type("azure-native:app:ContainerApp")
    (container,) = app.inputs["template"]["containers"]
    assert container["image"] == "acme.azurecr.io/rg-images/syphon:2.0"
    assert container["resources"] == {"cpu": 1.0, "memory": "2Gi"}
    assert any(dep.endswith("::images") for dep in app.dependencies)


def test_a_premium_pair_renders_on_its_defaults() -> None:
    """`sku: Premium` and nothing else: no error about a value nobody wrote; both namespaces partitioned."""
    premium = {
        "primary": {**ARGS["primary"], "sku": "Premium"},
        "secondary": {**ARGS["secondary"], "sku": "Premium"},
    }
    plan = render_program(lambda: _build(_args(**premium)), project="pairedbus", stack="test")
    for namespace in plan.of_type(contract.TYPE_NAMESPACE):
        assert namespace.inputs["premiumMessagingPartitions"] == 2
        assert namespace.inputs["sku"] == {"name": "Premium", "tier": "Premium", "capacity": 2}
