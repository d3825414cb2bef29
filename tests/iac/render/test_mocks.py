"""PlanMocks answer as the Azure providers do where echoing the inputs back would not (issue 19, item 7)."""

from __future__ import annotations

from pulumi.output import Unknown
from pulumi.runtime import MockResourceArgs, rpc

from pairedbus.iac.testing import FAKE_SUBSCRIPTION_ID, PlanMocks

IDENTITY = f"/subscriptions/{FAKE_SUBSCRIPTION_ID}/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id1"


def _app(**inputs: object) -> MockResourceArgs:
    return MockResourceArgs(
        typ="azure-native:app:ContainerApp",
        name="syphon-app",
        inputs={"containerAppName": "syphon", "resourceGroupName": "rg", **inputs},
    )


def test_a_container_apps_identity_list_comes_back_as_a_map_of_principals() -> None:
    resource_id, state = PlanMocks().new_resource(
        _app(identity={"type": "UserAssigned", "userAssignedIdentities": [IDENTITY]})
    )
    assert (
        resource_id
        == f"/subscriptions/{FAKE_SUBSCRIPTION_ID}/resourceGroups/rg/providers/Microsoft.App/containerApps/syphon"
    )
    assert state["identity"]["userAssignedIdentities"] == {
        IDENTITY: {"principalId": f"{IDENTITY}-principal", "clientId": f"{IDENTITY}-client"}
    }
    assert state["latestRevisionFqdn"] == "syphon.internal.example"


def test_a_namespace_gets_its_endpoint_and_principal() -> None:
    _, state = PlanMocks().new_resource(
        MockResourceArgs(
            typ="azure-native:servicebus:Namespace",
            name="primary",
            inputs={"namespaceName": "orders-weu", "resourceGroupName": "rg"},
        )
    )
    assert state["serviceBusEndpoint"] == "https://orders-weu.servicebus.windows.net:443/"
    assert state["identity"]["principalId"] == "orders-weu-principal"


def test_in_preview_ids_and_computed_outputs_are_unknown_but_the_identity_is_still_a_map() -> None:
    resource_id, state = PlanMocks(preview=True).new_resource(
        _app(identity={"type": "UserAssigned", "userAssignedIdentities": [IDENTITY]}, environmentId=Unknown())
    )
    assert resource_id == ""
    assert "latestRevisionFqdn" not in state and "id" not in state
    assert state["environmentId"] == rpc.UNKNOWN  # an unknown input goes back as the wire's unknown
    assert state["identity"]["userAssignedIdentities"] == {
        IDENTITY: {"principalId": rpc.UNKNOWN, "clientId": rpc.UNKNOWN}
    }
