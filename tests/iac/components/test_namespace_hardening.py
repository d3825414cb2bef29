"""What a hardened pair renders (namespace_hardening): diagnostic settings, locks, network rule sets and a
customer-managed key, named from the component's name, under the namespaces' part, with the caller's options."""

from __future__ import annotations

import copy
from typing import Any

import pulumi

from pairedbus import contract
from pairedbus.iac import PairedNamespace
from pairedbus.iac.render.program import render_program
from pairedbus.plans.model import Plan
from tests.iac.components.test_paired_namespace import ARGS

SUBSCRIPTION = "/subscriptions/6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
IDENTITY = f"{SUBSCRIPTION}/resourceGroups/rg-sec/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id-cmk"
WORKSPACE = f"{SUBSCRIPTION}/resourceGroups/rg-logs/providers/Microsoft.OperationalInsights/workspaces/law-central"
DIAGNOSTICS, LOCK, RULES = (
    "azure-native:monitor:DiagnosticSetting",
    "azure-native:authorization:ManagementLockByScope",
    "azure-native:servicebus:NamespaceNetworkRuleSet",
)


def _render(name: str = "orders", opts: pulumi.ResourceOptions | None = None, **changes: Any) -> Plan:
    args = copy.deepcopy(ARGS)
    args.update(changes)
    return render_program(lambda: PairedNamespace(name, args, opts), project="pairedbus", stack="test", config={})


def _by_name(plan: Plan, type_: str) -> dict[str, Any]:
    return {r.name: r for r in plan.of_type(type_)}


def test_nothing_is_added_unless_asked() -> None:
    plan = _render()
    assert not plan.of_type(DIAGNOSTICS) and not plan.of_type(LOCK) and not plan.of_type(RULES)
    (primary,) = [r for r in plan.of_type(contract.TYPE_NAMESPACE) if r.name == "orders-pair-primary"]
    assert primary.inputs["identity"] == {"type": "SystemAssigned"} and "encryption" not in primary.inputs


def test_hardening_is_named_from_the_component_and_held_by_the_namespaces_part() -> None:
    plan = _render("billing", diagnostics={}, namespace_lock="CanNotDelete")
    (pair,) = plan.of_type(contract.TYPE_NAMESPACE_PAIR)
    assert sorted(_by_name(plan, DIAGNOSTICS)) == ["billing-primary-diagnostics", "billing-secondary-diagnostics"]
    assert sorted(_by_name(plan, LOCK)) == ["billing-primary-lock", "billing-secondary-lock"]
    assert all(r.parent == pair.urn for r in [*plan.of_type(DIAGNOSTICS), *plan.of_type(LOCK)])


def test_diagnostics_go_to_the_syphon_workspace_unless_another_is_given() -> None:
    plan = _render(diagnostics={})
    (workspace,) = plan.of_type("azure-native:operationalinsights:Workspace")
    primary = _by_name(plan, DIAGNOSTICS)["orders-primary-diagnostics"]
    assert primary.inputs["workspaceId"].endswith(
        f"/workspaces/{workspace.inputs.get('workspaceName', workspace.name)}"
    )
    assert primary.inputs["logs"] == [{"categoryGroup": "allLogs", "enabled": True}]
    assert primary.inputs["metrics"] == [{"category": "AllMetrics", "enabled": True}]
    assert primary.inputs["logAnalyticsDestinationType"] == "Dedicated"
    assert primary.inputs["resourceUri"].endswith("/namespaces/contoso-primary")

    given = _render(diagnostics={"workspace_id": WORKSPACE, "logs": ["OperationalLogs"], "metrics": False})
    secondary = _by_name(given, DIAGNOSTICS)["orders-secondary-diagnostics"]
    assert secondary.inputs["workspaceId"] == WORKSPACE
    assert secondary.inputs["logs"] == [{"category": "OperationalLogs", "enabled": True}]
    assert "metrics" not in secondary.inputs
    assert secondary.inputs["resourceUri"].endswith("/namespaces/contoso-secondary")


def test_production_locks_are_protected_with_the_namespaces() -> None:
    plan = _render(
        production=True,
        primary={
            **ARGS["primary"],
            "sku": "Premium",
            "premium_messaging_partitions": 2,
            "public_network_access": "Disabled",
        },
        secondary={
            **ARGS["secondary"],
            "sku": "Premium",
            "premium_messaging_partitions": 2,
            "public_network_access": "Disabled",
        },
        network={
            "private_endpoint_subnet_id": f"{SUBSCRIPTION}/resourceGroups/n/providers/Microsoft.Network/virtualNetworks/vnet/subnets/pe",
            "private_dns_zone_id": f"{SUBSCRIPTION}/resourceGroups/n/providers/Microsoft.Network/privateDnsZones/"
            "privatelink.servicebus.windows.net",
            "syphon_infrastructure_subnet_id": f"{SUBSCRIPTION}/resourceGroups/n/providers/Microsoft.Network/virtualNetworks/vnet/subnets/env",
        },
    )
    locks = _by_name(plan, LOCK)
    assert sorted(locks) == ["orders-primary-lock", "orders-secondary-lock"]
    assert all(lock.protect and lock.inputs["level"] == "CanNotDelete" for lock in locks.values())
    assert locks["orders-primary-lock"].inputs["scope"].endswith("/namespaces/contoso-primary")


def test_a_lock_outside_production_is_not_protected() -> None:
    (plain,) = [r for r in _render(namespace_lock="CanNotDelete").of_type(LOCK) if r.name == "orders-primary-lock"]
    assert not plain.protect


def test_the_callers_protect_on_the_component_reaches_the_hardening() -> None:
    protected = _render(opts=pulumi.ResourceOptions(protect=True), namespace_lock="CanNotDelete", diagnostics={})
    assert all(r.protect for r in [*protected.of_type(LOCK), *protected.of_type(DIAGNOSTICS)])


def test_a_customer_managed_key_adds_its_identity_to_the_namespace() -> None:
    key = {
        "key_vault_uri": "https://kv-contoso.vault.azure.net",
        "key_name": "sb-cmk",
        "user_assigned_identity_id": IDENTITY,
    }
    premium = {"sku": "Premium", "premium_messaging_partitions": 2}
    plan = _render(
        primary={**ARGS["primary"], **premium, "encryption": key}, secondary={**ARGS["secondary"], **premium}
    )
    namespaces = {r.inputs["tags"][contract.TAG_ROLE]: r for r in plan.of_type(contract.TYPE_NAMESPACE)}
    assert namespaces["primary"].inputs["identity"] == {
        "type": "SystemAssigned, UserAssigned",
        "userAssignedIdentities": [IDENTITY],
    }
    assert namespaces["primary"].inputs["encryption"] == {
        "keySource": "Microsoft.KeyVault",
        "keyVaultProperties": [
            {
                "keyVaultUri": "https://kv-contoso.vault.azure.net",
                "keyName": "sb-cmk",
                "identity": {"userAssignedIdentity": IDENTITY},
            }
        ],
        "requireInfrastructureEncryption": False,
    }
    assert "encryption" not in namespaces["secondary"].inputs


def test_a_network_rule_set_keeps_public_access_and_allows_only_its_rules() -> None:
    rules = {"ip_rules": ["203.0.113.0/24"], "trusted_service_access_enabled": True}
    plan = _render(primary={**ARGS["primary"], "network_rule_set": rules})
    (rule_set,) = plan.of_type(RULES)
    assert rule_set.name == "orders-primary-network-rules"
    assert rule_set.inputs == {
        "namespaceName": "contoso-primary",
        "resourceGroupName": "rg-primary",
        "defaultAction": "Deny",
        "publicNetworkAccess": "Enabled",
        "trustedServiceAccessEnabled": True,
        "ipRules": [{"ipMask": "203.0.113.0/24", "action": "Allow"}],
        "virtualNetworkRules": [],
    }
