"""The queues, topics and subscriptions of the primary namespace.

No `from __future__ import annotations`: Pulumi's component analyzer reads the annotations as live types.
"""

from typing import NotRequired, TypedDict

import pulumi
from pulumi_azure_native import servicebus

from pairedbus import contract
from pairedbus.iac.components.args import ENTITY_DEFAULTS, QueueSettings, SubscriptionSettings, TopicSettings
from pairedbus.iac.components.options import Inherited, renamed_from, with_part_token


class MessagingEntitiesArgs(TypedDict):
    """The entities senders and receivers use, in the primary namespace."""

    namespace_name: pulumi.Input[str]
    """The primary namespace's name."""
    resource_group_name: pulumi.Input[str]
    """The primary namespace's resource group."""
    queues: NotRequired[list[QueueSettings]]
    """The queues."""
    topics: NotRequired[list[TopicSettings]]
    """The topics, each with its subscriptions."""
    production: NotRequired[bool]
    """Production: also protect every entity from deletion (adds to the `protect` resource option)."""


def _duplicate_detection(entity: QueueSettings | TopicSettings) -> bool:
    """On unless said otherwise for entities paired senders write to (a repeated syphon move is dropped)."""
    explicit = entity.get("requires_duplicate_detection")
    return entity.get("paired", ENTITY_DEFAULTS["paired"]) if explicit is None else explicit


class MessagingEntities(pulumi.ComponentResource):
    """Partitioned by default; entities paired senders write to get duplicate detection, so a
    message the syphon moves twice (a crash between send and complete) is dropped once."""

    queue_ids: pulumi.Output[dict[str, str]]
    """ARM id of each queue, by queue name."""
    topic_ids: pulumi.Output[dict[str, str]]
    """ARM id of each topic, by topic name."""
    subscription_ids: pulumi.Output[dict[str, str]]
    """ARM id of each subscription, by `topic/subscription`."""

    def __init__(
        self,
        name: str,
        args: MessagingEntitiesArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        legacy_urns: bool = False,
    ) -> None:
        """`legacy_urns`: the children keep the URNs of pairedbus before 0.2 (see `PairedNamespace`)."""
        super().__init__(
            contract.TYPE_MESSAGING_ENTITIES, name, None, with_part_token(contract.TYPE_MESSAGING_ENTITIES, opts)
        )
        self._name = name
        self._legacy_urns = legacy_urns
        self._args = args
        self._inherited = Inherited.of(opts)
        self._production = bool(args.get("production", False))
        queues: list[QueueSettings] = list(args.get("queues") or [])
        topics: list[TopicSettings] = list(args.get("topics") or [])
        pairs = _subscription_pairs(topics)
        # Forwarding targets first, so a queue that forwards depends on the entity it names.
        self.topics: dict[str, servicebus.Topic] = {t["name"].lower(): self._topic(t) for t in topics}
        self.queues: dict[str, servicebus.Queue] = {}
        for queue in _in_forwarding_order(queues):
            self.queues[queue["name"].lower()] = self._queue(queue)
        self.subscriptions: list[servicebus.Subscription] = [self._subscription(t, s) for t, s in pairs]
        self.queue_ids = pulumi.Output.from_input({q["name"]: self.queues[q["name"].lower()].id for q in queues})
        self.topic_ids = pulumi.Output.from_input({t["name"]: self.topics[t["name"].lower()].id for t in topics})
        self.subscription_ids = pulumi.Output.from_input(
            {f"{t['name']}/{s['name']}": sub.id for (t, s), sub in zip(pairs, self.subscriptions, strict=True)}
        )
        self.register_outputs(
            {
                "queues": [q["name"] for q in queues],
                "topics": [t["name"] for t in topics],
                "subscriptions": [f"{t['name']}/{s['name']}" for t, s in pairs],
            }
        )

    def _entity(self, name: str | None) -> list[pulumi.Resource]:
        if name is None:
            return []
        target = self.queues.get(name.lower()) or self.topics.get(name.lower())
        return [target] if target is not None else []

    def _opts(self, old_name: str, forward_to: str | None = None) -> pulumi.ResourceOptions:
        """Named `<entities>-<old_name>` now, aliased to `old_name` (its name before 0.2)."""
        return self._inherited.child(
            self,
            protect=self._production,
            depends_on=self._entity(forward_to),
            aliases=renamed_from(old_name, self._legacy_urns),
        )

    def _queue(self, queue: QueueSettings) -> servicebus.Queue:
        return servicebus.Queue(
            f"{self._name}-queue-{queue['name']}",
            queue_name=queue["name"],
            namespace_name=self._args["namespace_name"],
            resource_group_name=self._args["resource_group_name"],
            max_size_in_megabytes=queue.get("max_size_in_megabytes", ENTITY_DEFAULTS["max_size_in_megabytes"]),
            enable_partitioning=queue.get("enable_partitioning", ENTITY_DEFAULTS["enable_partitioning"]),
            requires_session=queue.get("requires_session", ENTITY_DEFAULTS["requires_session"]),
            requires_duplicate_detection=_duplicate_detection(queue),
            duplicate_detection_history_time_window=queue.get("duplicate_detection_history_time_window"),
            lock_duration=queue.get("lock_duration"),
            max_delivery_count=queue.get("max_delivery_count"),
            default_message_time_to_live=queue.get("default_message_time_to_live"),
            dead_lettering_on_message_expiration=queue.get("dead_lettering_on_message_expiration"),
            auto_delete_on_idle=queue.get("auto_delete_on_idle"),
            forward_to=queue.get("forward_to"),
            opts=self._opts(f"queue-{queue['name']}", queue.get("forward_to")),
        )

    def _topic(self, topic: TopicSettings) -> servicebus.Topic:
        return servicebus.Topic(
            f"{self._name}-topic-{topic['name']}",
            topic_name=topic["name"],
            namespace_name=self._args["namespace_name"],
            resource_group_name=self._args["resource_group_name"],
            max_size_in_megabytes=topic.get("max_size_in_megabytes", ENTITY_DEFAULTS["max_size_in_megabytes"]),
            enable_partitioning=topic.get("enable_partitioning", ENTITY_DEFAULTS["enable_partitioning"]),
            requires_duplicate_detection=_duplicate_detection(topic),
            duplicate_detection_history_time_window=topic.get("duplicate_detection_history_time_window"),
            default_message_time_to_live=topic.get("default_message_time_to_live"),
            auto_delete_on_idle=topic.get("auto_delete_on_idle"),
            opts=self._opts(f"topic-{topic['name']}"),
        )

    def _subscription(self, topic: TopicSettings, sub: SubscriptionSettings) -> servicebus.Subscription:
        return servicebus.Subscription(
            f"{self._name}-subscription-{topic['name']}-{sub['name']}",
            subscription_name=sub["name"],
            topic_name=self.topics[topic["name"].lower()].name,
            namespace_name=self._args["namespace_name"],
            resource_group_name=self._args["resource_group_name"],
            requires_session=sub.get("requires_session", ENTITY_DEFAULTS["requires_session"]),
            lock_duration=sub.get("lock_duration"),
            max_delivery_count=sub.get("max_delivery_count"),
            default_message_time_to_live=sub.get("default_message_time_to_live"),
            dead_lettering_on_message_expiration=sub.get("dead_lettering_on_message_expiration"),
            auto_delete_on_idle=sub.get("auto_delete_on_idle"),
            forward_to=sub.get("forward_to"),
            opts=self._opts(f"subscription-{topic['name']}-{sub['name']}", sub.get("forward_to")),
        )


def _subscription_pairs(topics: list[TopicSettings]) -> list[tuple[TopicSettings, SubscriptionSettings]]:
    """(topic, subscription) for every subscription, in the order of the settings."""
    return [(t, s) for t in topics for s in t.get("subscriptions") or []]


def _in_forwarding_order(queues: list[QueueSettings]) -> list[QueueSettings]:
    """The queues, each after the queue it forwards to (a topic target is created first anyway)."""
    ordered: list[QueueSettings] = []
    pending = {q["name"].lower(): q for q in queues}
    while pending:
        ready = [q for q in pending.values() if (q.get("forward_to") or "").lower() not in pending]
        if not ready:  # the config model reports this first; direct use of this component gets it here
            raise ValueError(f"queues.forwardTo: expected no forwarding cycle, got {', '.join(sorted(pending))}")
        for queue in ready:
            ordered.append(queue)
            del pending[queue["name"].lower()]
    return ordered
