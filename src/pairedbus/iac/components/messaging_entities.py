"""The queues, topics and subscriptions of the primary namespace."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
from pulumi_azure_native import servicebus

from pairedbus import contract
from pairedbus.iac.config import QueueConfig, StackConfig, SubscriptionConfig, TopicConfig


@dataclass(frozen=True)
class MessagingEntitiesArgs:
    config: StackConfig
    primary: servicebus.Namespace
    primary_resource_group_name: pulumi.Input[str]


class MessagingEntities(pulumi.ComponentResource):
    """Partitioned by default; entities paired senders write to get duplicate detection, so a
    message the syphon moves twice (a crash between send and complete) is dropped once."""

    queues: dict[str, servicebus.Queue]
    topics: dict[str, servicebus.Topic]
    subscriptions: list[servicebus.Subscription]

    def __init__(self, name: str, args: MessagingEntitiesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(contract.TYPE_MESSAGING_ENTITIES, name, None, opts)
        self._args = args
        self._options = pulumi.ResourceOptions(parent=self, protect=args.config.production)
        config = args.config
        # Forwarding targets first, so a queue that forwards depends on the entity it names.
        self.topics = {t.name.lower(): self._topic(t) for t in config.topics}
        self.queues = {}
        pending = {q.name.lower(): q for q in config.queues}
        while pending:  # the config model rejects forwarding cycles, so this terminates
            ready = [q for q in pending.values() if (q.forward_to or "").lower() not in pending]
            for queue in ready:
                self.queues[queue.name.lower()] = self._queue(queue)
                del pending[queue.name.lower()]
        self.subscriptions = [self._subscription(t, s) for t in config.topics for s in t.subscriptions]
        self.register_outputs(
            {
                "queues": [q.name for q in config.queues],
                "topics": [t.name for t in config.topics],
                "subscriptions": [f"{t.name}/{s.name}" for t in config.topics for s in t.subscriptions],
            }
        )

    def _entity(self, name: str | None) -> list[pulumi.Resource]:
        if name is None:
            return []
        target = self.queues.get(name.lower()) or self.topics.get(name.lower())
        return [target] if target is not None else []

    def _opts(self, forward_to: str | None = None) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions.merge(self._options, pulumi.ResourceOptions(depends_on=self._entity(forward_to)))

    def _queue(self, queue: QueueConfig) -> servicebus.Queue:
        return servicebus.Queue(
            f"queue-{queue.name}",
            queue_name=queue.name,
            namespace_name=self._args.primary.name,
            resource_group_name=self._args.primary_resource_group_name,
            max_size_in_megabytes=queue.max_size_in_megabytes,
            enable_partitioning=queue.enable_partitioning,
            requires_session=queue.requires_session,
            requires_duplicate_detection=queue.duplicate_detection,
            duplicate_detection_history_time_window=queue.duplicate_detection_history_time_window,
            lock_duration=queue.lock_duration,
            max_delivery_count=queue.max_delivery_count,
            default_message_time_to_live=queue.default_message_time_to_live,
            dead_lettering_on_message_expiration=queue.dead_lettering_on_message_expiration,
            forward_to=queue.forward_to,
            opts=self._opts(queue.forward_to),
        )

    def _topic(self, topic: TopicConfig) -> servicebus.Topic:
        return servicebus.Topic(
            f"topic-{topic.name}",
            topic_name=topic.name,
            namespace_name=self._args.primary.name,
            resource_group_name=self._args.primary_resource_group_name,
            max_size_in_megabytes=topic.max_size_in_megabytes,
            enable_partitioning=topic.enable_partitioning,
            requires_duplicate_detection=topic.duplicate_detection,
            duplicate_detection_history_time_window=topic.duplicate_detection_history_time_window,
            default_message_time_to_live=topic.default_message_time_to_live,
            opts=self._opts(),
        )

    def _subscription(self, topic: TopicConfig, sub: SubscriptionConfig) -> servicebus.Subscription:
        return servicebus.Subscription(
            f"subscription-{topic.name}-{sub.name}",
            subscription_name=sub.name,
            topic_name=self.topics[topic.name.lower()].name,
            namespace_name=self._args.primary.name,
            resource_group_name=self._args.primary_resource_group_name,
            requires_session=sub.requires_session,
            lock_duration=sub.lock_duration,
            max_delivery_count=sub.max_delivery_count,
            default_message_time_to_live=sub.default_message_time_to_live,
            dead_lettering_on_message_expiration=sub.dead_lettering_on_message_expiration,
            forward_to=sub.forward_to,
            opts=self._opts(sub.forward_to),
        )
