"""Where the syphon learns which backlog queues exist, and how deep they are.

Listing entities through the Service Bus data plane needs the Manage right (Data Owner), more
than a syphon should hold. So in Azure the syphon lists them through ARM with the built-in Reader
role on the secondary namespace (control plane only: no messages, no keys) and keeps exactly
Data Receiver / Data Sender on the data plane. ARM shows the '/' of a backlog queue's name as '~'.
The data-plane listing remains for setups that hold Manage anyway (and for the fake).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from pairedbus import contract

_NAMESPACE_ID = re.compile(
    r"^/subscriptions/(?P<subscription>[^/]+)/resourceGroups/(?P<group>[^/]+)"
    r"/providers/Microsoft\.ServiceBus/namespaces/(?P<namespace>[^/]+)$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ListedQueue:
    name: str  # as the data plane shows it, with '/'
    active_messages: int
    #: The queue's bytes as the service counts them (0: not reported): over `active_messages`, what
    #: a backlog message weighs before any is received.
    size_in_bytes: int = 0


class BacklogDirectory(Protocol):
    async def list_queues(self) -> list[ListedQueue]: ...

    async def close(self) -> None: ...


class DataPlaneDirectory:
    """Through `ServiceBusAdministrationClient` (needs Manage on the secondary)."""

    def __init__(self, admin: Any) -> None:
        self._admin = admin

    async def list_queues(self) -> list[ListedQueue]:
        return [
            ListedQueue(queue.name, int(queue.active_message_count or 0), int(queue.size_in_bytes or 0))
            async for queue in self._admin.list_queues_runtime_properties()
        ]

    async def close(self) -> None:
        await self._admin.close()


class ArmDirectory:
    """Through ARM (`azure-mgmt-servicebus`), for an identity with Reader on the namespace."""

    def __init__(self, credential: Any, namespace_resource_id: str) -> None:
        match = _NAMESPACE_ID.match(namespace_resource_id)
        if match is None:
            raise ValueError(
                "secondary_resource_id: expected /subscriptions/<id>/resourceGroups/<group>"
                f"/providers/Microsoft.ServiceBus/namespaces/<name>, got {namespace_resource_id!r}"
            )
        from azure.mgmt.servicebus.aio import ServiceBusManagementClient

        self._group = match["group"]
        self._namespace = match["namespace"]
        self._client = ServiceBusManagementClient(credential, match["subscription"])

    async def list_queues(self) -> list[ListedQueue]:
        listed = []
        async for queue in self._client.queues.list_by_namespace(self._group, self._namespace):
            assert queue.name is not None, "ARM lists every queue with its name (the model's field is Optional)"
            counts = queue.count_details
            active = counts.active_message_count if counts is not None else 0
            listed.append(
                ListedQueue(contract.entity_name_from_arm(queue.name), int(active or 0), int(queue.size_in_bytes or 0))
            )
        return listed

    async def close(self) -> None:
        await self._client.close()


def validate_namespace_resource_id(value: str) -> str:
    if _NAMESPACE_ID.match(value) is None:
        raise ValueError(
            "expected /subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.ServiceBus/namespaces/<name>"
        )
    return value
