"""Inputs, never placeholders: names, resource-group names, locations, tags and the image may be outputs of other
resources. Known values are checked when PairedNamespace is built; outputs when they resolve (a failed check fails
the deployment with the same one line); nothing stands in for an output in any registered input. Rendered in update
mode and in preview mode (Pulumi's mocks with `preview=True`, where upstream outputs are unknown)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pulumi
import pytest
from pulumi.output import Unknown
from pulumi_azure_native import resources

from pairedbus import contract
from pairedbus.iac import PairedNamespace
from pairedbus.iac.config import StackConfigError
from pairedbus.iac.render.mocks import PlanMocks
from pairedbus.iac.render.program import render_program
from pairedbus.iac.render.project import PulumiProject
from pairedbus.plans.model import SECRET_MASK, Plan
from tests.iac.components.test_paired_namespace import ARGS, REPO

#: What an output must never become in a registered input: the old stand-in, or anything of ours standing in.
PLACEHOLDERS = ("unknown-until-deployment", "<output at", "pulumi.output.Output", "Calling __str__ on an Output")


class PreviewMocks(PlanMocks):
    """In a preview, a resource about to be created has only its inputs: every computed output (a resource
    group's `name` read back, an id) is unknown, as the engine reports it."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        if args.typ == "azure-native:resources:ResourceGroup" and args.name.startswith("team-"):
            return "", {k: v for k, v in args.inputs.items() if k != "resourceGroupName"}
        if _unknown(args.inputs):  # its id and outputs are unknown too; only its known inputs read back
            # (`identity` excepted: ARM takes a list of identities and returns a map)
            return "", {k: v for k, v in args.inputs.items() if not _unknown(v) and k != "identity"}
        return super().new_resource(args)


def _unknown(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_unknown(v) for v in value.values())
    if isinstance(value, list):
        return any(_unknown(v) for v in value)
    return isinstance(value, Unknown)


def render_preview(program: Callable[[], None]) -> Plan:
    """`render` in preview mode, with mocks that leave a new resource's outputs unknown."""
    return render_program(program, project="pairedbus", stack="test", config={}, preview=True, mocks=PreviewMocks())


def _recorded_unknown(inputs: dict[str, Any], key: str) -> bool:
    """The plan records an input that is unknown in a preview as None (`render._plan_value_from_engine`), its key present."""
    return key in inputs and inputs[key] is None


def placeholders_in(plan: Plan) -> list[str]:
    """Every registered input that holds a stand-in for a value, as `type name: text`."""
    found = []
    for resource in plan.resources:
        text = json.dumps(resource.inputs, default=lambda v: "(unknown)" if isinstance(v, Unknown) else repr(v))
        found += [f"{resource.type} {resource.name}: {p}" for p in PLACEHOLDERS if p in text]
    return found


def _with_outputs(**overrides: Any) -> Callable[[], None]:
    """A user's program: its own resource group, whose name (an output) the pair's resource groups, a tag and the
    primary namespace's name come from."""

    def program() -> None:
        group = resources.ResourceGroup("team-rg", resource_group_name="rg-team", location="westeurope")
        args = copy.deepcopy(ARGS)
        args["resource_groups"] = {
            "primary": {"name": group.name, "create": False},
            "secondary": {"name": group.name.apply(lambda n: f"{n}-dr")},
        }
        args["primary"] = {**args["primary"], "name": group.name.apply(lambda n: n.replace("rg-", "contoso-"))}
        args["tags"] = {"owner": group.name, "team": "orders"}
        args.update(overrides)
        PairedNamespace("orders", args)

    return program


def test_outputs_reach_the_resources_validated_and_nothing_stands_in() -> None:
    plan = render_program(_with_outputs(), project="pairedbus", stack="test")
    namespaces = {ns.inputs["tags"][contract.TAG_ROLE]: ns.inputs for ns in plan.of_type(contract.TYPE_NAMESPACE)}
    assert namespaces["primary"]["namespaceName"] == "contoso-team"
    assert namespaces["primary"]["resourceGroupName"] == "rg-team"
    assert namespaces["primary"]["tags"]["owner"] == "rg-team" and namespaces["primary"]["tags"]["team"] == "orders"
    assert namespaces["secondary"]["resourceGroupName"] == "rg-team-dr"
    (created,) = [g for g in plan.of_type("azure-native:resources:ResourceGroup") if g.name != "team-rg"]
    assert created.inputs["resourceGroupName"] == "rg-team-dr"
    backlog = sorted(q.inputs["queueName"] for q in plan.of_type(contract.TYPE_BACKLOG_QUEUE))
    assert backlog == [f"contoso-team/x-servicebus-transfer/{i}" for i in range(3)]
    (app,) = plan.of_type("azure-native:app:ContainerApp")
    env = {e["name"]: e["value"] for e in app.inputs["template"]["containers"][0]["env"]}
    assert env["PAIREDBUS_PRIMARY"] == "contoso-team.servicebus.windows.net"
    assert placeholders_in(plan) == []


def test_a_location_output_is_normalised_like_a_written_one() -> None:
    def program() -> None:
        group = resources.ResourceGroup("team-rg", resource_group_name="rg-team", location="westeurope")
        args = copy.deepcopy(ARGS)
        args["secondary"] = {**args["secondary"], "location": group.location.apply(lambda _: "North Europe")}
        PairedNamespace("orders", args)

    plan = render_program(program, project="pairedbus", stack="test")
    locations = sorted(ns.inputs["location"] for ns in plan.of_type(contract.TYPE_NAMESPACE))
    assert locations == ["northeurope", "westeurope"]


def test_a_known_mistake_is_refused_before_anything_registers_even_with_outputs_elsewhere() -> None:
    bad = {**ARGS["secondary"], "name": "x"}
    with pytest.raises(StackConfigError) as caught:
        render_program(_with_outputs(secondary=bad), project="pairedbus", stack="test")
    assert caught.value.problems == [
        "orders: secondary.name: expected 6-50 letters, digits or '-', starting with a letter, ending with a letter "
        "or digit, not ending in -sb or -mgmt (in any letter case), got 'x'"
    ]


def test_an_output_that_resolves_to_a_bad_value_fails_the_deployment_with_the_same_line() -> None:
    def program() -> None:
        group = resources.ResourceGroup("team-rg", resource_group_name="rg-team", location="westeurope")
        args = copy.deepcopy(ARGS)
        args["primary"] = {**args["primary"], "name": group.name.apply(lambda _: "x")}
        PairedNamespace("orders", args)

    with pytest.raises(Exception, match=r"orders: primary\.name: expected 6-50 letters.*got 'x'"):
        render_program(program, project="pairedbus", stack="test")


def test_a_cross_field_rule_waits_for_the_output_and_then_fails() -> None:
    """Secondary in the primary's region: unknown at build time (no spurious failure, no guess), refused on
    resolution."""

    def program() -> None:
        group = resources.ResourceGroup("team-rg", resource_group_name="rg-team", location="westeurope")
        args = copy.deepcopy(ARGS)
        args["secondary"] = {**args["secondary"], "location": group.location}
        PairedNamespace("orders", args)

    with pytest.raises(Exception, match=r"orders: secondary\.location: expected a region other than the primary"):
        render_program(program, project="pairedbus", stack="test")


def test_an_output_where_the_value_decides_the_resources_is_refused_by_name() -> None:
    def program() -> None:
        group = resources.ResourceGroup("team-rg", resource_group_name="rg-team", location="westeurope")
        args = copy.deepcopy(ARGS)
        args["queues"] = [{"name": group.name}]
        PairedNamespace("orders", args)

    with pytest.raises(StackConfigError) as caught:
        render_program(program, project="pairedbus", stack="test")
    assert caught.value.problems == [
        "orders: queues[0].name: expected a value known when the component is built, got an output of another "
        "resource (it decides which queues are created)"
    ]


def test_in_a_preview_unknown_outputs_stay_unknown_and_nothing_fails() -> None:
    plan = render_preview(_with_outputs())
    namespaces = {ns.inputs["tags"][contract.TAG_ROLE]: ns.inputs for ns in plan.of_type(contract.TYPE_NAMESPACE)}
    # Unknown, as `pulumi preview` shows an output of a resource yet to be created.
    assert _recorded_unknown(namespaces["primary"], "namespaceName")
    assert _recorded_unknown(namespaces["primary"], "resourceGroupName")
    assert namespaces["secondary"]["namespaceName"] == "contoso-secondary"  # known values stay known
    assert placeholders_in(plan) == []


def test_in_a_preview_a_rule_on_an_unknown_value_does_not_fail_spuriously() -> None:
    def program() -> None:
        group = resources.ResourceGroup("team-rg", resource_group_name="rg-team", location="westeurope")
        args = copy.deepcopy(ARGS)
        args["secondary"] = {**args["secondary"], "location": group.name.apply(lambda _: "westeurope")}
        PairedNamespace("orders", args)

    plan = render_preview(program)
    (secondary,) = [
        n for n in plan.of_type(contract.TYPE_NAMESPACE) if n.inputs["tags"][contract.TAG_ROLE] == "secondary"
    ]
    assert _recorded_unknown(secondary.inputs, "location")  # neither a failure nor a guess


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_no_stack_render_holds_a_placeholder(stack: str) -> None:
    from pairedbus.iac.render import render_stack

    _, plan = render_stack(PulumiProject.find(REPO), stack)
    assert plan.resources and placeholders_in(plan) == []


def test_tag_names_are_checked_at_once_when_a_tag_value_is_an_output() -> None:
    def program() -> None:
        group = resources.ResourceGroup("team-rg", resource_group_name="rg-team", location="westeurope")
        args = copy.deepcopy(ARGS)
        args["tags"] = {"owner": group.name, "cost/center": "42", "long": "v" * 300}
        PairedNamespace("orders", args)

    with pytest.raises(StackConfigError) as caught:
        render_program(program, project="pairedbus", stack="test")
    assert caught.value.problems == [
        "orders: tags.cost/center: expected a tag name without any of < > % & \\ ? /, got 'cost/center'",
        "orders: tags.long: expected a tag value of at most 256 characters, got 300",
    ]


def test_a_value_that_fails_when_its_output_resolves_names_the_pair() -> None:
    """In a program with several pairs the deployment's error says which pair's value it was."""

    def program() -> None:
        group = resources.ResourceGroup("team-rg", resource_group_name="rg-team", location="westeurope")
        PairedNamespace("orders", copy.deepcopy(ARGS) | {"primary": {**ARGS["primary"], "name": "orders-primary"}})
        args = copy.deepcopy(ARGS)
        args["primary"] = {**args["primary"], "name": group.name.apply(lambda rg: f"{rg}_billing")}
        args["secondary"] = {**args["secondary"], "name": "billing-secondary"}
        PairedNamespace("billing", args)

    with pytest.raises(Exception, match=r"billing: primary\.name: expected 6-50 letters.*got 'rg-team_billing'"):
        render_program(program, project="pairedbus", stack="test")


# --- Outputs wherever a value does not decide which resources exist ------------------------------------------

_IDS = "/subscriptions/6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f/resourceGroups/rg-ops/providers"
WORKSPACE_ID = f"{_IDS}/Microsoft.OperationalInsights/workspaces/law-ops"
CMK_IDENTITY_ID = f"{_IDS}/Microsoft.ManagedIdentity/userAssignedIdentities/id-cmk"


def _hardened(out: Callable[[Any], Any], **changes: Any) -> dict[str, Any]:
    """A pair whose diagnostics workspace, customer-managed key and firewall rules come from `out` (another
    resource's outputs in the program)."""
    args = copy.deepcopy(ARGS)
    args["primary"] = {
        **args["primary"],
        "sku": "Premium",
        "encryption": {
            "key_vault_uri": out("https://kv-contoso.vault.azure.net"),
            "key_name": out("sb-key"),
            "user_assigned_identity_id": out(CMK_IDENTITY_ID),
        },
        "network_rule_set": {"ip_rules": out(["203.0.113.0/24"])},  # the whole list an output
    }
    args["secondary"] = {
        **args["secondary"],
        "network_rule_set": {"ip_rules": ["198.51.100.7", out("198.51.100.8")]},  # one rule an output
    }
    args["diagnostics"] = {"workspace_id": out(WORKSPACE_ID)}
    args.update(changes)
    return args


def _from_the_team_group(
    args_of: Callable[[Callable[[Any], Any]], dict[str, Any]], *, secret: bool = False
) -> Callable[[], None]:
    def program() -> None:
        group = resources.ResourceGroup("team-rg", resource_group_name="rg-team", location="westeurope")

        def out(value: Any) -> Any:
            resolved = group.name.apply(lambda _: value)
            return pulumi.Output.secret(resolved) if secret else resolved

        PairedNamespace("orders", args_of(out))  # type: ignore[arg-type]

    return program


def test_the_diagnostics_workspace_the_key_and_the_firewall_rules_may_be_outputs() -> None:
    plan = render_program(_from_the_team_group(_hardened), project="pairedbus", stack="test")
    settings = plan.of_type("azure-native:monitor:DiagnosticSetting")
    assert [s.inputs["workspaceId"] for s in settings] == [WORKSPACE_ID, WORKSPACE_ID]
    namespaces = {ns.inputs["tags"][contract.TAG_ROLE]: ns.inputs for ns in plan.of_type(contract.TYPE_NAMESPACE)}
    (key,) = namespaces["primary"]["encryption"]["keyVaultProperties"]
    assert key["keyName"] == "sb-key" and key["keyVaultUri"] == "https://kv-contoso.vault.azure.net"
    assert key["identity"]["userAssignedIdentity"] == CMK_IDENTITY_ID
    rules = {r.name: r.inputs["ipRules"] for r in plan.of_type("azure-native:servicebus:NamespaceNetworkRuleSet")}
    assert rules == {
        "orders-primary-network-rules": [{"ipMask": "203.0.113.0/24", "action": "Allow"}],
        "orders-secondary-network-rules": [
            {"ipMask": "198.51.100.7", "action": "Allow"},
            {"ipMask": "198.51.100.8", "action": "Allow"},
        ],
    }
    assert placeholders_in(plan) == []


def test_a_secret_workspace_id_stays_secret() -> None:
    plan = render_program(_from_the_team_group(_hardened, secret=True), project="pairedbus", stack="test")
    settings = plan.of_type("azure-native:monitor:DiagnosticSetting")
    assert [s.inputs["workspaceId"] for s in settings] == [SECRET_MASK, SECRET_MASK]


def test_an_output_rule_that_resolves_to_a_bad_address_fails_naming_the_pair_and_the_rule() -> None:
    def args_of(out: Callable[[Any], Any]) -> dict[str, Any]:
        args = _hardened(out)
        args["secondary"]["network_rule_set"] = {"ip_rules": ["198.51.100.7", out("198.51.100.300")]}
        return args

    with pytest.raises(Exception, match=r"orders: secondary\.networkRuleSet\.ipRules\[1\]: expected an IPv4 address"):
        render_program(_from_the_team_group(args_of), project="pairedbus", stack="test")


@pytest.mark.parametrize(
    ("put", "line"),
    [
        (
            lambda a, o: a.update(backlog_queue_count=o(3)),
            "backlogQueueCount: expected a value known when the component is built, got an output of another "
            "resource (it decides how many backlog queues are created)",
        ),
        (
            lambda a, o: a["syphon"].update(max_replicas=o(3)),
            "syphon.maxReplicas: expected a value known when the component is built, got an output of another "
            "resource (it decides whether the syphon gets a scale rule and its Data Owner role assignment)",
        ),
        (
            lambda a, o: a["syphon"].update(cpu=o(1.0)),
            "syphon.cpu: expected a value known when the component is built, got an output of another resource "
            "(the component reads it to build its resources; outputs may be names, locations, tag values, the "
            "image, ARM ids, Key Vault keys and firewall rules)",
        ),
    ],
)
def test_an_output_is_refused_only_with_the_true_reason(put: Callable[..., None], line: str) -> None:
    def args_of(out: Callable[[Any], Any]) -> dict[str, Any]:
        args = copy.deepcopy(ARGS)
        put(args, out)
        return args

    with pytest.raises(StackConfigError) as caught:
        render_program(_from_the_team_group(args_of), project="pairedbus", stack="test")
    assert caught.value.problems == [f"orders: {line}"]
