"""Queues, topics and subscriptions of the fake: sending (duplicate detection, sequence numbers,
quota, fragments of partitioned entities, routing through subscription rules) and receiving
through each receivable entity's message stores (store.py)."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pairedbus import contract
from pairedbus.servicebus.content import Content, Record
from pairedbus.servicebus.errors import (
    entity_disabled,
    entity_full,
    injected,
    no_partition_available,
    partition_key_mismatch,
    session_id_missing,
)
from pairedbus.servicebus.filters import RuleSet
from pairedbus.servicebus.properties import EntitySettings, EntityType
from pairedbus.servicebus.store import (
    DEAD_LETTER_REASON_MAX_DELIVERY,
    DEAD_LETTER_REASON_TTL,
    NOTHING_DOWN,
    PARTITION_SHIFT,
    MessageStore,
    SessionLock,
    partition_for_key,
    partition_of,
)

#: world.Namespace, which imports this module: named, not imported, so the imports point one way.
Namespace = Any

__all__ = [
    "DEAD_LETTER_REASON_MAX_DELIVERY",
    "DEAD_LETTER_REASON_TTL",
    "Entity",
    "MessageStore",
    "OperationCounts",
    "Queue",
    "ReceivableEntity",
    "SendableEntity",
    "SessionLock",
    "Subscription",
    "Topic",
    "partition_of",
]

#: The service allows a message to be auto-forwarded through at most this many entities.
MAX_FORWARD_HOPS = 4


_forward_depth = [0]


@dataclass
class OperationCounts:
    """What an entity saw, for assertions (pings are messages like any other)."""

    sends: int = 0  # messages accepted
    send_calls: int = 0
    receives: int = 0  # messages delivered
    receive_calls: int = 0
    completes: int = 0
    abandons: int = 0
    dead_letters: int = 0
    defers: int = 0
    renewals: int = 0
    peeks: int = 0
    duplicates_dropped: int = 0
    expired: int = 0
    schedules: int = 0
    cancels: int = 0


class Entity:
    """Anything with a path in a namespace: a queue, a topic or a subscription."""

    kind: EntityType
    #: False once deleted; handlers that cached the entity look it up again (and fail).
    alive: bool = True

    def __init__(self, namespace: Namespace, name: str, settings: EntitySettings) -> None:
        self.namespace = namespace
        self.name = name
        self.settings = settings
        self.counts = OperationCounts()
        self.created_at = namespace.world.clock.time()
        self.updated_at = self.created_at
        self.accessed_at = self.created_at

    @property
    def path(self) -> str:
        return self.name

    def fragments_down(self) -> frozenset[int] | set[int]:
        """Fragments of this entity (of its topic, for a subscription) that are failed."""
        return NOTHING_DOWN

    def effective_ttl(self, content: Content) -> float | None:
        """Message TTL capped by the entity's default; None when neither is finite."""
        default = self.settings.ttl_seconds
        ttl = content.ttl
        if ttl is None or (default is not None and ttl > default):
            return default
        return ttl


class ReceivableEntity(Entity):
    def __init__(self, namespace: Namespace, name: str, settings: EntitySettings) -> None:
        super().__init__(namespace, name, settings)
        self.store = MessageStore(self, dead_letter=False)
        self.dead_letter_store = MessageStore(self, dead_letter=True)

    def stores(self) -> tuple[MessageStore, MessageStore]:
        return self.store, self.dead_letter_store

    def store_for(self, sub_queue: str | None) -> MessageStore:
        return self.dead_letter_store if sub_queue == "deadletter" else self.store

    def deliver(self, content: Content, sequence_number: int, now: float) -> None:
        if self.settings.forward_to is not None and self.forward(self.settings.forward_to, content, now):
            return
        ttl = self.effective_ttl(content)
        scheduled = content.scheduled
        if scheduled is not None and scheduled > now:
            rec = Record(content, sequence_number, scheduled, None)
            self.store.add_scheduled(rec, scheduled)
            return
        rec = Record(content, sequence_number, now, None if ttl is None else now + ttl)
        self.store.add(rec)

    def forward(self, target_name: str, content: Content, now: float) -> bool:
        """Auto-forwarding: hand the message to another queue or topic of the namespace (at most
        `MAX_FORWARD_HOPS` hops). False when the target does not exist: the message stays."""
        target = self.namespace.entities.get(target_name)
        if target is None or _forward_depth[0] >= MAX_FORWARD_HOPS:
            return False
        _forward_depth[0] += 1
        try:
            target.accept([content], now)
        finally:
            _forward_depth[0] -= 1
        return True

    def settings_changed(self) -> None:
        for store in self.stores():
            store.release_all_locks()

    # --- introspection for tests -------------------------------------------------------------

    def now(self) -> float:
        return float(self.namespace.world.clock.time())

    # Each helper returns the stored records as the world presents them (`ServiceBusWorld.present`).

    def active_messages(self) -> list[Any]:
        present = self.namespace.world.present
        return [present(r) for r in self.store.queued_records(self.now())]

    def dead_letters(self) -> list[Any]:
        present = self.namespace.world.present
        return [present(r) for r in self.dead_letter_store.queued_records(self.now())]

    def scheduled_messages(self) -> list[Any]:
        now = self.now()
        self.store.housekeep(now)
        present = self.namespace.world.present
        return [present(r) for r in sorted(self.store.scheduled.values(), key=lambda r: r.sequence_number)]

    def deferred_messages(self) -> list[Any]:
        present = self.namespace.world.present
        return [present(r) for r in sorted(self.store.deferred.values(), key=lambda r: r.sequence_number)]

    def message_counts(self) -> dict[str, int]:
        now = self.now()
        for store in self.stores():
            store.housekeep(now)
        return {
            "active": self.store.active_count,
            "dead_letter": self.dead_letter_store.active_count,
            "scheduled": len(self.store.scheduled),
            "deferred": len(self.store.deferred),
        }

    @property
    def size_in_bytes(self) -> int:
        return self.store.size_in_bytes + self.dead_letter_store.size_in_bytes


class SendableEntity(Entity):
    """Queues and topics accept sends: duplicate detection, sequence numbers, quota."""

    def __init__(self, namespace: Namespace, name: str, settings: EntitySettings) -> None:
        super().__init__(namespace, name, settings)
        self._sequence = itertools.count(1)
        self._dup_seen: dict[str, float] = {}
        self._dup_order: deque[tuple[float, str]] = deque()
        #: Fragments (partitioning.md): 16 on Standard, the namespace's partition count on
        #: Premium, 1 when the entity is not partitioned. Fixed at creation, as in the service.
        self.partitions = _partition_count(namespace, settings)
        self._fragment_sequences = [itertools.count(1) for _ in range(self.partitions)]
        self._next_fragment = 0
        #: Failed fragments -> the error a send pinned to them raises.
        self.down: dict[int, Any] = {}

    def fragments_down(self) -> frozenset[int] | set[int]:
        return set(self.down) if self.down else NOTHING_DOWN

    def partition_key(self, content: Content) -> str | None:
        """The key that pins a message to a fragment (partitioning.md, "Partition keys"): the
        session id, else the partition key, else the message id under duplicate detection."""
        key = content.session_id or content.partition_key
        if key is None and self.settings.requires_duplicate_detection:
            key = content.message_id
        return key

    def _fragment(self, content: Content) -> int:
        """The fragment a message goes to; raises the fragment's error if it is pinned to a
        failed one. Unkeyed messages go round-robin over the fragments that are up."""
        key = self.partition_key(content)
        if key is not None:
            fragment = partition_for_key(key, self.partitions)
            error = self.down.get(fragment)
            if error is not None:
                raise injected(error, f"{self.namespace.fqdn}/{self.name} partition {fragment}")
            return fragment
        for _ in range(self.partitions):
            fragment = self._next_fragment
            self._next_fragment = (fragment + 1) % self.partitions
            if fragment not in self.down:
                return fragment
        raise no_partition_available(self.namespace.fqdn, self.name)

    def _sequence_number(self, fragment: int) -> int:
        return (fragment << PARTITION_SHIFT) | next(self._fragment_sequences[fragment])

    def _is_duplicate(self, message_id: str | None, now: float) -> bool:
        if message_id is None or not self.settings.requires_duplicate_detection:
            return False
        window = self.settings.duplicate_window_seconds
        order = self._dup_order
        seen = self._dup_seen
        while order and order[0][0] + window <= now:
            t, mid = order.popleft()
            if seen.get(mid) == t:
                del seen[mid]
        if message_id in seen:
            return True
        seen[message_id] = now
        order.append((now, message_id))
        return False

    def _check_quota(self, incoming: int) -> None:
        limit = self.namespace.reported_size_in_megabytes(self) * 1024 * 1024
        if self.total_size_in_bytes() + incoming > limit:
            raise entity_full(self.name, self.total_size_in_bytes(), limit)

    def total_size_in_bytes(self) -> int:
        raise NotImplementedError

    def accept(self, contents: list[Content], now: float) -> list[int]:
        """Store sent messages; returns their sequence numbers (duplicates get none)."""
        self.counts.send_calls += 1
        status = self.settings.values.get("status")
        if status in _SEND_REFUSED:
            raise entity_disabled(self.namespace.fqdn, self.name, str(getattr(status, "value", status)))
        self._check_quota(sum(c.size for c in contents))
        numbers = []
        # A send pinned to a failed fragment fails as a whole, before anything is stored.
        fragments = [self._fragment(c) for c in contents] if self.partitions > 1 else None
        for i, content in enumerate(contents):
            if self._is_duplicate(content.message_id, now):
                self.counts.duplicates_dropped += 1
                continue
            seq = next(self._sequence) if fragments is None else self._sequence_number(fragments[i])
            self._route(content, seq, now)
            numbers.append(seq)
        self.counts.sends += len(numbers)
        self.accessed_at = now
        return numbers

    def _route(self, content: Content, sequence_number: int, now: float) -> None:
        raise NotImplementedError

    def cancel_scheduled(self, sequence_numbers: Iterable[int]) -> None:
        raise NotImplementedError

    def receivables(self) -> list[ReceivableEntity]:
        """Where sent messages end up: the queue itself, or a topic's subscriptions."""
        raise NotImplementedError

    def is_scheduled(self, sequence_number: int) -> bool:
        return any(sequence_number in r.store.scheduled for r in self.receivables())

    def requires_session_ids(self) -> bool:
        """Whether a send without a session id is refused (a session queue's rule)."""
        return False


#: Entity statuses under which the service refuses sends (`EntityStatus`).
_SEND_REFUSED = frozenset({"Disabled", "SendDisabled"})


def _partition_count(namespace: Namespace, settings: EntitySettings) -> int:
    if not settings.values.get("enable_partitioning"):
        return 1
    if namespace.sku == contract.SKU_PREMIUM:
        if namespace.messaging_partitions >= contract.MIN_PREMIUM_PARTITIONS_FOR_ENTITIES:
            return int(namespace.messaging_partitions)
        return contract.PARTITIONS_PER_ENTITY[contract.SKU_PREMIUM]
    return contract.PARTITIONS_PER_ENTITY[contract.SKU_STANDARD]


class Queue(ReceivableEntity, SendableEntity):
    kind = EntityType.QUEUE

    def __init__(self, namespace: Namespace, name: str, settings: EntitySettings) -> None:
        super().__init__(namespace, name, settings)

    def total_size_in_bytes(self) -> int:
        return self.size_in_bytes

    def _route(self, content: Content, sequence_number: int, now: float) -> None:
        self.deliver(content, sequence_number, now)

    def accept(self, contents: list[Content], now: float) -> list[int]:
        numbers = super().accept(contents, now)
        if numbers:
            self.store.wake()
        return numbers

    def cancel_scheduled(self, sequence_numbers: Iterable[int]) -> None:
        for seq in sequence_numbers:
            self.store.cancel_scheduled(seq)
            self.counts.cancels += 1

    def receivables(self) -> list[ReceivableEntity]:
        return [self]

    def requires_session_ids(self) -> bool:
        return self.settings.requires_session


class Subscription(ReceivableEntity):
    kind = EntityType.SUBSCRIPTION

    def __init__(self, topic: Topic, name: str, settings: EntitySettings) -> None:
        super().__init__(topic.namespace, name, settings)
        self.topic = topic
        self.rules = RuleSet()

    @property
    def path(self) -> str:
        return f"{self.topic.name}/Subscriptions/{self.name}"

    def fragments_down(self) -> frozenset[int] | set[int]:
        return self.topic.fragments_down()

    def effective_ttl(self, content: Content) -> float | None:
        ttl = self.topic.effective_ttl(content)
        own = self.settings.ttl_seconds
        if ttl is None or (own is not None and own < ttl):
            return own
        return ttl


class Topic(SendableEntity):
    kind = EntityType.TOPIC

    def __init__(self, namespace: Namespace, name: str, settings: EntitySettings) -> None:
        super().__init__(namespace, name, settings)
        self.subscriptions: dict[str, Subscription] = {}

    def total_size_in_bytes(self) -> int:
        return sum(s.size_in_bytes for s in self.subscriptions.values())

    @property
    def size_in_bytes(self) -> int:
        return self.total_size_in_bytes()

    def _route(self, content: Content, sequence_number: int, now: float) -> None:
        props: dict[str, Any] | None = None
        for sub in self.subscriptions.values():
            rules = sub.rules
            if rules.always_true:
                sub.deliver(content, sequence_number, now)
                continue
            if props is None:
                props = content.filter_properties()
            for copy in rules.copies(content, props):
                sub.deliver(copy, sequence_number, now)

    def accept(self, contents: list[Content], now: float) -> list[int]:
        numbers = super().accept(contents, now)
        if numbers:
            for sub in self.subscriptions.values():
                sub.store.wake()
        return numbers

    def cancel_scheduled(self, sequence_numbers: Iterable[int]) -> None:
        for seq in sequence_numbers:
            for sub in self.subscriptions.values():
                sub.store.cancel_scheduled(seq)
            self.counts.cancels += 1

    def receivables(self) -> list[ReceivableEntity]:
        return list(self.subscriptions.values())


def check_sessions(entity: SendableEntity, contents: list[Content]) -> None:
    """What the service refuses of a send before storing it: a partition key that is not the
    session id, and a message without a session id sent to a session entity."""
    for c in contents:
        if c.partition_key is not None and c.session_id is not None and c.partition_key != c.session_id:
            raise partition_key_mismatch(c.partition_key, c.session_id)
    if entity.requires_session_ids() and any(c.session_id is None for c in contents):
        raise session_id_missing()
