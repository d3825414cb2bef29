"""The management plane as model operations: create, get, update, delete and list queues, topics,
subscriptions and rules; runtime and namespace properties. Results are the model's own records and
refusals its `ServiceError`s; each admin front-end turns them into what its client reads
(`pairedbus.testing.admin`: the SDK's property classes; `pairedbus.emulator.admin_http`: Atom).

Property values are keyed by the names `pairedbus.servicebus.properties` holds (the admin client's
attribute names, durations as timedeltas or ISO 8601 text); unknown and read-only keys are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pairedbus import contract
from pairedbus.servicebus.clock import to_datetime
from pairedbus.servicebus.entities import Entity, Queue, ReceivableEntity, Subscription, Topic
from pairedbus.servicebus.errors import bad_request, resource_exists, resource_not_found
from pairedbus.servicebus.filters import (
    DEFAULT_RULE_NAME,
    FilterSyntaxError,
    Rule,
    RuleFilter,
    SqlAction,
    compile_action,
    compile_filter,
    filter_counts,
)
from pairedbus.servicebus.properties import DEFAULTS, EntityType
from pairedbus.servicebus.world import Namespace, ServiceBusWorld, normalize_fqdn

__all__ = ["AdminOperations", "EntityProperties", "NamespaceProperties", "RuntimeProperties", "settable"]


@dataclass(frozen=True, slots=True)
class EntityProperties:
    """A queue's, topic's or subscription's settings as a Get reports them."""

    kind: EntityType
    name: str
    values: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class RuntimeProperties:
    """An entity's runtime properties: counts, size and instants (UTC). `active_message_count`
    includes deferred messages, as the service counts them; topics report the scheduled count of
    their busiest subscription and their rules' filter counts."""

    name: str
    created_at_utc: datetime
    updated_at_utc: datetime
    accessed_at_utc: datetime
    size_in_bytes: int = 0
    total_message_count: int = 0
    active_message_count: int = 0
    dead_letter_message_count: int = 0
    scheduled_message_count: int = 0
    transfer_message_count: int = 0
    transfer_dead_letter_message_count: int = 0
    subscription_count: int | None = None
    sql_filter_count: int | None = None
    correlation_filter_count: int | None = None


@dataclass(frozen=True, slots=True)
class NamespaceProperties:
    """What the namespace reports of itself: its name, tier and (Premium) messaging units."""

    name: str
    sku: str
    messaging_units: int | None


def settable(kind: EntityType, values: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of `values` a create or update of `kind` reads (the rest are read-only or unknown)."""
    defaults = DEFAULTS[kind]
    return {k: v for k, v in values.items() if k in defaults}


def _counted(entity: ReceivableEntity, name: str, **extra: Any) -> RuntimeProperties:
    c = entity.message_counts()
    return RuntimeProperties(
        name,
        created_at_utc=to_datetime(entity.created_at),
        updated_at_utc=to_datetime(entity.updated_at),
        accessed_at_utc=to_datetime(entity.accessed_at),
        total_message_count=c["active"] + c["dead_letter"] + c["scheduled"] + c["deferred"],
        active_message_count=c["active"] + c["deferred"],
        dead_letter_message_count=c["dead_letter"],
        scheduled_message_count=c["scheduled"],
        **extra,
    )


def _compiled(rule: Rule) -> None:
    """Refuse `rule` as the service does (400) when its filter or action does not compile."""
    try:
        compile_filter(rule.filter)
        compile_action(rule.action)
    except FilterSyntaxError as error:
        raise bad_request(f"Invalid SQL filter: {error}") from None


def _added(sub: Subscription, rule: Rule) -> Rule:
    """`rule` added to (or replacing its namesake in) `sub`; one that does not compile is a 400."""
    try:
        sub.rules.add(rule)
    except FilterSyntaxError as error:
        raise bad_request(f"Invalid SQL filter: {error}") from None
    return rule


class AdminOperations:
    """Every administration operation on one namespace of a world, with the service's rules and
    errors. Each operation first checks the namespace's injected faults (`admin.<operation>`)."""

    def __init__(self, world: ServiceBusWorld, fully_qualified_namespace: str) -> None:
        self.world = world
        self.fully_qualified_namespace = normalize_fqdn(fully_qualified_namespace)

    def _ns(self, operation: str, entity: str | None = None) -> Namespace:
        self.world.check(self.fully_qualified_namespace, entity, f"admin.{operation}")
        return self.world.resolve(self.fully_qualified_namespace)

    def _touched(self, entity: Entity) -> None:
        entity.updated_at = self.world.clock.time()

    # --- queues -------------------------------------------------------------------------------

    @staticmethod
    def _queue(ns: Namespace, name: str) -> Queue:
        entity = ns.entities.get(name)
        if not isinstance(entity, Queue):
            raise resource_not_found(f"Queue '{name}' does not exist.")
        return entity

    @staticmethod
    def queue_properties(queue: Queue) -> EntityProperties:
        values = dict(queue.settings.values)
        values["max_size_in_megabytes"] = queue.namespace.reported_size_in_megabytes(queue)
        return EntityProperties(EntityType.QUEUE, queue.name, values)

    @staticmethod
    def queue_runtime(queue: Queue) -> RuntimeProperties:
        return _counted(queue, queue.name, size_in_bytes=queue.size_in_bytes)

    def get_queue(self, name: str) -> EntityProperties:
        return self.queue_properties(self._queue(self._ns("get_queue", name), name))

    def get_queue_runtime_properties(self, name: str) -> RuntimeProperties:
        return self.queue_runtime(self._queue(self._ns("get_queue_runtime_properties", name), name))

    def create_queue(self, name: str, values: Mapping[str, Any]) -> EntityProperties:
        ns = self._ns("create_queue", name)
        if name in ns.entities:
            raise resource_exists(name)
        return self.queue_properties(ns.create_queue(name, **settable(EntityType.QUEUE, values)))

    def update_queue(self, name: str, values: Mapping[str, Any]) -> None:
        queue = self._queue(self._ns("update_queue", name), name)
        queue.settings.update(queue.namespace.sized_update(queue, settable(EntityType.QUEUE, values)))
        self._touched(queue)
        queue.settings_changed()

    def delete_queue(self, name: str) -> None:
        ns = self._ns("delete_queue", name)
        self._queue(ns, name)
        ns.delete(name)

    def list_queues(self) -> list[EntityProperties]:
        return [self.queue_properties(q) for q in self._ns("list_queues").queues()]

    def list_queues_runtime_properties(self) -> list[RuntimeProperties]:
        return [self.queue_runtime(q) for q in self._ns("list_queues_runtime_properties").queues()]

    # --- topics -------------------------------------------------------------------------------

    @staticmethod
    def _topic(ns: Namespace, name: str) -> Topic:
        entity = ns.entities.get(name)
        if not isinstance(entity, Topic):
            raise resource_not_found(f"Topic '{name}' does not exist.")
        return entity

    @staticmethod
    def topic_properties(topic: Topic) -> EntityProperties:
        values = dict(topic.settings.values)
        values["size_in_bytes"] = topic.size_in_bytes
        values["max_size_in_megabytes"] = topic.namespace.reported_size_in_megabytes(topic)
        return EntityProperties(EntityType.TOPIC, topic.name, values)

    @staticmethod
    def topic_runtime(topic: Topic) -> RuntimeProperties:
        subscriptions = topic.subscriptions.values()
        sql, correlation = filter_counts([r for s in subscriptions for r in s.rules.rules.values()])
        return RuntimeProperties(
            topic.name,
            created_at_utc=to_datetime(topic.created_at),
            updated_at_utc=to_datetime(topic.updated_at),
            accessed_at_utc=to_datetime(topic.accessed_at),
            size_in_bytes=topic.size_in_bytes,
            scheduled_message_count=max((len(s.store.scheduled) for s in subscriptions), default=0),
            subscription_count=len(topic.subscriptions),
            sql_filter_count=sql,
            correlation_filter_count=correlation,
        )

    def get_topic(self, name: str) -> EntityProperties:
        return self.topic_properties(self._topic(self._ns("get_topic", name), name))

    def get_topic_runtime_properties(self, name: str) -> RuntimeProperties:
        return self.topic_runtime(self._topic(self._ns("get_topic_runtime_properties", name), name))

    def create_topic(self, name: str, values: Mapping[str, Any]) -> EntityProperties:
        ns = self._ns("create_topic", name)
        if name in ns.entities:
            raise resource_exists(name)
        return self.topic_properties(ns.create_topic(name, **settable(EntityType.TOPIC, values)))

    def update_topic(self, name: str, values: Mapping[str, Any]) -> None:
        topic = self._topic(self._ns("update_topic", name), name)
        changes = settable(EntityType.TOPIC, values)
        changes.pop("size_in_bytes", None)
        topic.settings.update(topic.namespace.sized_update(topic, changes))
        self._touched(topic)

    def delete_topic(self, name: str) -> None:
        ns = self._ns("delete_topic", name)
        self._topic(ns, name)
        ns.delete(name)

    def list_topics(self) -> list[EntityProperties]:
        return [self.topic_properties(t) for t in self._ns("list_topics").topics()]

    def list_topics_runtime_properties(self) -> list[RuntimeProperties]:
        return [self.topic_runtime(t) for t in self._ns("list_topics_runtime_properties").topics()]

    # --- subscriptions ------------------------------------------------------------------------

    def _subscription(self, ns: Namespace, topic_name: str, name: str) -> Subscription:
        sub = self._topic(ns, topic_name).subscriptions.get(name)
        if sub is None:
            raise resource_not_found(f"Subscription '{topic_name}/{name}' does not exist.")
        return sub

    @staticmethod
    def subscription_properties(sub: Subscription) -> EntityProperties:
        return EntityProperties(EntityType.SUBSCRIPTION, sub.name, dict(sub.settings.values))

    @staticmethod
    def subscription_runtime(sub: Subscription) -> RuntimeProperties:
        return _counted(sub, sub.name)

    def get_subscription(self, topic_name: str, name: str) -> EntityProperties:
        ns = self._ns("get_subscription", topic_name)
        return self.subscription_properties(self._subscription(ns, topic_name, name))

    def get_subscription_runtime_properties(self, topic_name: str, name: str) -> RuntimeProperties:
        ns = self._ns("get_subscription_runtime_properties", topic_name)
        return self.subscription_runtime(self._subscription(ns, topic_name, name))

    def create_subscription(
        self, topic_name: str, name: str, values: Mapping[str, Any], *, default_rule: Rule | None = None
    ) -> EntityProperties:
        """A new subscription; `default_rule` replaces the true `$Default` rule it otherwise gets."""
        ns = self._ns("create_subscription", topic_name)
        topic = self._topic(ns, topic_name)
        if name in topic.subscriptions:
            raise resource_exists(f"{topic_name}/{name}")
        if default_rule is not None:
            _compiled(default_rule)  # refused before anything is created
        sub = ns.create_subscription(topic_name, name, **settable(EntityType.SUBSCRIPTION, values))
        if default_rule is not None:
            sub.rules.remove(DEFAULT_RULE_NAME)
            sub.rules.add(default_rule)
        return self.subscription_properties(sub)

    def update_subscription(self, topic_name: str, name: str, values: Mapping[str, Any]) -> None:
        sub = self._subscription(self._ns("update_subscription", topic_name), topic_name, name)
        sub.settings.update(settable(EntityType.SUBSCRIPTION, values))
        self._touched(sub)
        sub.settings_changed()

    def delete_subscription(self, topic_name: str, name: str) -> None:
        ns = self._ns("delete_subscription", topic_name)
        sub = self._subscription(ns, topic_name, name)
        del sub.topic.subscriptions[name]
        sub.alive = False
        for store in sub.stores():
            store.wake()

    def list_subscriptions(self, topic_name: str) -> list[EntityProperties]:
        topic = self._topic(self._ns("list_subscriptions", topic_name), topic_name)
        return [self.subscription_properties(s) for s in topic.subscriptions.values()]

    def list_subscriptions_runtime_properties(self, topic_name: str) -> list[RuntimeProperties]:
        topic = self._topic(self._ns("list_subscriptions_runtime_properties", topic_name), topic_name)
        return [self.subscription_runtime(s) for s in topic.subscriptions.values()]

    # --- rules --------------------------------------------------------------------------------

    def get_rule(self, topic_name: str, subscription_name: str, name: str) -> Rule:
        sub = self._subscription(self._ns("get_rule", topic_name), topic_name, subscription_name)
        rule = sub.rules.rules.get(name)
        if rule is None:
            raise resource_not_found(f"Rule '{name}' does not exist.")
        return rule

    def create_rule(
        self, topic_name: str, subscription_name: str, name: str, rule_filter: RuleFilter, action: SqlAction | None
    ) -> Rule:
        sub = self._subscription(self._ns("create_rule", topic_name), topic_name, subscription_name)
        if name in sub.rules.rules:
            raise resource_exists(name)
        return _added(sub, Rule(name, rule_filter, action, self.world.clock.time()))

    def update_rule(
        self, topic_name: str, subscription_name: str, name: str, rule_filter: RuleFilter, action: SqlAction | None
    ) -> Rule:
        sub = self._subscription(self._ns("update_rule", topic_name), topic_name, subscription_name)
        if name not in sub.rules.rules:
            raise resource_not_found(f"Rule '{name}' does not exist.")
        return _added(sub, Rule(name, rule_filter, action, self.world.clock.time()))

    def delete_rule(self, topic_name: str, subscription_name: str, name: str) -> None:
        sub = self._subscription(self._ns("delete_rule", topic_name), topic_name, subscription_name)
        if name not in sub.rules.rules:
            raise resource_not_found(f"Rule '{name}' does not exist.")
        sub.rules.remove(name)

    def list_rules(self, topic_name: str, subscription_name: str) -> list[Rule]:
        sub = self._subscription(self._ns("list_rules", topic_name), topic_name, subscription_name)
        return list(sub.rules.rules.values())

    # --- the namespace ------------------------------------------------------------------------

    def get_namespace_properties(self) -> NamespaceProperties:
        ns = self._ns("get_namespace_properties")
        premium = ns.sku == contract.SKU_PREMIUM
        return NamespaceProperties(ns.name, ns.sku, 1 if premium else None)
