"""Built-in role ids in the deploying subscription, and the deploying principal, read from azure-native's
client config (rendered with the same mocks as `pairedbus plan`)."""

from __future__ import annotations

import pulumi

from pairedbus.iac.components.roles import deploying_principal_id, role_definition_id
from pairedbus.iac.render.mocks import FAKE_OBJECT_ID, FAKE_SUBSCRIPTION_ID
from pairedbus.iac.render.program import render_program

#: Azure Service Bus Data Owner (Microsoft Learn, "Azure built-in roles").
DATA_OWNER = "090c5cfd-751d-490a-894a-3ce6f1109419"


def test_a_role_id_is_the_built_in_role_in_the_deploying_subscription() -> None:
    def build() -> None:
        pulumi.export("role", role_definition_id(DATA_OWNER))
        pulumi.export("principal", deploying_principal_id())

    plan = render_program(build, project="roles", stack="test")
    assert plan.outputs["role"] == (
        f"/subscriptions/{FAKE_SUBSCRIPTION_ID}/providers/Microsoft.Authorization/roleDefinitions/{DATA_OWNER}"
    )
    assert plan.outputs["principal"] == FAKE_OBJECT_ID  # the mocks' getClientConfig objectId
