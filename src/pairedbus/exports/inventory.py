"""`pairedbus inventory export`: a subscription's Service Bus resources as ARM-shaped JSON Lines.

Namespaces, queues, topics and subscriptions come from ARM (azure-mgmt-servicebus); backlog
queues come from the data plane (`ServiceBusAdministrationClient`), because their names contain
`/` and ARM shows them with `~` at best. Each line is one resource: `id`, `name`, `type`,
`location`, `sku`, `properties` with ARM camelCase names. Backlog queues keep their `/` in
`name`; their `id` uses `~`, as ARM ids do.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from enum import Enum
from pathlib import Path
from typing import Any

from pairedbus import contract, durations

ARM_TYPE_QUEUE = "Microsoft.ServiceBus/Namespaces/Queues"
#: QueueProperties attributes beyond the contract's table that the audit reads.
EXTRA_QUEUE_FIELDS = {
    "status": "status",
    "maxMessageSizeInKilobytes": "max_message_size_in_kilobytes",
    "enableExpress": "enable_express",
    "duplicateDetectionHistoryTimeWindow": "duplicate_detection_history_time_window",
    "forwardTo": "forward_to",
    "forwardDeadLetteredMessagesTo": "forward_dead_lettered_messages_to",
}
_RESOURCE_GROUP = re.compile(r"/resourceGroups/([^/]+)/", re.IGNORECASE)

AdministrationClientFactory = Callable[[str, Any], Any]


@dataclass
class InventoryExport:
    path: Path
    namespaces: int = 0
    queues: int = 0
    topics: int = 0
    subscriptions: int = 0
    backlog_queues: int = 0
    #: Namespaces whose data plane could not be listed (their backlog queues come from ARM, if any).
    data_plane_failures: dict[str, str] = field(default_factory=dict)


def resource_group_of(resource_id: str) -> str:
    match = _RESOURCE_GROUP.search(resource_id)
    if match is None:
        raise ValueError(f"not an ARM resource id with a resource group: {resource_id!r}")
    return match[1]


def _json_value(value: Any) -> Any:
    if isinstance(value, timedelta):
        return durations.iso_duration(value)
    if isinstance(value, Enum):
        return value.value
    return value


def backlog_queue_record(namespace_id: str, location: str | None, queue: Any) -> dict[str, Any]:
    """An ARM-shaped record for a data-plane `QueueProperties` (a backlog queue)."""
    fields = {**contract.ARM_TO_SDK_QUEUE_FIELD, **EXTRA_QUEUE_FIELDS}
    properties = {
        arm: _json_value(getattr(queue, sdk)) for arm, sdk in fields.items() if getattr(queue, sdk, None) is not None
    }
    return {
        "id": f"{namespace_id}/queues/{contract.arm_entity_name(queue.name)}",
        "name": queue.name,
        "type": ARM_TYPE_QUEUE,
        "location": location,
        "properties": properties,
    }


def _default_administration_client(fully_qualified_namespace: str, credential: Any) -> Any:
    from azure.servicebus.management import ServiceBusAdministrationClient

    return ServiceBusAdministrationClient(fully_qualified_namespace, credential)


def _fqdn(namespace: Mapping[str, Any]) -> str:
    endpoint: str | None = (namespace.get("properties") or {}).get("serviceBusEndpoint")
    if endpoint:
        return endpoint.split("://", 1)[-1].split(":", 1)[0].rstrip("/")
    return contract.service_bus_fqdn(namespace["name"])


def _is_arm_backlog_name(name: str) -> bool:
    return contract.is_backlog_queue_name(contract.entity_name_from_arm(name))


def export_inventory(
    subscription_id: str,
    out_dir: str | Path,
    *,
    credential: Any = None,
    management_client: Any = None,
    administration_client_factory: AdministrationClientFactory | None = None,
    on_step: Callable[[str], None] | None = None,
) -> InventoryExport:
    """Write `OUT/<subscription id>.jsonl`. The clients are injectable for tests; `on_step` is told
    each namespace as it is read (the command's progress)."""
    if credential is None and (management_client is None or administration_client_factory is None):
        from azure.identity import DefaultAzureCredential

        credential = DefaultAzureCredential()
    if management_client is None:
        from azure.mgmt.servicebus import ServiceBusManagementClient

        management_client = ServiceBusManagementClient(credential, subscription_id)
    factory = administration_client_factory or _default_administration_client

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    result = InventoryExport(path=out / f"{subscription_id}.jsonl")
    with result.path.open("w", encoding="utf-8") as handle:

        def write(records: Iterable[Mapping[str, Any]]) -> int:
            count = 0
            for record in records:
                handle.write(json.dumps(record, sort_keys=True, default=str) + "\n")
                count += 1
            return count

        for namespace in management_client.namespaces.list():
            ns = namespace.as_dict()
            if on_step is not None:
                on_step(ns["name"])
            group = resource_group_of(ns["id"])
            result.namespaces += write([ns])
            arm_backlog: list[dict[str, Any]] = []
            queues: list[dict[str, Any]] = []
            for queue in management_client.queues.list_by_namespace(group, ns["name"]):
                record = queue.as_dict()
                (arm_backlog if _is_arm_backlog_name(record["name"]) else queues).append(record)
            result.queues += write(queues)
            for topic in management_client.topics.list_by_namespace(group, ns["name"]):
                result.topics += write([topic.as_dict()])
                subscriptions = management_client.subscriptions.list_by_topic(group, ns["name"], topic.name)
                result.subscriptions += write(s.as_dict() for s in subscriptions)
            try:
                with factory(_fqdn(ns), credential) as admin:
                    backlog = [
                        backlog_queue_record(ns["id"], ns.get("location"), q)
                        for q in admin.list_queues()
                        if contract.is_backlog_queue_name(q.name)
                    ]
            except Exception as exc:  # no data-plane role, firewall: keep going with what ARM shows
                result.data_plane_failures[ns["name"]] = f"{type(exc).__name__}: {exc}"
                print(
                    f"pairedbus: warning: {ns['name']}: data plane not listed ({type(exc).__name__}); "
                    "backlog queues from ARM only",
                    file=sys.stderr,
                )
                backlog = [{**r, "name": contract.entity_name_from_arm(r["name"])} for r in arm_backlog]
            result.backlog_queues += write(backlog)
    return result
