"""`PlanMocks`: Pulumi mocks that answer a registration as the Azure providers would.

Pulumi's textbook mocks echo the inputs back as outputs. That is not what azure-native returns, and a
program using `PairedNamespace` fails on it: a Container App takes `identity.userAssignedIdentities` as
a list of identity ids and returns a map of id -> principal and client ids; other resources read ARM
ids, principal ids and the namespace's endpoint, which no input holds. `PlanMocks` computes them:

- `id`: the ARM id (`/subscriptions/<fake>/resourceGroups/<group>/providers/<provider>/<name>`) for
  resource groups, namespaces, workspaces, Container Apps environments and apps, and managed identities;
  `<name>-id` for the rest;
- `name`: the resource's ARM name input (`namespaceName`, `queueName`, ...), else its Pulumi name;
- a namespace's `serviceBusEndpoint` and system identity's `principalId`, an identity's `principalId` and
  `clientId`, a Container App's `latestRevisionFqdn` and its identity map;
- `azure-native:authorization:getClientConfig`: fixed fake subscription, tenant and object ids.

With `preview=True` it answers as the engine does in a preview of new resources: no id, and only the
inputs back (every computed output unknown), so a program's `apply`s on upstream outputs do not run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pulumi
from pulumi.output import Unknown
from pulumi.runtime import rpc

from pairedbus import contract
from pairedbus.sdk import is_pulumi_secret

FAKE_SUBSCRIPTION_ID = "00000000-0000-0000-0000-000000000000"
FAKE_TENANT_ID = "11111111-1111-1111-1111-111111111111"
FAKE_OBJECT_ID = "22222222-2222-2222-2222-222222222222"
FAKE_CLIENT_ID = "33333333-3333-3333-3333-333333333333"

# ARM resource-type path segments for the mock ids of the types whose ids other resources use.
_ARM_PROVIDERS = {
    contract.TYPE_NAMESPACE: "Microsoft.ServiceBus/namespaces",
    "azure-native:operationalinsights:Workspace": "Microsoft.OperationalInsights/workspaces",
    "azure-native:app:ManagedEnvironment": "Microsoft.App/managedEnvironments",
    "azure-native:app:ContainerApp": "Microsoft.App/containerApps",
    "azure-native:managedidentity:UserAssignedIdentity": "Microsoft.ManagedIdentity/userAssignedIdentities",
}
_NAME_INPUTS = (
    "queueName",
    "topicName",
    "subscriptionName",
    "namespaceName",
    "workspaceName",
    "environmentName",
    "containerAppName",
    "resourceName",
)


def _unknowns_as_sent(value: Any) -> Any:
    """A preview's unknown inputs (`Unknown()` once deserialized) back to the wire's unknown marker."""
    if isinstance(value, Unknown):
        return rpc.UNKNOWN
    if isinstance(value, Mapping):
        return {k: _unknowns_as_sent(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_unknowns_as_sent(v) for v in value]
    return value


def _revealed(value: Any) -> Any:
    """Inputs as a provider receives them: every secret unwrapped to its value."""
    if isinstance(value, Mapping):
        if is_pulumi_secret(value):
            return _revealed(value.get("value"))
        return {k: _revealed(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_revealed(v) for v in value]
    return value


def _identity_map(inputs: Mapping[str, Any], value: Callable[[str, str], Any]) -> dict[str, Any]:
    """ARM takes a list of user-assigned identity ids and returns a map of id -> principal and client
    ids (`value(id, "principal" | "client")`); nothing when the inputs hold no such list."""
    identity = inputs.get("identity")
    if not (isinstance(identity, Mapping) and isinstance(identity.get("userAssignedIdentities"), list)):
        return {}
    assigned = {
        uid: {"principalId": value(uid, "principal"), "clientId": value(uid, "client")}
        for uid in identity["userAssignedIdentities"]
    }
    return {"identity": {**identity, "userAssignedIdentities": assigned}}


class PlanMocks(pulumi.runtime.Mocks):
    """Answers registrations with the outputs the real providers would compute (see the module doc).

    `preview=True`: answer as a preview of new resources does, with unknown ids and computed outputs;
    pass the same flag to `pulumi.runtime.set_mocks(..., preview=True)`."""

    def __init__(self, *, preview: bool = False) -> None:
        self.preview = preview

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        # The inputs as sent: a secret one stays wrapped and is echoed back so (the engine keeps an output
        # secret when the input of its name was). What the provider computes from them (id, name, endpoint)
        # comes from their values and is plain, as the engine leaves it.
        inputs = dict(args.inputs)
        if self.preview:
            echoed = _unknowns_as_sent(inputs)
            return "", {**echoed, **_identity_map(echoed, lambda uid, _: rpc.UNKNOWN)}
        plain = _revealed(inputs)
        rg = plain.get("resourceGroupName", "rg")
        name = next((plain[k] for k in _NAME_INPUTS if isinstance(plain.get(k), str)), args.name)
        if args.typ == "azure-native:resources:ResourceGroup":
            name = plain.get("resourceGroupName", args.name)
            resource_id = f"/subscriptions/{FAKE_SUBSCRIPTION_ID}/resourceGroups/{name}"
        elif args.typ in _ARM_PROVIDERS:
            resource_id = (
                f"/subscriptions/{FAKE_SUBSCRIPTION_ID}/resourceGroups/{rg}/providers/{_ARM_PROVIDERS[args.typ]}/{name}"
            )
        elif args.typ == contract.TYPE_BACKLOG_QUEUE:
            resource_id = plain.get("queueName", args.name)
        else:
            resource_id = f"{args.name}-id"
        state = {**inputs, "id": resource_id, "name": name, **_identity_map(plain, lambda uid, kind: f"{uid}-{kind}")}
        if args.typ == contract.TYPE_NAMESPACE:
            state["serviceBusEndpoint"] = f"https://{contract.service_bus_fqdn(name)}:443/"
            state["identity"] = {**(state.get("identity") or {}), "principalId": f"{name}-principal"}
        elif args.typ == "azure-native:managedidentity:UserAssignedIdentity":
            state.update(principalId=f"{args.name}-principal", clientId=f"{args.name}-client")
        elif args.typ == "azure-native:app:ContainerApp":
            state["latestRevisionFqdn"] = f"{name}.internal.example"
        return resource_id, state

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:  # type: ignore[override]  # Pulumi's runtime takes a bare dict of outputs too (mocks.py: isinstance(tup, dict))
        if args.token == "azure-native:authorization:getClientConfig":
            return {
                "subscriptionId": FAKE_SUBSCRIPTION_ID,
                "tenantId": FAKE_TENANT_ID,
                "objectId": FAKE_OBJECT_ID,
                "clientId": FAKE_CLIENT_ID,
            }
        return {}
