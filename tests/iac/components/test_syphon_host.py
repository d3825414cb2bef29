"""SyphonHost rendered offline with Pulumi's mock runtime: what it would register, input by input."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from pairedbus import contract, durations
from pairedbus.iac.components import syphon_host
from pairedbus.iac.components.syphon_host import SyphonHost, SyphonHostArgs
from pairedbus.iac.render.mocks import FAKE_SUBSCRIPTION_ID
from pairedbus.iac.render.program import render_program
from pairedbus.plans.model import Plan, PlannedResource
from pairedbus.service.endpoints import (
    DEFAULT_PORT,
    ENV_AZURE_CLIENT_ID,
    ENV_PRIMARY,
    ENV_SECONDARY,
    ENV_SECONDARY_RESOURCE_ID,
    keda_scale_rule_metadata,
)

PRIMARY_ID = (
    f"/subscriptions/{FAKE_SUBSCRIPTION_ID}/resourceGroups/rg-p/providers/Microsoft.ServiceBus/namespaces/contoso"
)
SECONDARY_ID = (
    f"/subscriptions/{FAKE_SUBSCRIPTION_ID}/resourceGroups/rg-s/providers/Microsoft.ServiceBus/namespaces/contoso-dr"
)
REGISTRY_ID = (
    f"/subscriptions/{FAKE_SUBSCRIPTION_ID}/resourceGroups/rg-acr/providers/Microsoft.ContainerRegistry/registries/acme"
)

ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
CONTAINER_APP = "azure-native:app:ContainerApp"
IDENTITY = "azure-native:managedidentity:UserAssignedIdentity"
WORKSPACE = "azure-native:operationalinsights:Workspace"
ENVIRONMENT = "azure-native:app:ManagedEnvironment"


def _role_id(guid: str) -> str:
    return f"/subscriptions/{FAKE_SUBSCRIPTION_ID}/providers/Microsoft.Authorization/roleDefinitions/{guid}"


def _render(names: bool = True, **config: Any) -> Plan:
    syphon_config = {"image": "acme.azurecr.io/pairedbus:1.2.3", **config}
    namespace_names = {"primary_namespace_name": "contoso", "secondary_namespace_name": "contoso-dr"} if names else {}

    def program() -> None:
        host = SyphonHost(
            "syphon",
            SyphonHostArgs(
                syphon=syphon_config,
                location="westeurope",
                resource_group_name="rg-p",
                primary_namespace_id=PRIMARY_ID,
                secondary_namespace_id=SECONDARY_ID,
                primary_fqdn=contract.service_bus_fqdn("contoso"),
                secondary_fqdn=contract.service_bus_fqdn("contoso-dr"),
                tags={"team": "messaging"},
                **namespace_names,
            ),
        )
        pulumi.export("appName", host.app_name)
        pulumi.export("fqdn", host.fqdn)
        pulumi.export("principalId", host.principal_id)

    return render_program(program, project="pairedbus", stack="test")


def _one(plan: Plan, type_: str) -> PlannedResource:
    (resource,) = plan.of_type(type_)
    return resource


def _container(app: PlannedResource) -> dict[str, Any]:
    (container,) = app.inputs["template"]["containers"]
    return container


@pytest.fixture(scope="module")
def plain() -> Plan:
    return _render()


@pytest.fixture(scope="module")
def with_registry() -> Plan:
    return _render(registry={"server": "acme.azurecr.io", "resource_id": REGISTRY_ID})


def test_component_has_the_contract_type_and_parents_every_child(plain: Plan) -> None:
    (component,) = plain.of_type(contract.TYPE_SYPHON_HOST)
    children = [r for r in plain.resources if r is not component]
    assert {r.type for r in children} == {WORKSPACE, ENVIRONMENT, IDENTITY, ROLE_ASSIGNMENT, CONTAINER_APP}
    assert all(r.parent == component.urn for r in children)


def test_identity_gets_exactly_receiver_on_secondary_sender_on_primary_and_reader_to_list(plain: Plan) -> None:
    identity = _one(plain, IDENTITY)
    grants = {(r.inputs["roleDefinitionId"], r.inputs["scope"]) for r in plain.of_type(ROLE_ASSIGNMENT)}
    assert grants == {
        (_role_id(contract.ROLE_SERVICE_BUS_DATA_RECEIVER), SECONDARY_ID),
        (_role_id(contract.ROLE_SERVICE_BUS_DATA_SENDER), PRIMARY_ID),
        # control plane only: lists backlog queues through ARM; no Data Owner, no keys
        (_role_id(contract.ROLE_READER), SECONDARY_ID),
    }
    for assignment in plain.of_type(ROLE_ASSIGNMENT):
        assert assignment.inputs["principalType"] == "ServicePrincipal"
        assert assignment.inputs["principalId"] == "syphon-identity-principal"
        assert identity.urn in assignment.property_dependencies["principalId"]


def test_registry_adds_acr_pull_and_pulls_with_the_identity(with_registry: Plan) -> None:
    grants = {(r.inputs["roleDefinitionId"], r.inputs["scope"]) for r in with_registry.of_type(ROLE_ASSIGNMENT)}
    assert (_role_id(contract.ROLE_ACR_PULL), REGISTRY_ID) in grants
    assert len(grants) == 4
    identity = _one(with_registry, IDENTITY)
    app = _one(with_registry, CONTAINER_APP)
    identity_id = f"/subscriptions/{FAKE_SUBSCRIPTION_ID}/resourceGroups/rg-p/providers/Microsoft.ManagedIdentity/userAssignedIdentities/syphon-identity"
    assert app.inputs["configuration"]["registries"] == [{"server": "acme.azurecr.io", "identity": identity_id}]
    assert identity.urn in app.dependencies


def test_without_registry_there_is_no_acr_pull_and_no_registries(plain: Plan) -> None:
    roles = {r.inputs["roleDefinitionId"] for r in plain.of_type(ROLE_ASSIGNMENT)}
    assert _role_id(contract.ROLE_ACR_PULL) not in roles
    assert "registries" not in _one(plain, CONTAINER_APP).inputs["configuration"]


def test_container_app_depends_on_every_role_assignment(with_registry: Plan) -> None:
    app = _one(with_registry, CONTAINER_APP)
    grants = {r.urn for r in with_registry.of_type(ROLE_ASSIGNMENT)}
    assert len(grants) == 4
    assert grants <= set(app.dependencies)


def test_container_runs_the_configured_image_with_the_pair_and_identity_in_its_env(plain: Plan) -> None:
    container = _container(_one(plain, CONTAINER_APP))
    assert container["image"] == "acme.azurecr.io/pairedbus:1.2.3"
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env == {
        ENV_PRIMARY: "contoso.servicebus.windows.net",
        ENV_SECONDARY: "contoso-dr.servicebus.windows.net",
        ENV_SECONDARY_RESOURCE_ID: SECONDARY_ID,
        ENV_AZURE_CLIENT_ID: "syphon-identity-client",
    }
    assert container["resources"] == {"cpu": 0.5, "memory": "1Gi"}


def test_user_assigned_identity_is_attached(plain: Plan) -> None:
    app = _one(plain, CONTAINER_APP)
    assert app.inputs["identity"]["type"] == "UserAssigned"
    (identity_id,) = app.inputs["identity"]["userAssignedIdentities"]
    assert identity_id.endswith("/userAssignedIdentities/syphon-identity")


def test_replicas_come_from_config_and_at_least_one_syphon_always_runs(plain: Plan) -> None:
    assert _one(plain, CONTAINER_APP).inputs["template"]["scale"] == {"minReplicas": 1, "maxReplicas": 1}
    scaled = _render(min_replicas=2, max_replicas=4, cpu=1.0, memory="2Gi")
    app = _one(scaled, CONTAINER_APP)
    scale = app.inputs["template"]["scale"]
    assert (scale["minReplicas"], scale["maxReplicas"]) == (2, 4)
    assert _container(app)["resources"] == {"cpu": 1.0, "memory": "2Gi"}


def test_zero_min_replicas_is_refused_when_the_component_is_used_on_its_own() -> None:
    args = SyphonHostArgs(
        syphon={"image": "x", "min_replicas": 0},
        location="westeurope",
        resource_group_name="rg",
        primary_namespace_id=PRIMARY_ID,
        secondary_namespace_id=SECONDARY_ID,
        primary_fqdn="a",
        secondary_fqdn="b",
    )
    with pytest.raises(ValueError, match=r"minReplicas: expected >= 1"):
        render_program(lambda: SyphonHost("syphon", args), project="pairedbus", stack="test")


def test_probes_use_the_syphons_liveness_and_readiness_endpoints(plain: Plan) -> None:
    # The runtime's endpoints (service/endpoints.py on the runtime branch): /livez, /readyz, port 8080.
    probes = {p["type"]: p for p in _container(_one(plain, CONTAINER_APP))["probes"]}
    assert set(probes) == {"Startup", "Liveness", "Readiness"}
    assert probes["Liveness"]["httpGet"] == {"path": "/livez", "port": 8080}
    assert probes["Readiness"]["httpGet"] == {"path": "/readyz", "port": 8080}
    assert probes["Startup"]["httpGet"] == {"path": "/livez", "port": 8080}


def test_startup_allows_two_minutes_within_the_container_apps_probe_limits(plain: Plan) -> None:
    # Microsoft.App ContainerAppProbe: failureThreshold 1-10, periodSeconds 1-240.
    probes = {p["type"]: p for p in _container(_one(plain, CONTAINER_APP))["probes"]}
    startup = probes["Startup"]
    assert startup["failureThreshold"] <= 10
    assert startup["periodSeconds"] * startup["failureThreshold"] == 120
    for probe in probes.values():
        assert 1 <= probe["failureThreshold"] <= 10 and 1 <= probe["periodSeconds"] <= 240


def test_shutdown_grace_is_the_backlog_lock_duration(plain: Plan) -> None:
    template = _one(plain, CONTAINER_APP).inputs["template"]
    lock = durations.duration_timedelta(str(contract.BACKLOG_QUEUE_PROPERTIES["lockDuration"]))
    assert template["terminationGracePeriodSeconds"] == lock.total_seconds() == 60


def test_ingress_is_internal_only(plain: Plan) -> None:
    ingress = _one(plain, CONTAINER_APP).inputs["configuration"]["ingress"]
    assert ingress["external"] is False
    assert ingress["targetPort"] == DEFAULT_PORT


def test_logs_go_to_a_workspace_with_the_configured_retention_and_the_key_stays_secret(mocker: Any) -> None:
    environment_args = mocker.spy(syphon_host.app, "ManagedEnvironment")
    plan = _render(log_retention_days=90)
    workspace = _one(plan, WORKSPACE)
    assert workspace.inputs["retentionInDays"] == 90
    assert workspace.inputs["sku"] == {"name": "PerGB2018"}
    logs = environment_args.call_args.kwargs["app_logs_configuration"]
    assert logs["destination"] == "log-analytics"
    environment = _one(plan, ENVIRONMENT)
    # The shared key makes the whole block secret: the workspace key never lands in plain state.
    assert environment.inputs["appLogsConfiguration"] in ("[secret]", {"secret": True})
    assert workspace.urn in environment.property_dependencies["appLogsConfiguration"]
    app = _one(plan, CONTAINER_APP)
    assert environment.urn in app.property_dependencies["managedEnvironmentId"]


def test_every_resource_carries_the_stack_tags(plain: Plan) -> None:
    for resource in (_one(plain, t) for t in (WORKSPACE, ENVIRONMENT, IDENTITY, CONTAINER_APP)):
        assert resource.inputs["tags"] == {"team": "messaging"}


def test_outputs_name_the_app_its_fqdn_and_the_identity(mocker: Any) -> None:
    register_outputs = mocker.spy(SyphonHost, "register_outputs")
    plan = _render()
    assert plan.outputs == {
        "appName": "syphon-app",
        "fqdn": "syphon-app.internal.example",
        "principalId": "syphon-identity-principal",
    }
    (call,) = register_outputs.call_args_list
    assert {"appName", "fqdn", "principalId"} <= set(call.args[1])


# --- Scaling on backlog depth (KEDA azure-servicebus) ---------------------------------------------


def test_a_fixed_replica_count_has_no_scale_rule_and_no_manage_right(plain: Plan) -> None:
    scale = _one(plain, CONTAINER_APP).inputs["template"]["scale"]
    assert scale == {"minReplicas": 1, "maxReplicas": 1}
    owner = _role_id("090c5cfd-751d-490a-894a-3ce6f1109419")  # Azure Service Bus Data Owner
    assert all(a.inputs["roleDefinitionId"] != owner for a in plain.of_type(ROLE_ASSIGNMENT))


def test_the_app_scales_on_the_summed_backlog_with_its_own_identity() -> None:
    plan = _render(min_replicas=2, max_replicas=5)
    app = _one(plan, CONTAINER_APP)
    identity = _one(plan, IDENTITY)
    scale = app.inputs["template"]["scale"]
    assert (scale["minReplicas"], scale["maxReplicas"]) == (2, 5)
    (rule,) = scale["rules"]
    assert rule["name"] == "backlog-depth"
    custom = rule["custom"]
    assert custom["type"] == "azure-servicebus"
    # The user-assigned identity's resource id, the one the app itself runs as.
    assert custom["identity"].endswith(f"/providers/Microsoft.ManagedIdentity/userAssignedIdentities/{identity.name}")
    assert app.inputs["identity"]["userAssignedIdentities"] == [custom["identity"]]
    assert custom["metadata"] == {
        "namespace": "contoso-dr",
        # `-` escaped: a literal in Go's RE2 as in Python's re (RE2: any punctuation may be escaped).
        "queueName": "contoso/x\\-servicebus\\-transfer/(0|[1-9][0-9]*)",
        "useRegex": "true",
        "operation": "sum",
        "messageCount": "1000",
        "activationMessageCount": "0",
    }
    assert all(isinstance(v, str) for v in custom["metadata"].values())  # KEDA metadata is strings only


def test_the_scale_rule_regex_matches_exactly_the_backlog_queues() -> None:
    # KEDA keeps a queue when FindString(name) == name (a whole match); Python's fullmatch is the same
    # for this pattern, which uses only literals, a group, alternation and a class.
    import re

    pattern = re.compile(keda_scale_rule_metadata("contoso", "contoso-backlog")["queueName"])
    for name in [
        "contoso/x-servicebus-transfer/0",
        "contoso/x-servicebus-transfer/9",
        "contoso/x-servicebus-transfer/123",
    ]:
        assert pattern.fullmatch(name), name
    for name in [
        "contoso/x-servicebus-transfer/01",
        "contoso/x-servicebus-transfer/",
        "contoso-2/x-servicebus-transfer/0",
        "xcontoso/x-servicebus-transfer/0",
        "contoso/x-servicebus-transfer/0/x",
        "orders",
    ]:
        assert not pattern.fullmatch(name), name


def test_scaling_grants_data_owner_on_the_secondary_only() -> None:
    plan = _render(min_replicas=1, max_replicas=3)
    owner = _role_id("090c5cfd-751d-490a-894a-3ce6f1109419")  # Azure Service Bus Data Owner
    (grant,) = [a for a in plan.of_type(ROLE_ASSIGNMENT) if a.inputs["roleDefinitionId"] == owner]
    assert grant.inputs["scope"] == SECONDARY_ID
    assert grant.inputs["principalType"] == "ServicePrincipal"
    assert grant.urn in _one(plan, CONTAINER_APP).dependencies  # granted before the rule first polls


def test_scaling_without_the_namespace_names_is_refused_when_the_component_is_used_on_its_own() -> None:
    with pytest.raises(ValueError, match=r"primary_namespace_name: expected the namespace's name"):
        _render(names=False, min_replicas=1, max_replicas=2)
