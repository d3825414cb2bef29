"""production-namespace-diagnostics (advisory): a protected (production) namespace without a diagnostic setting
that sends its resource logs anywhere is reported; fixtures built as the engine builds them, and the offline gate
on the repository's prod stack with and without its diagnostics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pulumi_policy import EnforcementLevel, PolicyCustomTimeouts, PolicyResource, PolicyResourceOptions

from pairedbus.iac.render import PulumiProject
from pairedbus.iac.render import program as render_module
from pairedbus.policy import pack
from pairedbus.policy.gate import evaluate_plan, has_mandatory

from .fixtures import PRIMARY, SECONDARY, UNKNOWN, StackBuilder, namespace_inputs, paired_stack, violations

REPO = Path(__file__).resolve().parents[2]
DIAGNOSTICS = "azure-native:monitor:DiagnosticSetting"
WORKSPACE = "/subscriptions/6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f/resourceGroups/rg/providers/Microsoft.OperationalInsights/workspaces/law"


def _protected(resource: PolicyResource) -> None:
    """As the engine shows a resource registered with `protect: true` (production: true does that to namespaces)."""
    old = resource.opts
    resource.opts = PolicyResourceOptions(True, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], old.parent)


def _namespace_uri(name: str) -> str:
    return f"/subscriptions/x/resourceGroups/rg-{name}/providers/Microsoft.ServiceBus/namespaces/{name}"


def _setting(namespace: str, **overrides: Any) -> dict[str, Any]:
    return {
        "resourceUri": _namespace_uri(namespace),
        "name": "pairedbus",
        "workspaceId": WORKSPACE,
        "logs": [{"categoryGroup": "allLogs", "enabled": True}],
        **overrides,
    }


def _production(*settings: dict[str, Any]) -> StackBuilder:
    stack = paired_stack(secondary=namespace_inputs(SECONDARY, "northeurope"))
    for role in ("primary", "secondary"):
        _protected(stack.by_name(role))
    for i, setting in enumerate(settings):
        stack.add(DIAGNOSTICS, f"diagnostics-{i}", setting)
    return stack


def test_the_policy_is_advisory_and_names_what_it_mirrors() -> None:
    assert pack.production_namespace_diagnostics.enforcement_level == EnforcementLevel.ADVISORY
    assert "Azure.ServiceBus.AuditLogs" in pack.production_namespace_diagnostics.description
    assert pack.production_namespace_diagnostics in pack.POLICIES


def test_a_production_pair_with_diagnostics_on_both_namespaces_passes() -> None:
    stack = _production(_setting(PRIMARY), _setting(SECONDARY))
    assert violations(pack.production_namespace_diagnostics, stack.args()) == []


def test_each_production_namespace_without_diagnostics_is_reported_once() -> None:
    stack = _production(_setting(PRIMARY))
    (reported,) = violations(pack.production_namespace_diagnostics, stack.args())
    message, urn = reported
    assert urn == stack.by_name("secondary").urn
    assert message.startswith(f"production namespace {SECONDARY}: no diagnostic settings")
    assert len(violations(pack.production_namespace_diagnostics, _production().args())) == 2


def test_a_namespace_that_is_not_protected_is_not_a_production_one() -> None:
    assert violations(pack.production_namespace_diagnostics, paired_stack().args()) == []


@pytest.mark.parametrize(
    "setting",
    [
        _setting(PRIMARY, logs=[{"categoryGroup": "allLogs", "enabled": False}]),
        _setting(PRIMARY, logs=[]),
        {k: v for k, v in _setting(PRIMARY).items() if k != "workspaceId"},
    ],
    ids=["logs disabled", "no logs, metrics only", "no destination"],
)
def test_a_setting_that_sends_no_logs_anywhere_does_not_count(setting: dict[str, Any]) -> None:
    stack = _production(setting, _setting(SECONDARY))
    ((message, urn),) = violations(pack.production_namespace_diagnostics, stack.args())
    assert urn == stack.by_name("primary").urn and "1 setting(s) found without an enabled log" in message


def test_a_setting_on_a_namespace_of_another_name_does_not_count_and_case_does_not_matter() -> None:
    other = _setting("contoso-elsewhere")
    upper = _setting(PRIMARY, resourceUri=_namespace_uri(PRIMARY).upper())
    stack = _production(other, upper, _setting(SECONDARY))
    assert violations(pack.production_namespace_diagnostics, stack.args()) == []
    stack = _production(other, _setting(SECONDARY))
    assert [urn for _, urn in violations(pack.production_namespace_diagnostics, stack.args())] == [
        stack.by_name("primary").urn
    ]


def test_during_a_preview_an_unknown_uri_and_workspace_resolve_through_dependencies() -> None:
    """A new namespace's id, and so the setting's resourceUri, is unknown in a preview; so is a new workspace's id."""
    stack = _production()
    for role in ("primary", "secondary"):
        namespace = stack.by_name(role)
        stack.add(
            DIAGNOSTICS,
            f"{role}-diagnostics",
            _setting(PRIMARY, resourceUri=UNKNOWN, workspaceId=UNKNOWN),
            depends_on=[namespace],
            property_dependencies={"resourceUri": [namespace]},
        )
    assert violations(pack.production_namespace_diagnostics, stack.args()) == []


def _prod_plan(*, without: str | None = None):
    project = PulumiProject.find(REPO)
    settings, secrets = project.stack_settings("prod")
    settings = {k: v for k, v in settings.items() if k != without}
    return render_module.render_program(
        project.run_program, project=project.name, stack="prod", config=settings, secret_keys=secrets
    )


RULE = "production-namespace-diagnostics"


def test_the_prod_stack_passes_and_without_its_diagnostics_gets_one_advisory_per_namespace() -> None:
    assert not [v for v in evaluate_plan(_prod_plan()) if v.policy == RULE]
    everything = evaluate_plan(_prod_plan(without="pairedbus:diagnostics"))
    reported = [v for v in everything if v.policy == RULE]
    assert len(reported) == 2 and all(v.enforcement_level == "advisory" for v in reported)
    assert not has_mandatory(everything)  # advisory: reported, never blocking
    assert sorted(v.resource_urn.rsplit("::", 1)[1] for v in reported) == [
        "pairedbus-pair-primary",
        "pairedbus-pair-secondary",
    ]
