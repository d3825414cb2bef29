"""Azure RBAC helpers shared by the components."""

from __future__ import annotations

import pulumi
from pulumi_azure_native import authorization


def role_definition_id(role_guid: str) -> pulumi.Output[str]:
    """The full id of a built-in role in the deploying subscription."""
    client = authorization.get_client_config_output()
    return client.subscription_id.apply(
        lambda sub: f"/subscriptions/{sub}/providers/Microsoft.Authorization/roleDefinitions/{role_guid}"
    )


def deploying_principal_id() -> pulumi.Output[str]:
    """The object id of the identity running `pulumi up` (a user, or CI's service principal)."""
    return authorization.get_client_config_output().object_id
