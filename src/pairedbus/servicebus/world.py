"""The fake's world: namespaces keyed by fully qualified name, faults, latency and the clock."""

from __future__ import annotations

import asyncio
import random
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pairedbus import contract
from pairedbus.servicebus.clock import Clock
from pairedbus.servicebus.content import Record
from pairedbus.servicebus.entities import Entity, Queue, ReceivableEntity, SendableEntity, Subscription, Topic
from pairedbus.servicebus.errors import (
    DEFAULT_FAULT,
    ErrorKind,
    entity_not_found,
    injected,
    namespace_not_found,
    quota_exceeded,
    reply_lost,
)
from pairedbus.servicebus.faults import Fault
from pairedbus.servicebus.link import Link
from pairedbus.servicebus.properties import (
    EntitySettings,
    EntityType,
    reject_size_not_offered,
    validate_entity_name,
)


def normalize_fqdn(value: str) -> str:
    """`sb://Contoso.servicebus.windows.net:443/` -> `contoso.servicebus.windows.net`."""
    host = value.strip()
    if "://" in host:
        host = host.split("://", 1)[1]
    host = host.split("/", 1)[0].split(":", 1)[0]
    return host.lower()


@dataclass
class Namespace:
    """One Service Bus namespace: queues and topics share one path space, as in the service."""

    world: ServiceBusWorld
    fqdn: str
    sku: str = contract.SKU_STANDARD
    entities: dict[str, SendableEntity] = field(default_factory=dict)
    #: Premium messaging partitions (1, 2 or 4); with 2 or more every entity is partitioned.
    messaging_partitions: int = 1
    #: Round trip for this namespace's data-plane operations; None: `world.latency`.
    latency: float | None = None
    #: Where ARM places the namespace (the ARM plane, arm.py); None: arm.DEFAULT_* values.
    subscription_id: str | None = None
    resource_group: str | None = None
    location: str | None = None

    @property
    def name(self) -> str:
        return contract.namespace_from_fqdn(self.fqdn)

    @property
    def max_message_size_in_bytes(self) -> int:
        return contract.MAX_MESSAGE_SIZE_BYTES if self.sku == contract.SKU_STANDARD else 1024 * 1024

    # --- entities ---------------------------------------------------------------------------

    def create_queue(self, name: str, **properties: Any) -> Queue:
        validate_entity_name(name, EntityType.QUEUE)
        self._ensure_free(name)
        settings = EntitySettings(EntityType.QUEUE, self._tier_rules(properties))
        queue = Queue(self, name, settings)
        self.entities[name] = queue
        return queue

    def create_topic(self, name: str, **properties: Any) -> Topic:
        validate_entity_name(name, EntityType.TOPIC)
        self._ensure_free(name)
        topic = Topic(self, name, EntitySettings(EntityType.TOPIC, self._tier_rules(properties)))
        self.entities[name] = topic
        return topic

    def _tier_rules(self, properties: dict[str, Any]) -> dict[str, Any]:
        """Sizes and partitioning as the tier allows (partitioning.md)."""
        properties = dict(properties)
        size = properties.get("max_size_in_megabytes")
        if size is not None:
            reject_size_not_offered(self.sku, size)
        if (
            self.sku == contract.SKU_PREMIUM
            and self.messaging_partitions >= contract.MIN_PREMIUM_PARTITIONS_FOR_ENTITIES
        ):
            properties["enable_partitioning"] = True  # cannot be turned off there
        if properties.get("enable_partitioning") and self.sku == contract.SKU_STANDARD:
            partitioned = sum(1 for e in self.entities.values() if e.settings.values.get("enable_partitioning"))
            if partitioned >= contract.MAX_PARTITIONED_ENTITIES_PER_STANDARD_NAMESPACE:
                raise quota_exceeded(
                    f"{self.fqdn} already has {contract.MAX_PARTITIONED_ENTITIES_PER_STANDARD_NAMESPACE} "
                    "partitioned queues or topics."
                )
        return properties

    def reported_size_in_megabytes(self, entity: Entity) -> int:
        """What a Get reports: a partitioned entity's size summed over its partitions."""
        size: int = entity.settings.values["max_size_in_megabytes"]
        if entity.settings.values.get("enable_partitioning"):
            size *= contract.PARTITIONS_PER_ENTITY[self.sku]
        return size

    def sized_update(self, entity: Entity, values: dict[str, Any]) -> dict[str, Any]:
        """An update's values, sized as the tier allows: carrying back the reported
        (partition-summed) size keeps the configured one; another size must be one the tier offers."""
        size = values.get("max_size_in_megabytes")
        if size is not None:
            if size == self.reported_size_in_megabytes(entity):
                values["max_size_in_megabytes"] = entity.settings.values["max_size_in_megabytes"]
            else:
                reject_size_not_offered(self.sku, size)
        return values

    def create_subscription(self, topic_name: str, name: str, **properties: Any) -> Subscription:
        topic = self.topic(topic_name)
        validate_entity_name(name, EntityType.SUBSCRIPTION)
        if name in topic.subscriptions:
            raise KeyError(f"subscription {topic_name}/{name} already exists")
        sub = Subscription(topic, name, EntitySettings(EntityType.SUBSCRIPTION, properties))
        topic.subscriptions[name] = sub
        return sub

    def _ensure_free(self, name: str) -> None:
        if name in self.entities:
            raise KeyError(f"entity {name!r} already exists in {self.fqdn}")
        if self.sku == contract.SKU_STANDARD and len(self.entities) >= contract.MAX_ENTITIES_PER_NAMESPACE:
            raise quota_exceeded(f"{self.fqdn} already has {contract.MAX_ENTITIES_PER_NAMESPACE} entities")

    def queue(self, name: str) -> Queue:
        entity = self.entities.get(name)
        if not isinstance(entity, Queue):
            raise KeyError(f"no queue {name!r} in {self.fqdn}")
        return entity

    def topic(self, name: str) -> Topic:
        entity = self.entities.get(name)
        if not isinstance(entity, Topic):
            raise KeyError(f"no topic {name!r} in {self.fqdn}")
        return entity

    def subscription(self, topic_name: str, name: str) -> Subscription:
        sub = self.topic(topic_name).subscriptions.get(name)
        if sub is None:
            raise KeyError(f"no subscription {topic_name}/{name} in {self.fqdn}")
        return sub

    def queues(self) -> list[Queue]:
        return [e for e in self.entities.values() if isinstance(e, Queue)]

    def topics(self) -> list[Topic]:
        return [e for e in self.entities.values() if isinstance(e, Topic)]

    def delete(self, name: str) -> None:
        entity = self.entities.pop(name)
        entity.alive = False
        for r in entity.receivables():
            r.alive = False
            for store in r.stores():
                store.wake()

    # --- data-plane lookups (raise the SDK's errors) ------------------------------------------

    def sendable(self, name: str) -> SendableEntity:
        entity = self.entities.get(name)
        if entity is None:
            raise entity_not_found(self.fqdn, name)
        return entity

    def receivable(self, queue_name: str, subscription_name: str | None = None) -> ReceivableEntity:
        if subscription_name is None:
            entity = self.entities.get(queue_name)
            if not isinstance(entity, Queue):
                raise entity_not_found(self.fqdn, queue_name)
            return entity
        topic = self.entities.get(queue_name)
        sub = topic.subscriptions.get(subscription_name) if isinstance(topic, Topic) else None
        if sub is None:
            raise entity_not_found(self.fqdn, f"{queue_name}/Subscriptions/{subscription_name}")
        return sub


#: Round trips ending within the same window of the loop's clock share one timer, fired at the
#: window's end: never early, at most this much late.
_ROUND_TRIP_WINDOW = 0.001


def _wake_all(timers: dict[int, list[asyncio.Future[None]]], window: int) -> None:
    for fut in timers.pop(window, ()):
        if not fut.done():
            fut.set_result(None)


def _as_stored(record: Record) -> Record:
    return record


class ServiceBusWorld:
    """Everything the fake knows. Made by `mock_servicebus()`; tests arrange and inspect it."""

    def __init__(self, *, strict_namespaces: bool = False) -> None:
        self.clock = Clock()
        #: Notified whenever messages may have become available (sync receivers block on it).
        self.arrival = threading.Condition()
        self.namespaces: dict[str, Namespace] = {}
        #: Namespaces come into being on first use unless strict (then an unknown FQDN is a
        #: connection error, like a DNS failure).
        self.strict_namespaces = strict_namespaces
        #: Simulated round trip, slept once per operation (a send of a batch is one operation).
        self.latency: float = 0.0
        #: What each connection's frames and bytes cost (None: nothing, only the latency).
        self.link: Link | None = None
        #: Probability that any operation fails with `fault_error` (drawn from the seeded RNG).
        self.fault_rate: float = 0.0
        self.fault_error: object = DEFAULT_FAULT
        #: Probability that a send (or schedule) is stored and the client still sees a timeout
        #: (`OperationTimeoutError`): the ambiguous outcome of a real send whose reply was lost.
        self.ambiguous_send_rate: float = 0.0
        #: Probability that a complete finds the lock already lost (`MessageLockLostError`) and the
        #: message back in the queue: the lock ran out after the receiver's work (e.g. the next
        #: hop's acknowledgement) and before its complete reached the service.
        self.late_lock_loss_rate: float = 0.0
        #: How many of each injected fault fired: "fault", "ambiguous_send", "late_lock_loss".
        self.injected: dict[str, int] = {}
        self._rng = random.Random(0)
        self._faults: dict[tuple[str, str | None], Fault] = {}
        self._ambiguous: dict[tuple[str, str | None], Fault] = {}
        self._lock_losses: dict[tuple[str, str | None], Fault] = {}
        self._clients: weakref.WeakSet[Any] = weakref.WeakSet()
        #: Every operation attempted, by kind (send, receive, complete, ...), faults included.
        self.operations: dict[str, int] = {}
        #: The round-trip timers of the running loop: the waiters of each window (see `round_trip`).
        self._round_trip_timers: tuple[asyncio.AbstractEventLoop, dict[int, list[asyncio.Future[None]]]] | None = None
        #: How the inspection helpers (`Queue.dead_letters()`, `active_messages()`, ...) present a
        #: stored message: the model's `Record` itself, unless a front-end shows it in its clients'
        #: shape (`mock_servicebus()` presents it as the SDK's received message, peeked).
        self.present: Callable[[Record], Any] = _as_stored
        self.clock.subscribe(self._clock_moved)

    # --- arranging ----------------------------------------------------------------------------

    def namespace(self, fqdn: str, *, sku: str | None = None, messaging_partitions: int | None = None) -> Namespace:
        """The namespace with this fully qualified name (or bare name), created on first use."""
        key = normalize_fqdn(fqdn if "." in fqdn else contract.service_bus_fqdn(fqdn))
        ns = self.namespaces.get(key)
        if ns is None:
            ns = self.namespaces[key] = Namespace(self, key, sku or contract.SKU_STANDARD)
        elif sku is not None:
            ns.sku = sku
        if messaging_partitions is not None:
            if messaging_partitions not in contract.PREMIUM_MESSAGING_PARTITIONS:
                raise ValueError(f"messaging_partitions must be one of {contract.PREMIUM_MESSAGING_PARTITIONS}")
            ns.messaging_partitions = messaging_partitions
        return ns

    def seed(self, seed: int) -> None:
        self._rng.seed(seed)

    def fail(
        self,
        fqdn: str,
        entity: str | None = None,
        error: object = DEFAULT_FAULT,
        *,
        times: int | None = None,
    ) -> None:
        """Every operation on the namespace (or only on `entity`, a queue/topic name) raises
        `error` until `heal` (or for the next `times` operations). `error` is an `ErrorKind` or a
        front-end's own error (the in-process one takes azure-servicebus exception classes,
        instances or factories), carried as is to the front-end that makes it (faults.py)."""
        self._faults[(normalize_fqdn(fqdn), entity)] = Fault(error, times)

    def heal(self, fqdn: str, entity: str | None = None) -> None:
        """Remove the fault on that namespace or entity (`heal(fqdn)` clears the namespace-wide
        fault only; entity faults stay until healed by name or `heal_all()`)."""
        self._faults.pop((normalize_fqdn(fqdn), entity), None)

    def fail_partition(
        self,
        fqdn: str,
        entity: str,
        partition: int,
        error: object = DEFAULT_FAULT,
    ) -> None:
        """Take one fragment of a partitioned queue or topic down: sends pinned to it by a key
        raise `error`, unkeyed sends use the other fragments, and its messages are not received
        until `heal_partition` (partitioning.md)."""
        target = self.namespace(fqdn).sendable(entity)
        if not 0 <= partition < target.partitions:
            raise ValueError(f"{entity} has {target.partitions} partition(s); no partition {partition}")
        target.down[partition] = error

    def heal_partition(self, fqdn: str, entity: str, partition: int | None = None) -> None:
        target = self.namespace(fqdn).sendable(entity)
        if partition is None:
            target.down.clear()
        else:
            target.down.pop(partition, None)
        for r in target.receivables():
            r.store.wake()

    def heal_all(self) -> None:
        self._faults.clear()
        self._ambiguous.clear()
        self._lock_losses.clear()

    def ambiguous_sends(self, fqdn: str, entity: str | None = None, *, times: int | None = None) -> None:
        """Sends to the namespace (or to `entity`) are stored, then the client sees
        `OperationTimeoutError`, until `heal_all` (or for the next `times` sends)."""
        self._ambiguous[(normalize_fqdn(fqdn), entity)] = Fault(ErrorKind.TIMEOUT, times)

    def late_lock_loss(self, fqdn: str, entity: str | None = None, *, times: int | None = None) -> None:
        """Completes on the namespace (or on `entity`, a queue or topic name) find the message lock
        lost and the message available again, until `heal_all` (or for the next `times`)."""
        self._lock_losses[(normalize_fqdn(fqdn), entity)] = Fault(ErrorKind.TIMEOUT, times)

    def _count(self, kind: str) -> None:
        self.injected[kind] = self.injected.get(kind, 0) + 1

    def _targeted(self, table: dict[tuple[str, str | None], Fault], fqdn: str, entity: str | None) -> bool:
        if not table:
            return False
        key = normalize_fqdn(fqdn)
        for k in ((key, entity), (key, None)):
            fault = table.get(k)
            if fault is not None:
                if fault.remaining is not None:
                    fault.remaining -= 1
                    if fault.remaining <= 0:
                        table.pop(k, None)
                return True
        return False

    def after_send(self, fqdn: str, entity: str) -> None:
        """Called once a send was stored: raise the ambiguous outcome, if one is due."""
        if self._targeted(self._ambiguous, fqdn, entity) or (
            self.ambiguous_send_rate and self._rng.random() < self.ambiguous_send_rate
        ):
            self._count("ambiguous_send")
            raise reply_lost(fqdn, entity)

    def lock_lost_before_complete(self, fqdn: str, entity: str) -> bool:
        """True when this complete should find its lock lost (late lock loss)."""
        if self._targeted(self._lock_losses, fqdn, entity) or (
            self.late_lock_loss_rate and self._rng.random() < self.late_lock_loss_rate
        ):
            self._count("late_lock_loss")
            return True
        return False

    def close_connections(self, fqdn: str, error: object = ErrorKind.CONNECTION_LOST) -> int:
        """Fault every open client of the namespace: its senders and receivers raise `error` (as in
        `fail`) from now on, their waiting receives wake up and raise, and their locks are lost.
        Returns how many clients were faulted."""
        key = normalize_fqdn(fqdn)
        count = 0
        for client in list(self._clients):
            if client.fully_qualified_namespace == key and not client.closed:
                client.inject_fault(error)
                count += 1
        return count

    def open_clients(self, fqdn: str | None = None) -> list[Any]:
        key = normalize_fqdn(fqdn) if fqdn else None
        return [c for c in self._clients if not c.closed and (key is None or c.fully_qualified_namespace == key)]

    # --- what clients call --------------------------------------------------------------------

    def resolve(self, fqdn: str) -> Namespace:
        ns = self.namespaces.get(fqdn)  # clients hold normalized names: skip normalizing
        if ns is not None:
            return ns
        key = normalize_fqdn(fqdn)
        ns = self.namespaces.get(key)
        if ns is None:
            if self.strict_namespaces:
                raise namespace_not_found(key)
            ns = self.namespace(key)
        return ns

    def check_first(self, fqdn: str, keys: tuple[str, ...], operation: str) -> None:
        """`check` on the first of `keys` (a subscription, then its topic) that carries an injected
        fault of its own, else on the last."""
        faults = self._faults
        if faults:
            key = normalize_fqdn(fqdn)
            for entity in keys[:-1]:
                if (key, entity) in faults:
                    self.check(fqdn, entity, operation)
                    return
        self.check(fqdn, keys[-1], operation)

    def register(self, client: Any) -> None:
        """A data-plane client opened: `close_connections` can fault it."""
        self._clients.add(client)

    def check(self, fqdn: str, entity: str | None, operation: str) -> None:
        """Raise the injected fault for this operation, if any."""
        ops = self.operations
        ops[operation] = ops.get(operation, 0) + 1
        faults = self._faults
        if faults:
            key = normalize_fqdn(fqdn)
            fault = faults.get((key, entity)) if entity is not None else None
            if fault is None:
                fault = faults.get((key, None))
                if fault is not None:
                    self._consume(fault, (key, None))
                    raise injected(fault.error, f"{key}")
            else:
                self._consume(fault, (key, entity))
                raise injected(fault.error, f"{key}/{entity}")
        if self.fault_rate and self._rng.random() < self.fault_rate:
            raise injected(self.fault_error, f"{fqdn}/{entity or ''}")

    def _consume(self, fault: Fault, key: tuple[str, str | None]) -> None:
        if fault.remaining is not None:
            fault.remaining -= 1
            if fault.remaining <= 0:
                self._faults.pop(key, None)

    async def round_trip(self, latency: float | None = None) -> None:
        """Sleep one simulated round trip. Round trips ending within the same millisecond share one
        timer, fired at that millisecond's end (each still awaits its own future, so cancelling one
        cancels only it): a gather of 250 completions costs one timer, not 250, and so do 250
        completions spread over a few milliseconds by the link model (each ends at its own time)."""
        if latency is None:
            latency = self.latency
        if not latency:
            return
        if latency <= 2 * _ROUND_TRIP_WINDOW:
            await asyncio.sleep(latency)  # a round trip this short is not worth a shared timer
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        timers = self._round_trip_timers
        if timers is None or timers[0] is not loop:
            timers = self._round_trip_timers = (loop, {})
        # The window the round trip ends in: its timer fires at the window's end, after the round
        # trip. A timer pops its window as it fires, so a round trip never joins one that fired.
        window = int((now + latency) / _ROUND_TRIP_WINDOW) + 1
        waiters = timers[1].get(window)
        if waiters is None:
            waiters = timers[1][window] = []
            loop.call_later(window * _ROUND_TRIP_WINDOW - now, _wake_all, timers[1], window)
        fut = loop.create_future()
        waiters.append(fut)
        await fut

    def _clock_moved(self) -> None:
        for ns in self.namespaces.values():
            for entity in ns.entities.values():
                for r in entity.receivables():
                    for store in r.stores():
                        store.wake()
