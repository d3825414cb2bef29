"""NamespacePair: two explicitly named, secure-by-default namespaces in their resource groups."""

from __future__ import annotations

from pairedbus import contract
from tests.iac.components.conftest import only


def test_namespaces_have_explicit_names_and_the_security_baseline(render_core, config_dict) -> None:
    plan = render_core(config_dict)
    for role, location in (("primary", "westeurope"), ("secondary", "northeurope")):
        ns = only(plan, contract.TYPE_NAMESPACE, namespaceName=f"contoso-{role}")
        assert ns.inputs["location"] == location
        assert ns.inputs["disableLocalAuth"] is True
        assert ns.inputs["minimumTlsVersion"] == contract.MINIMUM_TLS_VERSION
        assert ns.inputs["identity"] == {"type": "SystemAssigned"}
        assert ns.inputs["sku"] == {"name": "Standard", "tier": "Standard"}
        assert "premiumMessagingPartitions" not in ns.inputs
        assert ns.inputs["tags"][contract.TAG_ROLE] == role
        assert ns.parent is not None and contract.TYPE_NAMESPACE_PAIR in ns.parent


def test_premium_gets_capacity_and_messaging_partitions(render_core, premium_config_dict) -> None:
    premium_config_dict["primary"]["zoneRedundant"] = True
    plan = render_core(premium_config_dict)
    ns = only(plan, contract.TYPE_NAMESPACE, namespaceName="contoso-primary")
    assert ns.inputs["sku"] == {"name": "Premium", "tier": "Premium", "capacity": 2}
    assert ns.inputs["premiumMessagingPartitions"] == 2
    assert ns.inputs["zoneRedundant"] is True


def test_resource_groups_are_created_or_referenced(render_core, config_dict) -> None:
    config_dict["resourceGroups"]["secondary"]["create"] = False
    plan = render_core(config_dict)
    groups = plan.of_type("azure-native:resources:ResourceGroup")
    assert [g.inputs["resourceGroupName"] for g in groups] == ["rg-primary"]
    secondary = only(plan, contract.TYPE_NAMESPACE, namespaceName="contoso-secondary")
    assert secondary.inputs["resourceGroupName"] == "rg-secondary"


def test_sas_fallback_enables_local_auth_on_the_secondary_only(render_core, config_dict) -> None:
    config_dict["backlogAuth"] = "sas"
    plan = render_core(config_dict)
    assert only(plan, contract.TYPE_NAMESPACE, namespaceName="contoso-secondary").inputs["disableLocalAuth"] is False
    assert only(plan, contract.TYPE_NAMESPACE, namespaceName="contoso-primary").inputs["disableLocalAuth"] is True
    assert not plan.of_type("azure-native:authorization:RoleAssignment")


def test_production_protects_namespaces_and_groups(render_core, production_config_dict) -> None:
    plan = render_core(production_config_dict)
    stateful = plan.of_type(contract.TYPE_NAMESPACE) + plan.of_type("azure-native:resources:ResourceGroup")
    assert stateful and all(r.protect for r in stateful)


def test_component_outputs_are_registered(render_core, config_dict) -> None:
    plan = render_core(config_dict)
    assert plan.outputs["primaryEndpoint"] == "https://contoso-primary.servicebus.windows.net:443/"
