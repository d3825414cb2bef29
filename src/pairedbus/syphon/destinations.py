"""Senders to the destination queues and topics in the primary namespace, and batching."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

from azure.servicebus import ServiceBusMessage
from azure.servicebus.exceptions import MessageSizeExceededError, MessagingEntityNotFoundError, ServiceBusError

from pairedbus import sdk

T = TypeVar("T")


def batch_key(message: ServiceBusMessage) -> Any:
    """Messages sharing a batch must share the partition key a partitioned entity routes by (the
    session id, else the partition key). Read off the AMQP sections: the SDK's properties decode
    through exceptions, a measurable cost per message."""
    raw = message.raw_amqp_message
    properties = raw.properties
    session_id = properties.group_id if properties is not None else None
    if session_id:
        return session_id
    annotations = raw.annotations
    return annotations.get(sdk.ANNOTATION_PARTITION_KEY) if annotations else None


class Destinations:
    """One sender per destination on the primary's client, created on first use, closed at exit.

    A parked message records only the destination's name. Over AMQP a queue and a topic are both
    addressed by that name, so a queue sender reaches either on the real service; a destination the
    service reports as not found through a queue sender is tried once as a topic before it counts
    as missing.
    """

    def __init__(self, client: Any) -> None:
        self._client = client
        self._senders: dict[str, Any] = {}
        self._topics: set[str] = set()

    def sender(self, destination: str) -> Any:
        sender = self._senders.get(destination)
        if sender is None:
            if destination in self._topics:
                sender = self._client.get_topic_sender(destination)
            else:
                sender = self._client.get_queue_sender(destination)
            self._senders[destination] = sender
        return sender

    async def forget(self, destination: str) -> None:
        sender = self._senders.pop(destination, None)
        if sender is not None:
            try:
                await sender.close()
            except (ServiceBusError, ValueError):
                pass  # already shut down with its error

    async def send(self, destination: str, batch: Any) -> None:
        """Send one batch (or one message); returns once the broker acknowledged it."""
        await self._on_sender(destination, lambda sender: sender.send_messages(batch))

    async def _on_sender(self, destination: str, operation: Callable[[Any], Awaitable[T]]) -> T:
        try:
            return await operation(self.sender(destination))
        except MessageSizeExceededError:
            raise
        except ValueError:
            # "The handler has already been shutdown": make a fresh sender next time.
            await self.forget(destination)
            raise
        except MessagingEntityNotFoundError:
            await self.forget(destination)
            if destination in self._topics:
                raise
            self._topics.add(destination)
            try:
                return await operation(self.sender(destination))
            except MessagingEntityNotFoundError:
                self._topics.discard(destination)
                await self.forget(destination)
                raise

    async def batches(self, destination: str, messages: list[Any]) -> list[tuple[Any, list[int]]]:
        """Pack `messages` (in order) into as few sendable units as fit; each unit is a
        ServiceBusMessageBatch, or a lone message that did not fit an empty batch (it may still fit
        the entity's larger single-message limit on Premium). Returns (unit, message indexes)."""
        units: list[tuple[Any, list[int]]] = []
        for key_indexes in _by_key(messages):
            batch = await self._on_sender(destination, lambda sender: sender.create_message_batch())
            members: list[int] = []
            for index in key_indexes:
                try:
                    batch.add_message(messages[index])
                    members.append(index)
                    continue
                except MessageSizeExceededError:
                    pass
                if members:
                    units.append((batch, members))
                    batch = await self._on_sender(destination, lambda sender: sender.create_message_batch())
                    members = []
                    try:
                        batch.add_message(messages[index])
                        members.append(index)
                        continue
                    except MessageSizeExceededError:
                        pass
                units.append((messages[index], [index]))
            if members:
                units.append((batch, members))
        return units

    async def close(self) -> None:
        for destination in list(self._senders):
            await self.forget(destination)


def _by_key(messages: list[Any]) -> Iterator[list[int]]:
    groups: dict[Any, list[int]] = {}
    for index, message in enumerate(messages):
        groups.setdefault(batch_key(message), []).append(index)
    yield from groups.values()
