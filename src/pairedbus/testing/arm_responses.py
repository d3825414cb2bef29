"""What the fake's ARM plane answers: ARM's JSON bodies for namespaces, queues, topics and
subscriptions, and ARM's error bodies (moto's `responses.py`; routing is arm_routes.py).

Property names come from the generated models (`sdk.rest_names`), not from a list here, so a
body deserializes into `azure-mgmt-servicebus`'s own models. Namespaces carry
`subscription_id`, `resource_group` and `location`; ones created through the data plane get
`DEFAULT_SUBSCRIPTION_ID`, `DEFAULT_RESOURCE_GROUP` and `DEFAULT_LOCATION`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import Any

from azure.mgmt.servicebus import models

from pairedbus import contract, durations, sdk
from pairedbus.servicebus.entities import Entity, Queue, ReceivableEntity, Subscription, Topic
from pairedbus.servicebus.world import Namespace

DEFAULT_SUBSCRIPTION_ID = "00000000-0000-0000-0000-000000000000"
DEFAULT_RESOURCE_GROUP = "pairedbus-fake"
DEFAULT_LOCATION = "westeurope"
PROVIDER = "Microsoft.ServiceBus"
TYPES = {
    "namespace": "Microsoft.ServiceBus/Namespaces",
    "queue": "Microsoft.ServiceBus/Namespaces/Queues",
    "topic": "Microsoft.ServiceBus/Namespaces/Topics",
    "subscription": "Microsoft.ServiceBus/Namespaces/Topics/Subscriptions",
}
#: The generated model whose `properties` an entity's body carries, by kind.
PROPERTY_MODELS: dict[str, type] = {
    "queue": models.SBQueueProperties,
    "topic": models.SBTopicProperties,
    "subscription": models.SBSubscriptionProperties,
}


# --- errors ---------------------------------------------------------------------------------


class ArmError(Exception):
    """An ARM error answer: its HTTP status and its body's code and message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def error_body(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def not_served(what: str) -> ArmError:
    return ArmError(404, "InvalidResourceType", what)


def not_allowed(method: str, what: str) -> ArmError:
    return ArmError(405, "MethodNotAllowed", f"{method} is not allowed on a {what}.")


def entity_not_found(arm_name: str) -> ArmError:
    return ArmError(404, "NotFound", f"The requested resource {arm_name} does not exist.")


def namespace_not_found(name: str, resource_group: str) -> ArmError:
    return ArmError(
        404,
        "ResourceNotFound",
        f"The Resource '{PROVIDER}/namespaces/{name}' under resource group '{resource_group}' was not found. "
        "For more details please go to https://aka.ms/ARMResourceNotFoundFix",
    )


def conflict(arm_name: str) -> ArmError:
    return ArmError(409, "Conflict", f"An entity named {arm_name!r} of another type already exists.")


# --- bodies ---------------------------------------------------------------------------------


def page(items: list[dict[str, Any]], query: dict[str, str]) -> dict[str, Any]:
    skip = int(query.get("$skip", 0) or 0)
    top = query.get("$top")
    chosen = items[skip:] if top is None else items[skip : skip + int(top)]
    return {"value": chosen}


def arm_identity(ns: Namespace) -> tuple[str, str, str]:
    """(subscription id, resource group, location) of a namespace."""
    return (
        ns.subscription_id or DEFAULT_SUBSCRIPTION_ID,
        ns.resource_group or DEFAULT_RESOURCE_GROUP,
        ns.location or DEFAULT_LOCATION,
    )


def namespace_id(ns: Namespace) -> str:
    sub, rg, _ = arm_identity(ns)
    return f"/subscriptions/{sub}/resourceGroups/{rg}/providers/{PROVIDER}/namespaces/{ns.name}"


def namespace_body(ns: Namespace) -> dict[str, Any]:
    subscription_id, _, location = arm_identity(ns)
    properties: dict[str, Any] = {
        "provisioningState": "Succeeded",
        "status": "Active",
        "serviceBusEndpoint": f"https://{ns.fqdn}:443/",
        "metricId": f"{subscription_id}:{ns.name}",
    }
    if ns.sku == contract.SKU_PREMIUM:
        properties["premiumMessagingPartitions"] = ns.messaging_partitions
    return {
        "id": namespace_id(ns),
        "name": ns.name,
        "type": TYPES["namespace"],
        "location": location,
        "sku": {"name": ns.sku, "tier": ns.sku},
        "properties": properties,
    }


def keys_body(ns: Namespace, rule: str) -> dict[str, Any]:
    """listKeys of a namespace authorization rule (fake keys that name the namespace and rule)."""
    key = f"fake-{ns.name}-{rule}-key"
    conn = f"Endpoint=sb://{ns.fqdn}/;SharedAccessKeyName={rule};SharedAccessKey={key}"
    return {
        "keyName": rule,
        "primaryKey": key,
        "secondaryKey": key + "-2",
        "primaryConnectionString": conn,
        "secondaryConnectionString": conn + "-2",
    }


def entity_body(ns: Namespace, entity: Queue | Topic | Subscription) -> dict[str, Any]:
    if isinstance(entity, Queue):
        return queue_body(ns, entity)
    if isinstance(entity, Topic):
        return topic_body(ns, entity)
    return subscription_body(ns, entity)


def queue_body(ns: Namespace, queue: Queue) -> dict[str, Any]:
    properties = _properties(ns, queue, "queue")
    _add_message_counts(properties, queue)
    properties["sizeInBytes"] = queue.size_in_bytes
    name = contract.arm_entity_name(queue.name)
    return _resource(ns, "queue", f"{namespace_id(ns)}/queues/{name}", name, properties)


def topic_body(ns: Namespace, topic: Topic) -> dict[str, Any]:
    properties = _properties(ns, topic, "topic")
    properties["subscriptionCount"] = len(topic.subscriptions)
    properties["sizeInBytes"] = topic.size_in_bytes
    properties["countDetails"] = _count_details(0, 0, 0)
    name = contract.arm_entity_name(topic.name)
    return _resource(ns, "topic", f"{namespace_id(ns)}/topics/{name}", name, properties)


def subscription_body(ns: Namespace, sub: Subscription) -> dict[str, Any]:
    properties = _properties(ns, sub, "subscription")
    _add_message_counts(properties, sub)
    topic = contract.arm_entity_name(sub.topic.name)
    return _resource(
        ns, "subscription", f"{namespace_id(ns)}/topics/{topic}/subscriptions/{sub.name}", sub.name, properties
    )


def _resource(ns: Namespace, kind: str, resource_id: str, name: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": resource_id,
        "name": name,
        "type": TYPES[kind],
        "location": arm_identity(ns)[2],
        "properties": properties,
    }


def _properties(ns: Namespace, entity: Entity, kind: str) -> dict[str, Any]:
    """The entity's settings under ARM's names, its status and its timestamps."""
    names = sdk.rest_names(PROPERTY_MODELS[kind])
    values = dict(entity.settings.values)
    if kind != "subscription":
        values["max_size_in_megabytes"] = ns.reported_size_in_megabytes(entity)
    properties = {names[k]: _json_value(v) for k, v in values.items() if k in names and v is not None and k != "status"}
    properties["status"] = _json_value(values.get("status", "Active"))
    properties["createdAt"] = _iso(entity.created_at)
    properties["updatedAt"] = _iso(entity.updated_at)
    properties["accessedAt"] = _iso(entity.accessed_at)
    return properties


def _add_message_counts(properties: dict[str, Any], entity: ReceivableEntity) -> None:
    counts = entity.message_counts()
    properties["countDetails"] = _count_details(counts["active"], counts["dead_letter"], counts["scheduled"])
    properties["messageCount"] = counts["active"] + counts["dead_letter"] + counts["scheduled"]


def _count_details(active: int, dead: int, scheduled: int) -> dict[str, int]:
    return {
        "activeMessageCount": active,
        "deadLetterMessageCount": dead,
        "scheduledMessageCount": scheduled,
        "transferMessageCount": 0,
        "transferDeadLetterMessageCount": 0,
    }


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat().replace("+00:00", "Z")


def _json_value(value: Any) -> Any:
    if isinstance(value, timedelta):
        return durations.iso_duration(value)
    if isinstance(value, Enum):
        return value.value
    return value
