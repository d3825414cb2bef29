"""The backlog queue as a Pulumi dynamic resource, managed through the Service Bus data plane.

ARM cannot create entity names containing '/', and every backlog queue's name has them
(`contract.backlog_queue_name`), so the queue is created with `ServiceBusAdministrationClient`
from the dynamic-provider host that `pulumi up` starts. Inputs are ARM camelCase names:
`namespaceName` (the secondary), `queueName`, the seven table properties, and `enablePartitioning`
where the namespace requires it.
"""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pulumi
from azure.core.exceptions import ClientAuthenticationError, HttpResponseError, ResourceNotFoundError
from azure.servicebus.management import ServiceBusAdministrationClient
from pulumi.dynamic import (
    CheckFailure,
    CheckResult,
    CreateResult,
    DiffResult,
    ReadResult,
    ResourceProvider,
    UpdateResult,
)

from pairedbus import contract, durations

#: Inputs whose change needs a new queue (what `diff` reports as replaces); with retainOnDelete the
#: old one is kept, not deleted.
REPLACED_ON_CHANGE = ("namespaceName", "queueName", contract.BACKLOG_PARTITIONING_PROPERTY)
#: A role assignment made in the same deployment takes minutes to reach the data plane.
RBAC_PROPAGATION_TIMEOUT = timedelta(minutes=5)
SAS_AUTHORIZATION_RULE = "RootManageSharedAccessKey"


def desired_properties(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The settings the inputs ask for: the table, plus partitioning where given."""
    wanted = {key: inputs[key] for key in contract.BACKLOG_QUEUE_PROPERTIES}
    if contract.BACKLOG_PARTITIONING_PROPERTY in inputs:
        wanted[contract.BACKLOG_PARTITIONING_PROPERTY] = inputs[contract.BACKLOG_PARTITIONING_PROPERTY]
    return wanted


def queue_state(queue: Any) -> dict[str, Any]:
    """A queue's settings as read from the service, in ARM names; durations as ISO 8601 and a
    partitioned queue's size as configured rather than summed over its fragments."""
    live: dict[str, Any] = {}
    for key in (*contract.BACKLOG_QUEUE_PROPERTIES, contract.BACKLOG_PARTITIONING_PROPERTY):
        value = getattr(queue, contract.ARM_TO_SDK_QUEUE_FIELD[key], None)
        if key in contract.DURATION_PROPERTIES and value is not None:
            value = _canonical_duration(key, value)
        live[key] = value
    size = live["maxSizeInMegabytes"]
    if isinstance(size, int):
        live["maxSizeInMegabytes"] = contract.configured_size_mb(
            size,
            partitioned=bool(live[contract.BACKLOG_PARTITIONING_PROPERTY]),
            expected_mb=contract.BACKLOG_QUEUE_PROPERTIES["maxSizeInMegabytes"],  # type: ignore[arg-type]  # the table holds values of many types (dict[str, object]); this one is an int
        )
    return live


def _canonical_duration(key: str, value: str | timedelta) -> str:
    # timedelta cannot hold TimeSpan.MaxValue's last 0.7 us: keep the table's spelling when equal.
    table_value = contract.BACKLOG_QUEUE_PROPERTIES[key]
    if durations.durations_equal(table_value, value):  # type: ignore[arg-type]  # the table's durations are ISO 8601 strings; it is typed dict[str, object]
        return table_value  # type: ignore[return-value]  # as above: an ISO 8601 string
    return durations.iso_duration(value)


def drifted_properties(desired: Mapping[str, Any], actual: Mapping[str, Any]) -> list[str]:
    """Properties of `desired` whose `actual` value differs (durations compared as durations)."""
    return [key for key, want in desired.items() if not contract.backlog_value_matches(key, want, actual.get(key))]


def _sdk_value(key: str, value: Any) -> Any:
    """A table value as azure-servicebus must be given it: durations as timedeltas rounded down.

    An ISO string would be re-parsed by the SDK's serializer and rounded *up* to the microsecond,
    putting TimeSpan.MaxValue 3 ticks above the service maximum on the wire (see
    `pairedbus.durations.wire_duration`); the SDK's own `avoid_timedelta_overflow` skips strings.
    """
    return durations.wire_duration(value) if key in contract.DURATION_PROPERTIES else value


def _sdk_kwargs(properties: Mapping[str, Any]) -> dict[str, Any]:
    return {contract.ARM_TO_SDK_QUEUE_FIELD[key]: _sdk_value(key, value) for key, value in properties.items()}


@dataclass(frozen=True)
class DataPlaneAuth:
    """How the provider signs in to the secondary's data plane.

    `entra` (default): DefaultAzureCredential, which needs Azure Service Bus Data Owner on the
    secondary (granted by the BacklogQueues component). `sas`: the fallback for
    azure-service-bus#344; the provider reads the namespace's SAS connection string from ARM at
    run time, so no key is ever written to config or state. It needs local auth on the secondary.
    """

    mode: str = "entra"
    resource_group_name: str | None = None
    subscription_id: str | None = None

    def admin_client(self, namespace_name: str) -> ServiceBusAdministrationClient:
        from azure.identity import DefaultAzureCredential

        credential = DefaultAzureCredential()
        if self.mode == "entra":
            return ServiceBusAdministrationClient(contract.service_bus_fqdn(namespace_name), credential)
        from azure.mgmt.servicebus import ServiceBusManagementClient

        subscription = (
            self.subscription_id or os.environ.get("AZURE_SUBSCRIPTION_ID") or os.environ.get("ARM_SUBSCRIPTION_ID")
        )
        if not subscription or not self.resource_group_name:
            raise ValueError("backlogAuth 'sas' needs the secondary's resource group and AZURE_SUBSCRIPTION_ID")
        keys = ServiceBusManagementClient(credential, subscription).namespaces.list_keys(
            self.resource_group_name, namespace_name, SAS_AUTHORIZATION_RULE
        )
        connection_string = keys.primary_connection_string
        if connection_string is None:  # the model's field is Optional; a SAS rule always has its keys
            raise ValueError(f"{SAS_AUTHORIZATION_RULE} on {namespace_name} returned no primary connection string")
        return ServiceBusAdministrationClient.from_connection_string(connection_string)


def _retry_while_unauthorized(action: Callable[[], Any], *, timeout: timedelta, sleep: Callable[[float], None]) -> Any:
    """Run `action`, retrying authorization failures until a fresh role assignment propagates."""
    deadline = time.monotonic() + timeout.total_seconds()
    delay = 5.0
    while True:
        try:
            return action()
        except (ClientAuthenticationError, HttpResponseError) as exc:
            status = getattr(exc, "status_code", None)
            unauthorized = isinstance(exc, ClientAuthenticationError) or status in (401, 403)
            if not unauthorized or time.monotonic() + delay > deadline:
                raise
            sleep(delay)
            delay = min(delay * 2, 60.0)


class BacklogQueueProvider(ResourceProvider):
    """CRUD for one backlog queue. Create adopts an existing queue of that name, as the original
    library created only the missing ones; its settings then show up as a diff on the next
    preview, and `pulumi up` restores the table."""

    serialize_as_secret_always = False  # the provider holds no secret

    def __init__(
        self, auth: DataPlaneAuth | None = None, *, rbac_timeout: timedelta = RBAC_PROPAGATION_TIMEOUT
    ) -> None:
        super().__init__()
        self.auth = auth or DataPlaneAuth()
        self.rbac_timeout = rbac_timeout

    def _call(self, namespace_name: str, operation: Callable[[ServiceBusAdministrationClient], Any]) -> Any:
        def attempt() -> Any:
            with self.auth.admin_client(namespace_name) as client:
                return operation(client)

        return _retry_while_unauthorized(attempt, timeout=self.rbac_timeout, sleep=time.sleep)

    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        failures = []
        if contract.parse_backlog_queue_name(str(news.get("queueName", ""))) is None:
            failures.append(CheckFailure("queueName", f"expected {contract.backlog_queue_prefix('<primary>')}<index>"))
        failures += [
            CheckFailure(key, f"expected {key} (a backlog-queue table property)")
            for key in contract.BACKLOG_QUEUE_PROPERTIES
            if key not in news
        ]
        return CheckResult(news, failures)

    def create(self, props: dict[str, Any]) -> CreateResult:
        name = props["queueName"]

        def get_or_create(client: ServiceBusAdministrationClient) -> tuple[Any, bool]:
            try:
                return client.get_queue(name), True
            except ResourceNotFoundError:
                return client.create_queue(name, **_sdk_kwargs(desired_properties(props))), False

        queue, adopted = self._call(props["namespaceName"], get_or_create)
        return CreateResult(name, {**self._outs(props, queue), "adopted": adopted})

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        def get(client: ServiceBusAdministrationClient) -> Any:
            try:
                return client.get_queue(id_)
            except ResourceNotFoundError:
                return None

        queue = self._call(props["namespaceName"], get)
        if queue is None:
            return ReadResult(None, {})
        return ReadResult(id_, {**self._outs(props, queue), "adopted": props.get("adopted", False)})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        replaces = [key for key in REPLACED_ON_CHANGE if key in news and olds.get(key) != news[key]]
        changed = drifted_properties(desired_properties(news), olds)
        return DiffResult(changes=bool(changed or replaces), replaces=replaces, delete_before_replace=True)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        name = news["queueName"]

        def restore(client: ServiceBusAdministrationClient) -> Any:
            queue = client.get_queue(name)
            for key, value in desired_properties(news).items():
                if key != contract.BACKLOG_PARTITIONING_PROPERTY:  # create-only
                    setattr(queue, contract.ARM_TO_SDK_QUEUE_FIELD[key], _sdk_value(key, value))
            client.update_queue(queue)
            return client.get_queue(name)

        queue = self._call(news["namespaceName"], restore)
        return UpdateResult({**self._outs(news, queue), "adopted": _olds.get("adopted", False)})

    def delete(self, id_: str, props: dict[str, Any]) -> None:
        # The component sets retainOnDelete, so the engine only gets here when a user removed
        # that option on purpose; even then a queue that holds parked messages is kept.
        def delete_if_empty(client: ServiceBusAdministrationClient) -> None:
            try:
                count = client.get_queue_runtime_properties(id_).total_message_count
            except ResourceNotFoundError:
                return
            if count:
                raise RuntimeError(f"backlog queue {id_!r} holds {count} parked messages; not deleting it")
            client.delete_queue(id_)

        self._call(props["namespaceName"], delete_if_empty)

    @staticmethod
    def _outs(props: Mapping[str, Any], queue: Any) -> dict[str, Any]:
        return {"namespaceName": props["namespaceName"], "queueName": props["queueName"], **queue_state(queue)}


#: pickle's pure-Python `_batch_setitems`, as it was before any dynamic resource was serialized.
_BATCH_SETITEMS = pickle._Pickler._batch_setitems  # type: ignore[attr-defined]  # pickle's pure-Python pickler is private: typeshed leaves it out


def _unwrap_pulumi_pickler() -> None:
    """Undo what `pulumi.dynamic.serialize_provider` leaves behind.

    To sort dicts it replaces `pickle._Pickler._batch_setitems` with a wrapper of the current one
    and restores only `pickle.Pickler`, so every dynamic resource adds one wrapper to the chain.
    Each dict pickled then recurses through all of them: a few hundred backlog queues in one program
    run hit Python's recursion limit (RecursionError in serialize_provider, pulumi/pulumi#17803).
    """
    pickle._Pickler._batch_setitems = _BATCH_SETITEMS  # type: ignore[attr-defined]  # as above: private to pickle, absent from typeshed


class BacklogQueue(pulumi.dynamic.Resource, module=contract.PACKAGE, name="BacklogQueue"):
    """One backlog queue; its type token is `contract.TYPE_BACKLOG_QUEUE`."""

    def __init__(
        self,
        name: str,
        props: Mapping[str, pulumi.Input[Any]],
        provider: BacklogQueueProvider,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        try:
            super().__init__(provider, name, dict(props), opts)  # serializes the provider, synchronously
        finally:
            _unwrap_pulumi_pickler()
