"""A plan as a readable table: type, name and the settings a reviewer looks at."""

from __future__ import annotations

from collections.abc import Iterable

from pairedbus.iac.plan.model import Plan, PlannedResource

_KEY_SETTINGS = (
    "sku",
    "location",
    "premiumMessagingPartitions",
    "zoneRedundant",
    "disableLocalAuth",
    "minimumTlsVersion",
    "enablePartitioning",
    "maxSizeInMegabytes",
    "requiresSession",
    "requiresDuplicateDetection",
    "maxDeliveryCount",
    "lockDuration",
    "defaultMessageTimeToLive",
    "autoDeleteOnIdle",
    "forwardTo",
    "scope",
)


def _short(value: object) -> str:
    if isinstance(value, dict):
        return str(value.get("name", value))
    text = str(value)
    return text if len(text) <= 40 else "…" + text[-39:]


def key_settings(resource: PlannedResource) -> str:
    inputs = resource.inputs
    parts = [f"{k}={_short(inputs[k])}" for k in _KEY_SETTINGS if inputs.get(k) is not None]
    flags = [flag for flag, on in (("protect", resource.protect), ("retainOnDelete", resource.retain_on_delete)) if on]
    return " ".join(parts + flags)


#: The input that holds the name Azure shows, by the last segment of the resource type.
_NAME_INPUT = {
    "Queue": "queueName",
    "BacklogQueue": "queueName",
    "Topic": "topicName",
    "Subscription": "subscriptionName",
    "Namespace": "namespaceName",
    "ResourceGroup": "resourceGroupName",
}


def display_name(resource: PlannedResource) -> str:
    """The name as Azure shows it where the type has one, else the logical name."""
    key = _NAME_INPUT.get(resource.type.rsplit(":", 1)[-1])
    value = resource.inputs.get(key) if key else None
    return value if isinstance(value, str) else resource.name


def format_plan(plan: Plan) -> Iterable[str]:
    rows = [(r.type, display_name(r), key_settings(r)) for r in plan.resources if r.custom]
    width_type = max((len(t) for t, _, _ in rows), default=4)
    width_name = min(max((len(n) for _, n, _ in rows), default=4), 48)
    yield f"Offline render of stack '{plan.stack}' (Pulumi mocks; NOT a cloud preview: nothing was compared with Azure)"
    yield f"{'TYPE'.ljust(width_type)}  {'NAME'.ljust(width_name)}  KEY SETTINGS"
    for type_, name, settings in rows:
        yield f"{type_.ljust(width_type)}  {name.ljust(width_name)}  {settings}"
    components = sum(1 for r in plan.resources if not r.custom)
    yield f"{len(rows)} resources in {components} components."
