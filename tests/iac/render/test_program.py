"""The offline renderer records what the engine would receive, and leaves the SDK as it was."""

from __future__ import annotations

import gc

import pulumi
import pulumi.resource
import pytest
from pulumi_azure_native import servicebus

from pairedbus.iac.render.program import render_program


def _program() -> None:
    ns = servicebus.Namespace("ns", namespace_name="contoso-ns", resource_group_name="rg")
    servicebus.Queue("q", queue_name="orders", namespace_name=ns.name, resource_group_name="rg")
    pulumi.export("endpoint", ns.service_bus_endpoint)


def test_aliases_still_reach_the_monitor_as_specs() -> None:
    plan = render_program(_program, project="p", stack="s")
    queue = plan.of_type("azure-native:servicebus:Queue")[0]
    assert queue.aliases >= 10  # azure-native's versioned type aliases
    assert queue.inputs["namespaceName"] == "contoso-ns"
    assert plan.outputs == {"endpoint": "https://contoso-ns.servicebus.windows.net:443/"}


def test_each_registration_is_told_as_it_arrives_for_progress() -> None:
    told: list[tuple[str, str]] = []
    plan = render_program(_program, project="p", stack="s", on_register=lambda type_, name: told.append((type_, name)))
    assert sorted(told) == [
        ("azure-native:servicebus:Namespace", "ns"),
        ("azure-native:servicebus:Queue", "q"),
        ("pulumi:pulumi:Stack", "p-s"),
    ]
    assert len(plan.resources) == 2  # the root stack is told but is no resource of the plan


def test_the_sdk_and_the_collector_are_restored_after_a_render() -> None:
    original = pulumi.resource.collapse_alias_to_urn
    render_program(_program, project="p", stack="s")
    assert pulumi.resource.collapse_alias_to_urn is original
    assert gc.isenabled()


def test_an_exception_in_the_program_propagates_and_restores_everything() -> None:
    original = pulumi.resource.collapse_alias_to_urn

    def broken() -> None:
        raise pulumi.RunError("invalid stack config:\nline")

    with pytest.raises(pulumi.RunError, match="invalid stack config"):
        render_program(broken, project="p", stack="s")
    assert pulumi.resource.collapse_alias_to_urn is original and gc.isenabled()
    assert render_program(_program, project="p", stack="s").resources  # the runtime is usable again
