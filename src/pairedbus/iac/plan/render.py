"""Render a Pulumi program offline with Pulumi's own mock runtime: no CLI, no cloud.

The program runs exactly as `pulumi up` would run it, but every resource registration is answered
by `PlanMocks` and recorded, with its parent, dependencies and options, as a `PlannedResource`.
This is an offline render of what the program declares, not a cloud preview: it knows nothing of
the resources that already exist.
"""

from __future__ import annotations

import asyncio
import gc
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pulumi
import pulumi.resource as pulumi_resource
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc, settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from pairedbus import contract
from pairedbus.iac.plan.model import Plan, PlannedResource

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


class PlanMocks(pulumi.runtime.Mocks):
    """Answers registrations with the outputs the real providers would compute."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        inputs = dict(args.inputs)
        rg = inputs.get("resourceGroupName", "rg")
        name = next((inputs[k] for k in _NAME_INPUTS if isinstance(inputs.get(k), str)), args.name)
        if args.typ == "azure-native:resources:ResourceGroup":
            name = inputs.get("resourceGroupName", args.name)
            resource_id = f"/subscriptions/{FAKE_SUBSCRIPTION_ID}/resourceGroups/{name}"
        elif args.typ in _ARM_PROVIDERS:
            resource_id = (
                f"/subscriptions/{FAKE_SUBSCRIPTION_ID}/resourceGroups/{rg}/providers/{_ARM_PROVIDERS[args.typ]}/{name}"
            )
        elif args.typ == contract.TYPE_BACKLOG_QUEUE:
            resource_id = inputs.get("queueName", args.name)
        else:
            resource_id = f"{args.name}-id"
        state = {**inputs, "id": resource_id, "name": name}
        identity = inputs.get("identity")
        if isinstance(identity, Mapping) and isinstance(identity.get("userAssignedIdentities"), list):
            # ARM takes a list of identity ids and returns a map of id -> principal and client ids.
            state["identity"] = {
                **identity,
                "userAssignedIdentities": {
                    uid: {"principalId": f"{uid}-principal", "clientId": f"{uid}-client"}
                    for uid in identity["userAssignedIdentities"]
                },
            }
        if args.typ == contract.TYPE_NAMESPACE:
            state["serviceBusEndpoint"] = f"https://{contract.service_bus_fqdn(name)}:443/"
            state["identity"] = {**(state.get("identity") or {}), "principalId": f"{name}-principal"}
        elif args.typ == "azure-native:managedidentity:UserAssignedIdentity":
            state.update(principalId=f"{args.name}-principal", clientId=f"{args.name}-client")
        elif args.typ == "azure-native:app:ContainerApp":
            state["latestRevisionFqdn"] = f"{name}.internal.example"
        return resource_id, state

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
        if args.token == "azure-native:authorization:getClientConfig":
            return {
                "subscriptionId": FAKE_SUBSCRIPTION_ID,
                "tenantId": FAKE_TENANT_ID,
                "objectId": FAKE_OBJECT_ID,
                "clientId": FAKE_CLIENT_ID,
            }
        return {}


class _RecordingMocks(pulumi.runtime.Mocks):
    """Wraps the mocks to see each registration's deserialized inputs (the monitor already
    decoded them) next to the request that carried them."""

    def __init__(self, inner: pulumi.runtime.Mocks) -> None:
        self.inner = inner
        self.request = threading.local()
        self.planned: list[PlannedResource] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        resource_id, state = self.inner.new_resource(args)
        request = getattr(self.request, "current", None)
        if request is not None:
            self.planned.append(
                PlannedResource(
                    urn=self.request.urn,
                    type=request.type,
                    name=request.name,
                    inputs=_plain(args.inputs),
                    custom=bool(request.custom),
                    parent=request.parent or None,
                    # The SDK gathers dependencies in a set: their order depends on timing, not on the program.
                    dependencies=tuple(sorted(request.dependencies)),
                    property_dependencies={
                        k: tuple(sorted(v.urns)) for k, v in request.propertyDependencies.items() if k != "__provider"
                    },
                    protect=bool(request.protect),
                    aliases=len(request.aliases),
                    retain_on_delete=bool(request.retainOnDelete),
                    provider=request.provider or None,
                )
            )
        return resource_id, state

    def call(self, args: pulumi.runtime.MockCallArgs) -> Any:
        return self.inner.call(args)


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """A MockMonitor that also keeps what the engine would see of each registration."""

    def __init__(self, mocks: pulumi.runtime.Mocks) -> None:
        self.recorder = _RecordingMocks(mocks)
        super().__init__(self.recorder)

    @property
    def planned(self) -> list[PlannedResource]:
        return self.recorder.planned

    def RegisterResource(self, request: Any) -> Any:
        # Registrations run on executor threads: the request travels to new_resource per thread.
        self.recorder.request.current = request
        self.recorder.request.urn = self.make_urn(request.parent, request.type, request.name)
        try:
            return super().RegisterResource(request)
        finally:
            self.recorder.request.current = None


def _plain(value: Any) -> Any:
    """Unknowns become None and secrets are masked, so the plan is plain JSON."""
    if isinstance(value, Mapping):
        if value.get(rpc._special_sig_key) == rpc._special_secret_sig:
            return "[secret]"
        return {k: _plain(v) for k, v in value.items() if k != "__provider"}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is rpc.UNKNOWN or value == rpc.UNKNOWN:
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)  # the wire carries every number as a double
    return value


def render(
    program: Callable[[], None],
    *,
    project: str,
    stack: str,
    config: Mapping[str, str] | None = None,
    secret_keys: list[str] | None = None,
) -> Plan:
    """Run `program` under Pulumi's mock runtime with the given raw config and return the plan.

    `config` maps full keys (`pairedbus:primary`) to the strings the CLI would pass. Exceptions
    the program raises propagate after the runtime has shut down cleanly.
    """
    monitor = RecordingMonitor(PlanMocks())
    with _without_dead_work():
        return _render(program, monitor, project=project, stack=stack, config=config, secret_keys=secret_keys)


@contextmanager
def _without_dead_work() -> Iterator[None]:
    """Skip work a render does not need; what is registered stays exactly the same.

    - Pulumi's `Resource.__init__` turns every alias into a URN up front, only so that children
      could inherit them on engines without alias specs. Ours (like the engine) takes alias specs,
      so those URNs are never read — and azure-native gives each resource about 14 versioned
      aliases, which made this ~80 % of the render time. The aliases themselves still reach the
      monitor as specs (see `PlannedResource.aliases`).
    - The cyclic GC rescans the ever larger heap of futures a big program creates, and the huge
      azure-native module graph on every full pass; the render pauses it and leaves the heap it
      started with out of later passes (gc.freeze), so the cost per resource stays flat.
    """
    original = pulumi_resource.collapse_alias_to_urn
    pulumi_resource.collapse_alias_to_urn = lambda alias, _name, _type, _parent: alias
    gc_was_enabled = gc.isenabled()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        pulumi_resource.collapse_alias_to_urn = original
        gc.unfreeze()
        if gc_was_enabled:
            gc.enable()


def _render(
    program: Callable[[], None],
    monitor: RecordingMonitor,
    *,
    project: str,
    stack: str,
    config: Mapping[str, str] | None,
    secret_keys: list[str] | None,
) -> Plan:
    # A loop of its own: the runtime must not inherit one that earlier code closed or still runs.
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    settings.reset_options(project=project, stack=stack)
    pulumi.runtime.set_all_config(dict(config or {}), secret_keys or [])
    pulumi.runtime.set_mocks(monitor.recorder, project=project, stack=stack, preview=False, monitor=monitor)
    try:
        _sync_await(run_pulumi_func(program))
        root = settings.get_root_resource()
        outputs = _resolve_outputs(getattr(root, "outputs", {}) or {})
    finally:
        settings.reset_options()
        asyncio.set_event_loop(None)
        loop.close()
    # Registrations complete in any order; sort so that plans of the same program compare equal.
    resources = sorted(monitor.planned, key=lambda r: _natural_key(r.urn))
    return Plan(project=project, stack=stack, resources=tuple(resources), outputs=outputs)


def _natural_key(text: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _resolve_outputs(outputs: Mapping[str, Any]) -> dict[str, Any]:
    resolved: dict[str, Any] = {}
    for key, value in outputs.items():
        output = pulumi.Output.from_input(value)
        known = _sync_await(output.is_known())
        resolved[key] = _plain(_sync_await(output.future())) if known else None
    return resolved
