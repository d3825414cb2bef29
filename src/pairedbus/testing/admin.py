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
    CorrelationRuleFilter,
    FalseRuleFilter,
    MessagingSku,
    NamespaceProperties,
    QueueProperties,
    QueueRuntimeProperties,
    RuleProperties,
    SqlRuleAction,
    SqlRuleFilter,
    SubscriptionProperties,
    SubscriptionRuntimeProperties,
    TopicProperties,
    TopicRuntimeProperties,
    TrueRuleFilter,
)

from pairedbus import contract, sdk
from pairedbus.servicebus import admin as model
from pairedbus.servicebus.clock import to_datetime
from pairedbus.servicebus.filters import (
    CORRELATION_FIELDS,
    CorrelationFilter,
    FalseFilter,
    Rule,
    RuleFilter,
    SqlAction,
    SqlFilter,
    TrueFilter,
)
from pairedbus.servicebus.properties import DEFAULTS, EntityType
from pairedbus.servicebus.world import ServiceBusWorld
from pairedbus.testing.errors import raises_sdk_errors, translating

# --- the SDK's shapes <-> the model's records ---------------------------------------------------------


def _name_and_values(kind: EntityType, given: Any, kwargs: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """An update's entity name and settable values: a properties object's attributes or a mapping's
    entries, keyword arguments over them."""
    if isinstance(given, Mapping):
        name, values = given["name"], {k: given[k] for k in DEFAULTS[kind] if k in given}
    else:
        name, values = given.name, {k: getattr(given, k) for k in DEFAULTS[kind] if hasattr(given, k)}
    values.update(kwargs)
    return name, values


#: The SDK's `CorrelationRuleFilter` keywords by the model's field names (the SDK calls the subject `label`).
_CORRELATION_KEYWORDS = {"subject": "label"}


def model_filter(rule_filter: Any) -> RuleFilter:
    """The model's record of an SDK rule filter (None: the service's default, true)."""
    if rule_filter is None or isinstance(rule_filter, TrueRuleFilter):
        return TrueFilter()
    if isinstance(rule_filter, FalseRuleFilter):
        return FalseFilter()
    if isinstance(rule_filter, CorrelationRuleFilter):
        fields = {f: getattr(rule_filter, _CORRELATION_KEYWORDS.get(f, f)) for f in CORRELATION_FIELDS}
        return CorrelationFilter(**fields, properties=dict(rule_filter.properties or {}) or None)
    if isinstance(rule_filter, SqlRuleFilter):
        return SqlFilter(rule_filter.sql_expression or "", dict(rule_filter.parameters or {}) or None)
    raise TypeError(f"unsupported rule filter {type(rule_filter).__name__}")


def model_action(action: Any) -> SqlAction | None:
    """The model's record of an SDK rule action (None and EmptyRuleAction: none)."""
    if not isinstance(action, SqlRuleAction) or not action.sql_expression:
        return None
    return SqlAction(action.sql_expression, dict(action.parameters or {}) or None)


def sdk_filter(rule_filter: RuleFilter) -> Any:
    match rule_filter:
        case TrueFilter():
            return TrueRuleFilter()
        case FalseFilter():
            return FalseRuleFilter()
        case SqlFilter():
            return SqlRuleFilter(rule_filter.expression, dict(rule_filter.parameters or {}) or None)
        case CorrelationFilter():
            fields = {_CORRELATION_KEYWORDS.get(f, f): getattr(rule_filter, f) for f in CORRELATION_FIELDS}
            return CorrelationRuleFilter(**fields, properties=dict(rule_filter.properties or {}))
    raise TypeError(f"unsupported rule filter {type(rule_filter).__name__}")


def sdk_rule(rule: Rule) -> RuleProperties:
    action = (
        None
        if rule.action is None
        else SqlRuleAction(rule.action.expression, dict(rule.action.parameters or {}) or None)
    )
    created = None if rule.created_at is None else to_datetime(rule.created_at)
    return RuleProperties(rule.name, filter=sdk_filter(rule.filter), action=action, created_at_utc=created)


def _counts(runtime: model.RuntimeProperties) -> Any:
    return sdk.message_count_details(
        runtime.active_message_count, runtime.dead_letter_message_count, runtime.scheduled_message_count
    )


def _instants(runtime: model.RuntimeProperties) -> dict[str, Any]:
    return {
        "created_at": runtime.created_at_utc,
        "updated_at": runtime.updated_at_utc,
        "accessed_at": runtime.accessed_at_utc,
    }


def queue_runtime(runtime: model.RuntimeProperties) -> QueueRuntimeProperties:
    return sdk.queue_runtime_properties(
        runtime.name,
        message_count=runtime.total_message_count,
        message_count_details=_counts(runtime),
        size_in_bytes=runtime.size_in_bytes,
        **_instants(runtime),
    )


def topic_runtime(runtime: model.RuntimeProperties) -> TopicRuntimeProperties:
    return sdk.topic_runtime_properties(
        runtime.name,
        size_in_bytes=runtime.size_in_bytes,
        subscription_count=runtime.subscription_count,
        message_count_details=_counts(runtime),
        sql_filter_count=runtime.sql_filter_count,
        correlation_filter_count=runtime.correlation_filter_count,
        **_instants(runtime),
    )


def subscription_runtime(runtime: model.RuntimeProperties) -> SubscriptionRuntimeProperties:
    return sdk.subscription_runtime_properties(
        runtime.name,
        message_count=runtime.total_message_count,
        message_count_details=_counts(runtime),
        **_instants(runtime),
    )


def _queue(properties: model.EntityProperties) -> QueueProperties:
    return QueueProperties(properties.name, **properties.values)


def _topic(properties: model.EntityProperties) -> TopicProperties:
    return TopicProperties(properties.name, **properties.values)


def _subscription(properties: model.EntityProperties) -> SubscriptionProperties:
    return SubscriptionProperties(properties.name, **properties.values)


class AdminOperations:
    """The admin client's operations on one namespace of a world: the model's operations
    (`pairedbus.servicebus.admin`) with the SDK's argument shapes in and its model classes out.
    The fake clients (sync and aio) share it."""

    def __init__(self, world: ServiceBusWorld, fully_qualified_namespace: str) -> None:
        self._world = world
        self._ops = model.AdminOperations(world, fully_qualified_namespace)
        self.fully_qualified_namespace = self._ops.fully_qualified_namespace

    # --- queues -------------------------------------------------------------------------------

    def get_queue(self, queue_name: str, **kwargs: Any) -> QueueProperties:
        return _queue(self._ops.get_queue(queue_name))

    def get_queue_runtime_properties(self, queue_name: str, **kwargs: Any) -> QueueRuntimeProperties:
        return queue_runtime(self._ops.get_queue_runtime_properties(queue_name))

    def create_queue(self, queue_name: str, **kwargs: Any) -> QueueProperties:
        return _queue(self._ops.create_queue(queue_name, kwargs))

    def update_queue(self, queue: QueueProperties | Mapping[str, Any], **kwargs: Any) -> None:
        self._ops.update_queue(*_name_and_values(EntityType.QUEUE, queue, kwargs))

    def delete_queue(self, queue_name: str, **kwargs: Any) -> None:
        self._ops.delete_queue(queue_name)

    def list_queues_now(self) -> list[QueueProperties]:
        return [_queue(q) for q in self._ops.list_queues()]

    def list_queues_runtime_now(self) -> list[QueueRuntimeProperties]:
        return [queue_runtime(q) for q in self._ops.list_queues_runtime_properties()]

    # --- topics -------------------------------------------------------------------------------

    def get_topic(self, topic_name: str, **kwargs: Any) -> TopicProperties:
        return _topic(self._ops.get_topic(topic_name))

    def get_topic_runtime_properties(self, topic_name: str, **kwargs: Any) -> TopicRuntimeProperties:
        return topic_runtime(self._ops.get_topic_runtime_properties(topic_name))

    def create_topic(self, topic_name: str, **kwargs: Any) -> TopicProperties:
        return _topic(self._ops.create_topic(topic_name, kwargs))

    def update_topic(self, topic: TopicProperties | Mapping[str, Any], **kwargs: Any) -> None:
        self._ops.update_topic(*_name_and_values(EntityType.TOPIC, topic, kwargs))

    def delete_topic(self, topic_name: str, **kwargs: Any) -> None:
        self._ops.delete_topic(topic_name)

    def list_topics_now(self) -> list[TopicProperties]:
        return [_topic(t) for t in self._ops.list_topics()]

    def list_topics_runtime_now(self) -> list[TopicRuntimeProperties]:
        return [topic_runtime(t) for t in self._ops.list_topics_runtime_properties()]

    # --- subscriptions ------------------------------------------------------------------------

    def get_subscription(self, topic_name: str, subscription_name: str, **kwargs: Any) -> SubscriptionProperties:
        return _subscription(self._ops.get_subscription(topic_name, subscription_name))

    def get_subscription_runtime_properties(
        self, topic_name: str, subscription_name: str, **kwargs: Any
    ) -> SubscriptionRuntimeProperties:
        return subscription_runtime(self._ops.get_subscription_runtime_properties(topic_name, subscription_name))

    def create_subscription(self, topic_name: str, subscription_name: str, **kwargs: Any) -> SubscriptionProperties:
        default_rule = kwargs.get("default_rule")
        rule = (
            None
            if default_rule is None
            else Rule(default_rule.name, model_filter(default_rule.filter), model_action(default_rule.action))
        )
        return _subscription(self._ops.create_subscription(topic_name, subscription_name, kwargs, default_rule=rule))

    def update_subscription(
        self, topic_name: str, subscription: SubscriptionProperties | Mapping[str, Any], **kwargs: Any
    ) -> None:
        self._ops.update_subscription(topic_name, *_name_and_values(EntityType.SUBSCRIPTION, subscription, kwargs))

    def delete_subscription(self, topic_name: str, subscription_name: str, **kwargs: Any) -> None:
        self._ops.delete_subscription(topic_name, subscription_name)

    def list_subscriptions_now(self, topic_name: str) -> list[SubscriptionProperties]:
        return [_subscription(s) for s in self._ops.list_subscriptions(topic_name)]

    def list_subscriptions_runtime_now(self, topic_name: str) -> list[SubscriptionRuntimeProperties]:
        return [subscription_runtime(s) for s in self._ops.list_subscriptions_runtime_properties(topic_name)]

    # --- rules --------------------------------------------------------------------------------

    def get_rule(self, topic_name: str, subscription_name: str, rule_name: str, **kwargs: Any) -> RuleProperties:
        return sdk_rule(self._ops.get_rule(topic_name, subscription_name, rule_name))

    def create_rule(self, topic_name: str, subscription_name: str, rule_name: str, **kwargs: Any) -> RuleProperties:
        rule = self._ops.create_rule(
            topic_name,
            subscription_name,
            rule_name,
            model_filter(kwargs.get("filter")),
            model_action(kwargs.get("action")),
        )
        return sdk_rule(rule)

    def update_rule(
        self, topic_name: str, subscription_name: str, rule: RuleProperties | Mapping[str, Any], **kwargs: Any
    ) -> None:
        if isinstance(rule, Mapping):
            name, rule_filter, action = rule["name"], rule.get("filter"), rule.get("action")
        else:
            name, rule_filter, action = rule.name, rule.filter, rule.action
        rule_filter = kwargs.get("filter") or rule_filter
        action = kwargs.get("action") or action
        self._ops.update_rule(topic_name, subscription_name, name, model_filter(rule_filter), model_action(action))

    def delete_rule(self, topic_name: str, subscription_name: str, rule_name: str, **kwargs: Any) -> None:
        self._ops.delete_rule(topic_name, subscription_name, rule_name)

    def list_rules_now(self, topic_name: str, subscription_name: str) -> list[RuleProperties]:
        return [sdk_rule(r) for r in self._ops.list_rules(topic_name, subscription_name)]

    def get_namespace_properties(self, **kwargs: Any) -> NamespaceProperties:
        ns = self._ops.get_namespace_properties()
        return NamespaceProperties(
            ns.name,
            alias=None,
            created_at_utc=None,
            messaging_sku=MessagingSku.PREMIUM if ns.sku == contract.SKU_PREMIUM else MessagingSku.STANDARD,
            messaging_units=ns.messaging_units,
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
