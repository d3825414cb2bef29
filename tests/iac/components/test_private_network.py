"""Secure prod by default (issue 11 item 8): private endpoints per Premium namespace with their DNS
registration, the syphon's environment on its own internal subnet, and every resource whose loss would
stop or lose messages protected in production (backlog queues excepted: retained, never protected)."""

from __future__ import annotations

from typing import Any

import pytest

from pairedbus import contract
from pairedbus.iac.components.paired_namespace import PairedNamespace
from pairedbus.iac.config import StackConfigError, parse_stack_config
from pairedbus.plans.model import Plan
from tests.iac.components.conftest import render_config
from tests.iac.conftest import NETWORK

PRIVATE_ENDPOINT = "azure-native:network:PrivateEndpoint"
ZONE_GROUP = "azure-native:network:PrivateDnsZoneGroup"
ENVIRONMENT = "azure-native:app:ManagedEnvironment"


def _program() -> None:
    from pairedbus.iac.config import load_pulumi_stack_config

    PairedNamespace.from_config("pairedbus", load_pulumi_stack_config())


def _render(config: dict[str, Any]) -> Plan:
    return render_config(config, _program)


def test_each_premium_namespace_gets_a_private_endpoint_registered_in_the_service_bus_zone(
    production_config_dict: dict[str, Any],
) -> None:
    plan = _render(production_config_dict)
    # Named from the pair (`pairedbus`): `pairedbus-pair-primary`, `pairedbus-pair-primary-pe`, ...
    namespaces = {ns.name.removeprefix("pairedbus-pair-"): ns for ns in plan.of_type(contract.TYPE_NAMESPACE)}
    endpoints = {pe.name.removeprefix("pairedbus-pair-"): pe for pe in plan.of_type(PRIVATE_ENDPOINT)}
    assert set(endpoints) == {"primary-pe", "secondary-pe"}
    for role in ("primary", "secondary"):
        pe = endpoints[f"{role}-pe"].inputs
        namespace = production_config_dict[role]["name"]
        assert pe["privateEndpointName"] == f"pe-{namespace}"
        assert pe["subnet"] == {"id": NETWORK["privateEndpointSubnetId"]}
        assert pe["location"] == production_config_dict["primary"]["location"]  # the syphon's region
        (connection,) = pe["privateLinkServiceConnections"]
        assert connection["groupIds"] == ["namespace"]
        assert connection["privateLinkServiceId"].endswith(f"/providers/Microsoft.ServiceBus/namespaces/{namespace}")
        assert namespaces[role].urn in endpoints[f"{role}-pe"].dependencies
    groups = {g.name.removeprefix("pairedbus-pair-"): g for g in plan.of_type(ZONE_GROUP)}
    assert set(groups) == {"primary-pe-dns", "secondary-pe-dns"}
    for role in ("primary", "secondary"):
        group = groups[f"{role}-pe-dns"].inputs
        assert group["privateEndpointName"] == f"pe-{production_config_dict[role]['name']}"
        assert endpoints[f"{role}-pe"].urn in groups[f"{role}-pe-dns"].dependencies
        (zone,) = group["privateDnsZoneConfigs"]
        assert zone["privateDnsZoneId"] == NETWORK["privateDnsZoneId"]
        assert zone["privateDnsZoneId"].endswith("/privateDnsZones/privatelink.servicebus.windows.net")


def test_the_syphon_environment_runs_internal_on_its_own_subnet(production_config_dict: dict[str, Any]) -> None:
    (environment,) = _render(production_config_dict).of_type(ENVIRONMENT)
    assert environment.inputs["vnetConfiguration"] == {
        "infrastructureSubnetId": NETWORK["syphonInfrastructureSubnetId"],
        "internal": True,
    }


def test_without_network_settings_there_is_no_private_endpoint_and_no_vnet(config_dict: dict[str, Any]) -> None:
    plan = _render(config_dict)
    assert not plan.of_type(PRIVATE_ENDPOINT) and not plan.of_type(ZONE_GROUP)
    (environment,) = plan.of_type(ENVIRONMENT)
    assert "vnetConfiguration" not in environment.inputs


def test_a_standard_namespace_beside_a_premium_one_gets_no_private_endpoint(
    premium_config_dict: dict[str, Any],
) -> None:
    premium_config_dict["secondary"] = {**premium_config_dict["secondary"], "sku": "Standard"}
    for key in ("capacity", "premiumMessagingPartitions"):
        premium_config_dict["secondary"].pop(key, None)
    premium_config_dict["network"] = dict(NETWORK)
    assert [pe.name for pe in _render(premium_config_dict).of_type(PRIVATE_ENDPOINT)] == ["pairedbus-pair-primary-pe"]


#: What would stop or lose messages if deleted: the namespaces and their groups, the entities, the
#: private endpoints and their DNS records, the syphon's identity, role assignments, environment and app.
PROTECTED_IN_PRODUCTION = {
    "azure-native:resources:ResourceGroup",
    contract.TYPE_NAMESPACE,
    contract.TYPE_QUEUE,
    contract.TYPE_TOPIC,
    contract.TYPE_SUBSCRIPTION,
    PRIVATE_ENDPOINT,
    ZONE_GROUP,
    "azure-native:managedidentity:UserAssignedIdentity",
    ENVIRONMENT,
    "azure-native:app:ContainerApp",
}


def test_production_protects_every_resource_whose_loss_would_stop_or_lose_messages(
    production_config_dict: dict[str, Any],
) -> None:
    # The options as the engine receives them (the mock monitor's RegisterResourceRequest).
    production_config_dict["syphon"] = {**production_config_dict["syphon"], "minReplicas": 2, "maxReplicas": 3}
    plan = _render(production_config_dict)
    custom = [r for r in plan.resources if r.custom]
    assert {r.type for r in custom} >= PROTECTED_IN_PRODUCTION
    for resource in custom:
        if resource.type in PROTECTED_IN_PRODUCTION:
            assert resource.protect, resource.name
    grants = plan.of_type("azure-native:authorization:RoleAssignment")
    syphon_grants = [g for g in grants if g.name.startswith("pairedbus-syphon-")]
    assert len(syphon_grants) == 4 and all(g.protect for g in syphon_grants)  # receive, send, list, scale
    # The deployer's own data-plane role moves no message and must be droppable (backlogAuth: sas).
    (deployer,) = [g for g in grants if g.name == "pairedbus-backlog-deployer-data-owner"]
    assert not deployer.protect
    # Backlog queues: retained, never protected (lowering the count must not fail `pulumi up`).
    backlog = plan.of_type(contract.TYPE_BACKLOG_QUEUE)
    assert backlog and all(q.retain_on_delete and not q.protect for q in backlog)
    # Logs only: not protected.
    (workspace,) = plan.of_type("azure-native:operationalinsights:Workspace")
    assert not workspace.protect


def test_nothing_is_protected_outside_production(config_dict: dict[str, Any]) -> None:
    assert not [r.name for r in _render(config_dict).resources if r.protect]


@pytest.mark.parametrize("role", ["primary", "secondary"])
def test_a_premium_namespace_denying_public_access_needs_the_network(
    production_config_dict: dict[str, Any], role: str
) -> None:
    del production_config_dict["network"]
    production_config_dict["primary" if role == "secondary" else "secondary"]["publicNetworkAccess"] = "Enabled"
    production_config_dict["production"] = False
    with pytest.raises(StackConfigError) as info:
        parse_stack_config(production_config_dict)
    (problem,) = info.value.problems
    assert problem.startswith("pairedbus:network: expected privateEndpointSubnetId")
    assert f"{role}.publicNetworkAccess is 'Disabled'" in problem
