"""Fake `ServiceBusAdministrationClient`, sync and aio, returning the SDK's own model classes.

Errors are the admin client's: azure.core `ResourceExistsError` / `ResourceNotFoundError`, and
`HttpResponseError` (status 400) for values the service would reject. `list_*` return the real
azure.core `ItemPaged` / `AsyncItemPaged`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from azure.core.async_paging import AsyncItemPaged, AsyncList
from azure.core.paging import ItemPaged
from azure.servicebus.management import (
    MessagingSku,
    NamespaceProperties,
    QueueProperties,
    QueueRuntimeProperties,
    RuleProperties,
    SubscriptionProperties,
    SubscriptionRuntimeProperties,
    TopicProperties,
    TopicRuntimeProperties,
    TrueRuleFilter,
)

from pairedbus import contract, sdk
from pairedbus.servicebus.clock import to_datetime
from pairedbus.servicebus.entities import Queue, Subscription, Topic
from pairedbus.servicebus.errors import bad_request
from pairedbus.servicebus.filters import FilterSyntaxError
from pairedbus.servicebus.properties import (
    QUEUE_DEFAULTS,
    SUBSCRIPTION_DEFAULTS,
    TOPIC_DEFAULTS,
)
from pairedbus.servicebus.world import Namespace, ServiceBusWorld, normalize_fqdn
from pairedbus.testing.errors import already_exists, raises_sdk_errors, resource_not_found, translating


def _values(model: Any, defaults: Mapping[str, Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(model, Mapping):
        values = {k: model[k] for k in defaults if k in model}
    else:
        values = {k: getattr(model, k) for k in defaults if hasattr(model, k)}
    values.update({k: v for k, v in kwargs.items() if k in defaults})
    return values


def _counts(active: int, dead: int, scheduled: int) -> Any:
    return sdk.message_count_details(active, dead, scheduled)


class AdminOperations:
    """Every administration operation on one namespace of a world, with the service's rules and
    errors: the logic the fake clients (sync and aio) and the emulator's admin plane over HTTP
    (`pairedbus.emulator.admin_http`) share. Results are the SDK's own model classes."""

    def __init__(self, world: ServiceBusWorld, fully_qualified_namespace: str) -> None:
        self._world = world
        self.fully_qualified_namespace = normalize_fqdn(fully_qualified_namespace)

    def _ns(self, operation: str, entity: str | None = None) -> Namespace:
        self._world.check(self.fully_qualified_namespace, entity, f"admin.{operation}")
        return self._world.resolve(self.fully_qualified_namespace)

    # --- queues -------------------------------------------------------------------------------

    def _queue(self, ns: Namespace, name: str) -> Queue:
        entity = ns.entities.get(name)
        if not isinstance(entity, Queue):
            raise resource_not_found(f"Queue '{name}' does not exist.")
        return entity

    def queue_properties(self, queue: Queue) -> QueueProperties:
        values = dict(queue.settings.values)
        values["max_size_in_megabytes"] = queue.namespace.reported_size_in_megabytes(queue)
        return QueueProperties(queue.name, **values)

    def get_queue(self, queue_name: str, **kwargs: Any) -> QueueProperties:
        return self.queue_properties(self._queue(self._ns("get_queue", queue_name), queue_name))

    def get_queue_runtime_properties(self, queue_name: str, **kwargs: Any) -> QueueRuntimeProperties:
        queue = self._queue(self._ns("get_queue_runtime_properties", queue_name), queue_name)
        return self.queue_runtime(queue)

    def queue_runtime(self, queue: Queue) -> QueueRuntimeProperties:
        c = queue.message_counts()
        return sdk.queue_runtime_properties(
            queue.name,
            message_count=c["active"] + c["dead_letter"] + c["scheduled"] + c["deferred"],
            message_count_details=_counts(c["active"] + c["deferred"], c["dead_letter"], c["scheduled"]),
            size_in_bytes=queue.size_in_bytes,
            created_at=to_datetime(queue.created_at),
            updated_at=to_datetime(queue.updated_at),
            accessed_at=to_datetime(queue.accessed_at),
        )

    def create_queue(self, queue_name: str, **kwargs: Any) -> QueueProperties:
        ns = self._ns("create_queue", queue_name)
        if queue_name in ns.entities:
            raise already_exists(queue_name)
        return self.queue_properties(ns.create_queue(queue_name, **_values({}, QUEUE_DEFAULTS, kwargs)))

    def update_queue(self, queue: QueueProperties | Mapping[str, Any], **kwargs: Any) -> None:
        name = queue["name"] if isinstance(queue, Mapping) else queue.name
        entity = self._queue(self._ns("update_queue", name), name)
        entity.settings.update(entity.namespace.sized_update(entity, _values(queue, QUEUE_DEFAULTS, kwargs)))
        entity.updated_at = self._world.clock.time()
        entity.settings_changed()

    def delete_queue(self, queue_name: str, **kwargs: Any) -> None:
        ns = self._ns("delete_queue", queue_name)
        self._queue(ns, queue_name)
        ns.delete(queue_name)

    def list_queues_now(self) -> list[QueueProperties]:
        return [self.queue_properties(q) for q in self._ns("list_queues").queues()]

    def list_queues_runtime_now(self) -> list[QueueRuntimeProperties]:
        return [self.queue_runtime(q) for q in self._ns("list_queues_runtime_properties").queues()]

    # --- topics -------------------------------------------------------------------------------

    def _topic(self, ns: Namespace, name: str) -> Topic:
        entity = ns.entities.get(name)
        if not isinstance(entity, Topic):
            raise resource_not_found(f"Topic '{name}' does not exist.")
        return entity

    def topic_properties(self, topic: Topic) -> TopicProperties:
        values = dict(topic.settings.values)
        values["size_in_bytes"] = topic.size_in_bytes
        values["max_size_in_megabytes"] = topic.namespace.reported_size_in_megabytes(topic)
        return TopicProperties(topic.name, **values)

    def topic_runtime(self, topic: Topic) -> TopicRuntimeProperties:
        scheduled = max((len(s.store.scheduled) for s in topic.subscriptions.values()), default=0)
        rules = [r.filter for s in topic.subscriptions.values() for r in s.rules.rules.values()]
        return sdk.topic_runtime_properties(
            topic.name,
            size_in_bytes=topic.size_in_bytes,
            subscription_count=len(topic.subscriptions),
            message_count_details=_counts(0, 0, scheduled),
            sql_filter_count=sum(1 for f in rules if type(f).__name__ in ("SqlRuleFilter", "TrueRuleFilter")),
            correlation_filter_count=sum(1 for f in rules if type(f).__name__ == "CorrelationRuleFilter"),
            created_at=to_datetime(topic.created_at),
            updated_at=to_datetime(topic.updated_at),
            accessed_at=to_datetime(topic.accessed_at),
        )

    def get_topic(self, topic_name: str, **kwargs: Any) -> TopicProperties:
        return self.topic_properties(self._topic(self._ns("get_topic", topic_name), topic_name))

    def get_topic_runtime_properties(self, topic_name: str, **kwargs: Any) -> TopicRuntimeProperties:
        return self.topic_runtime(self._topic(self._ns("get_topic_runtime_properties", topic_name), topic_name))

    def create_topic(self, topic_name: str, **kwargs: Any) -> TopicProperties:
        ns = self._ns("create_topic", topic_name)
        if topic_name in ns.entities:
            raise already_exists(topic_name)
        return self.topic_properties(ns.create_topic(topic_name, **_values({}, TOPIC_DEFAULTS, kwargs)))

    def update_topic(self, topic: TopicProperties | Mapping[str, Any], **kwargs: Any) -> None:
        name = topic["name"] if isinstance(topic, Mapping) else topic.name
        entity = self._topic(self._ns("update_topic", name), name)
        values = _values(topic, TOPIC_DEFAULTS, kwargs)
        values.pop("size_in_bytes", None)
        entity.settings.update(entity.namespace.sized_update(entity, values))
        entity.updated_at = self._world.clock.time()

    def delete_topic(self, topic_name: str, **kwargs: Any) -> None:
        ns = self._ns("delete_topic", topic_name)
        self._topic(ns, topic_name)
        ns.delete(topic_name)

    def list_topics_now(self) -> list[TopicProperties]:
        return [self.topic_properties(t) for t in self._ns("list_topics").topics()]

    def list_topics_runtime_now(self) -> list[TopicRuntimeProperties]:
        return [self.topic_runtime(t) for t in self._ns("list_topics_runtime_properties").topics()]

    # --- subscriptions ------------------------------------------------------------------------

    def _subscription(self, ns: Namespace, topic_name: str, name: str) -> Subscription:
        sub = self._topic(ns, topic_name).subscriptions.get(name)
        if sub is None:
            raise resource_not_found(f"Subscription '{topic_name}/{name}' does not exist.")
        return sub

    def subscription_properties(self, sub: Subscription) -> SubscriptionProperties:
        return SubscriptionProperties(sub.name, **sub.settings.values)

    def subscription_runtime(self, sub: Subscription) -> SubscriptionRuntimeProperties:
        c = sub.message_counts()
        return sdk.subscription_runtime_properties(
            sub.name,
            message_count=c["active"] + c["dead_letter"] + c["scheduled"] + c["deferred"],
            message_count_details=_counts(c["active"] + c["deferred"], c["dead_letter"], c["scheduled"]),
            created_at=to_datetime(sub.created_at),
            updated_at=to_datetime(sub.updated_at),
            accessed_at=to_datetime(sub.accessed_at),
        )

    def get_subscription(self, topic_name: str, subscription_name: str, **kwargs: Any) -> SubscriptionProperties:
        ns = self._ns("get_subscription", topic_name)
        return self.subscription_properties(self._subscription(ns, topic_name, subscription_name))

    def get_subscription_runtime_properties(
        self, topic_name: str, subscription_name: str, **kwargs: Any
    ) -> SubscriptionRuntimeProperties:
        ns = self._ns("get_subscription_runtime_properties", topic_name)
        return self.subscription_runtime(self._subscription(ns, topic_name, subscription_name))

    def create_subscription(self, topic_name: str, subscription_name: str, **kwargs: Any) -> SubscriptionProperties:
        ns = self._ns("create_subscription", topic_name)
        topic = self._topic(ns, topic_name)
        if subscription_name in topic.subscriptions:
            raise already_exists(f"{topic_name}/{subscription_name}")
        sub = ns.create_subscription(topic_name, subscription_name, **_values({}, SUBSCRIPTION_DEFAULTS, kwargs))
        default_rule = kwargs.get("default_rule")
        if default_rule is not None:
            sub.rules.remove("$Default")
            sub.rules.add(default_rule)
        return self.subscription_properties(sub)

    def update_subscription(
        self, topic_name: str, subscription: SubscriptionProperties | Mapping[str, Any], **kwargs: Any
    ) -> None:
        name = subscription["name"] if isinstance(subscription, Mapping) else subscription.name
        sub = self._subscription(self._ns("update_subscription", topic_name), topic_name, name)
        sub.settings.update(_values(subscription, SUBSCRIPTION_DEFAULTS, kwargs))
        sub.updated_at = self._world.clock.time()
        sub.settings_changed()

    def delete_subscription(self, topic_name: str, subscription_name: str, **kwargs: Any) -> None:
        ns = self._ns("delete_subscription", topic_name)
        sub = self._subscription(ns, topic_name, subscription_name)
        del sub.topic.subscriptions[subscription_name]
        sub.alive = False
        for store in sub.stores():
            store.wake()

    def list_subscriptions_now(self, topic_name: str) -> list[SubscriptionProperties]:
        topic = self._topic(self._ns("list_subscriptions", topic_name), topic_name)
        return [self.subscription_properties(s) for s in topic.subscriptions.values()]

    def list_subscriptions_runtime_now(self, topic_name: str) -> list[SubscriptionRuntimeProperties]:
        topic = self._topic(self._ns("list_subscriptions_runtime_properties", topic_name), topic_name)
        return [self.subscription_runtime(s) for s in topic.subscriptions.values()]

    # --- rules --------------------------------------------------------------------------------

    def get_rule(self, topic_name: str, subscription_name: str, rule_name: str, **kwargs: Any) -> RuleProperties:
        sub = self._subscription(self._ns("get_rule", topic_name), topic_name, subscription_name)
        rule = sub.rules.rules.get(rule_name)
        if rule is None:
            raise resource_not_found(f"Rule '{rule_name}' does not exist.")
        return rule

    def create_rule(self, topic_name: str, subscription_name: str, rule_name: str, **kwargs: Any) -> RuleProperties:
        sub = self._subscription(self._ns("create_rule", topic_name), topic_name, subscription_name)
        if rule_name in sub.rules.rules:
            raise already_exists(rule_name)
        rule = RuleProperties(
            rule_name,
            filter=kwargs.get("filter") or TrueRuleFilter(),
            action=kwargs.get("action"),
            created_at_utc=self._world.clock.now(),
        )
        try:
            sub.rules.add(rule)
        except FilterSyntaxError as error:
            raise bad_request(f"Invalid SQL filter: {error}") from None
        return rule

    def update_rule(
        self, topic_name: str, subscription_name: str, rule: RuleProperties | Mapping[str, Any], **kwargs: Any
    ) -> None:
        name = rule["name"] if isinstance(rule, Mapping) else rule.name
        sub = self._subscription(self._ns("update_rule", topic_name), topic_name, subscription_name)
        if name not in sub.rules.rules:
            raise resource_not_found(f"Rule '{name}' does not exist.")
        rule_filter = kwargs.get("filter") or (rule["filter"] if isinstance(rule, Mapping) else rule.filter)
        action = kwargs.get("action") or (rule.get("action") if isinstance(rule, Mapping) else rule.action)
        sub.rules.add(RuleProperties(name, filter=rule_filter, action=action, created_at_utc=self._world.clock.now()))

    def delete_rule(self, topic_name: str, subscription_name: str, rule_name: str, **kwargs: Any) -> None:
        sub = self._subscription(self._ns("delete_rule", topic_name), topic_name, subscription_name)
        if rule_name not in sub.rules.rules:
            raise resource_not_found(f"Rule '{rule_name}' does not exist.")
        sub.rules.remove(rule_name)

    def list_rules_now(self, topic_name: str, subscription_name: str) -> list[RuleProperties]:
        sub = self._subscription(self._ns("list_rules", topic_name), topic_name, subscription_name)
        return list(sub.rules.rules.values())

    def get_namespace_properties(self, **kwargs: Any) -> NamespaceProperties:
        ns = self._ns("get_namespace_properties")
        return NamespaceProperties(
            ns.name,
            alias=None,
            created_at_utc=None,
            messaging_sku=MessagingSku.PREMIUM if ns.sku == contract.SKU_PREMIUM else MessagingSku.STANDARD,
            messaging_units=1 if ns.sku == contract.SKU_PREMIUM else None,
            modified_at_utc=None,
            namespace_type="Messaging",
        )


class _AdminCore(AdminOperations):
    """The synchronous logic both twins share: the operations on the active world (or `_world=`)."""

    def __init__(self, fully_qualified_namespace: str, credential: Any, **kwargs: Any) -> None:
        from pairedbus.testing.active import active_world

        if credential is None:
            raise ValueError("credential is required")
        super().__init__(kwargs.pop("_world", None) or active_world(), fully_qualified_namespace)
        self._credential = credential


def _paged(fetch: Callable[[], list[Any]]) -> ItemPaged[Any]:
    fetch = translating(fetch)  # runs when the caller iterates, after the public method returned

    def get_next(token: Any) -> list[Any]:
        return fetch()

    def extract_data(items: list[Any]) -> tuple[None, list[Any]]:
        return None, items

    return ItemPaged(get_next, extract_data)


def _async_paged(handler: Any, operation: str, fetch: Callable[[], list[Any]]) -> AsyncItemPaged[Any]:
    fetch = translating(fetch)  # as in _paged

    async def get_next(token: Any) -> list[Any]:
        await handler._world.round_trip()
        return fetch()

    async def extract_data(items: list[Any]) -> tuple[None, AsyncList[Any]]:
        return None, AsyncList(items)

    return AsyncItemPaged(get_next, extract_data)


@raises_sdk_errors
class ServiceBusAdministrationClient(_AdminCore):
    """Fake sync `azure.servicebus.management.ServiceBusAdministrationClient`."""

    @classmethod
    def from_connection_string(cls, conn_str: str, **kwargs: Any) -> ServiceBusAdministrationClient:
        props = sdk.parse_connection_string(conn_str)
        return cls(props.fully_qualified_namespace, props, **kwargs)

    def __enter__(self) -> ServiceBusAdministrationClient:
        return self

    def __exit__(self, *args: Any) -> None:
        self.close()

    def close(self) -> None:
        pass

    def list_queues(self, **kwargs: Any) -> ItemPaged[QueueProperties]:
        return _paged(self.list_queues_now)

    def list_queues_runtime_properties(self, **kwargs: Any) -> ItemPaged[QueueRuntimeProperties]:
        return _paged(self.list_queues_runtime_now)

    def list_topics(self, **kwargs: Any) -> ItemPaged[TopicProperties]:
        return _paged(self.list_topics_now)

    def list_topics_runtime_properties(self, **kwargs: Any) -> ItemPaged[TopicRuntimeProperties]:
        return _paged(self.list_topics_runtime_now)

    def list_subscriptions(self, topic_name: str, **kwargs: Any) -> ItemPaged[SubscriptionProperties]:
        return _paged(lambda: self.list_subscriptions_now(topic_name))

    def list_subscriptions_runtime_properties(
        self, topic_name: str, **kwargs: Any
    ) -> ItemPaged[SubscriptionRuntimeProperties]:
        return _paged(lambda: self.list_subscriptions_runtime_now(topic_name))

    def list_rules(self, topic_name: str, subscription_name: str, **kwargs: Any) -> ItemPaged[RuleProperties]:
        return _paged(lambda: self.list_rules_now(topic_name, subscription_name))


_ASYNC_METHODS = (
    "get_queue",
    "get_queue_runtime_properties",
    "create_queue",
    "update_queue",
    "delete_queue",
    "get_topic",
    "get_topic_runtime_properties",
    "create_topic",
    "update_topic",
    "delete_topic",
    "get_subscription",
    "get_subscription_runtime_properties",
    "create_subscription",
    "update_subscription",
    "delete_subscription",
    "get_rule",
    "create_rule",
    "update_rule",
    "delete_rule",
    "get_namespace_properties",
)


class AsyncServiceBusAdministrationClient:
    """Fake `azure.servicebus.aio.management.ServiceBusAdministrationClient`: the same
    operations as coroutines (one simulated round trip each); `list_*` are AsyncItemPaged."""

    def __init__(self, fully_qualified_namespace: str, credential: Any, **kwargs: Any) -> None:
        self._core = _AdminCore(fully_qualified_namespace, credential, **kwargs)
        self._world = self._core._world
        self.fully_qualified_namespace = self._core.fully_qualified_namespace

    @classmethod
    def from_connection_string(cls, conn_str: str, **kwargs: Any) -> AsyncServiceBusAdministrationClient:
        props = sdk.parse_connection_string(conn_str)
        return cls(props.fully_qualified_namespace, props, **kwargs)

    async def __aenter__(self) -> AsyncServiceBusAdministrationClient:
        return self

    async def __aexit__(self, *args: Any) -> None:
        await self.close()

    async def close(self) -> None:
        pass

    def list_queues(self, **kwargs: Any) -> AsyncItemPaged[QueueProperties]:
        return _async_paged(self, "list_queues", self._core.list_queues_now)

    def list_queues_runtime_properties(self, **kwargs: Any) -> AsyncItemPaged[QueueRuntimeProperties]:
        return _async_paged(self, "list_queues_runtime_properties", self._core.list_queues_runtime_now)

    def list_topics(self, **kwargs: Any) -> AsyncItemPaged[TopicProperties]:
        return _async_paged(self, "list_topics", self._core.list_topics_now)

    def list_topics_runtime_properties(self, **kwargs: Any) -> AsyncItemPaged[TopicRuntimeProperties]:
        return _async_paged(self, "list_topics_runtime_properties", self._core.list_topics_runtime_now)

    def list_subscriptions(self, topic_name: str, **kwargs: Any) -> AsyncItemPaged[SubscriptionProperties]:
        return _async_paged(self, "list_subscriptions", lambda: self._core.list_subscriptions_now(topic_name))

    def list_subscriptions_runtime_properties(
        self, topic_name: str, **kwargs: Any
    ) -> AsyncItemPaged[SubscriptionRuntimeProperties]:
        return _async_paged(
            self, "list_subscriptions_runtime_properties", lambda: self._core.list_subscriptions_runtime_now(topic_name)
        )

    def list_rules(self, topic_name: str, subscription_name: str, **kwargs: Any) -> AsyncItemPaged[RuleProperties]:
        return _async_paged(self, "list_rules", lambda: self._core.list_rules_now(topic_name, subscription_name))


def _async_twin(name: str) -> Callable[..., Any]:
    core_method = getattr(AdminOperations, name)

    async def method(self: AsyncServiceBusAdministrationClient, *args: Any, **kwargs: Any) -> Any:
        await self._world.round_trip()
        return core_method(self._core, *args, **kwargs)

    method.__name__ = name
    method.__qualname__ = f"AsyncServiceBusAdministrationClient.{name}"
    method.__doc__ = core_method.__doc__
    return method


for _name in _ASYNC_METHODS:
    setattr(AsyncServiceBusAdministrationClient, _name, _async_twin(_name))
raises_sdk_errors(AsyncServiceBusAdministrationClient)  # after the twins are attached
