# ruff: noqa: ASYNC109 - the signatures mirror the SDK, whose coroutines take `timeout=`
"""The fake ServiceBusSender (aio) and its sync twin."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from azure.servicebus.exceptions import MessageNotFoundError, MessageSizeExceededError, ServiceBusError

from pairedbus.testing.clock import to_seconds
from pairedbus.testing.entities import SendableEntity
from pairedbus.testing.handler import ClientLike, _Handler, run, sync_operation
from pairedbus.testing.messages import Content, FakeMessageBatch, iter_contents, size_within

#: The encoded overhead the SDK adds per message in a batch.
_BATCH_OVERHEAD = 8


class ServiceBusSender(_Handler):
    def __init__(self, client: ClientLike, entity_name: str, **kwargs: Any) -> None:
        super().__init__(client, entity_name, (entity_name,))

    _cached: SendableEntity | None = None

    def _entity(self) -> SendableEntity:
        cached = self._cached
        if cached is not None and cached.alive:
            return cached
        self._cached = entity = self._world.resolve(self.fully_qualified_namespace).sendable(self._entity_name)
        return entity

    def _contents(self, message: Any) -> list[Content]:
        contents = list(iter_contents(message))
        limit = self._world.resolve(self.fully_qualified_namespace).max_message_size_in_bytes
        if isinstance(message, FakeMessageBatch):
            return contents
        if len(contents) == 1 and not isinstance(message, (list, tuple)):
            if not size_within(contents[0], limit):
                raise MessageSizeExceededError(
                    message=f"The received message (size {contents[0].size} bytes) exceeds the limit ({limit} bytes) "
                    "currently allowed on the link."
                )
            return contents
        total = sum(c.size + _BATCH_OVERHEAD for c in contents)
        if total > limit:
            raise MessageSizeExceededError(message=f"ServiceBusMessageBatch has reached its size limit: {limit}")
        return contents

    async def send_messages(self, message: Any, *, timeout: float | None = None, **kwargs: Any) -> None:
        self._check_live()
        if timeout is not None and timeout <= 0:
            raise ValueError("The timeout must be greater than 0.")
        contents = self._contents(message)
        if not contents:
            return
        await self._operation("send", timeout, nbytes=self._wire_bytes(contents))
        entity = self._entity()
        _check_sessions(entity, contents)
        entity.accept(contents, self._world.clock.time())
        self._world.after_send(self.fully_qualified_namespace, self._entity_name)

    async def schedule_messages(
        self, messages: Any, schedule_time_utc: datetime, *, timeout: float | None = None, **kwargs: Any
    ) -> list[int]:
        self._check_live()
        due = to_seconds(schedule_time_utc)
        contents = []
        for content in self._contents(messages):
            content = content.copy() if content.scheduled != due else content
            content.scheduled = due
            contents.append(content)
        if not contents:
            return []
        await self._operation("schedule", timeout, nbytes=self._wire_bytes(contents))
        entity = self._entity()
        _check_sessions(entity, contents)
        numbers = entity.accept(contents, self._world.clock.time())
        entity.counts.schedules += len(numbers)
        self._world.after_send(self.fully_qualified_namespace, self._entity_name)
        return numbers

    async def cancel_scheduled_messages(
        self, sequence_numbers: int | list[int], *, timeout: float | None = None, **kwargs: Any
    ) -> None:
        self._check_live()
        numbers = [sequence_numbers] if isinstance(sequence_numbers, int) else list(sequence_numbers)
        await self._operation("cancel_scheduled", timeout)
        entity = self._entity()
        missing = [n for n in numbers if not _is_scheduled(entity, n)]
        if missing:
            raise MessageNotFoundError(
                message=f"The scheduled message with sequence number {missing[0]} was not found."
            )
        entity.cancel_scheduled(numbers)

    async def create_message_batch(self, max_size_in_bytes: int | None = None) -> FakeMessageBatch:
        self._check_live()
        limit = self._world.resolve(self.fully_qualified_namespace).max_message_size_in_bytes
        if max_size_in_bytes and max_size_in_bytes > limit:
            raise ValueError(
                f"Max message size: {max_size_in_bytes} is too large, acceptable max batch size is: {limit} bytes."
            )
        return FakeMessageBatch(max_size_in_bytes or limit)

    def __str__(self) -> str:
        return f"Sender client id: {self.client_identifier}, entity: {self._entity_name}"


def _is_scheduled(entity: SendableEntity, sequence_number: int) -> bool:
    subs = getattr(entity, "subscriptions", None)
    stores = [s.store for s in subs.values()] if subs is not None else [entity.store]  # type: ignore[attr-defined]
    return any(sequence_number in s.scheduled for s in stores)


def _check_sessions(entity: SendableEntity, contents: list[Content]) -> None:
    for c in contents:
        if c.partition_key is not None and c.session_id is not None and c.partition_key != c.session_id:
            raise ServiceBusError(
                f"The PartitionKey '{c.partition_key}' of the message must match its SessionId '{c.session_id}'."
            )
    if getattr(entity, "store", None) is not None and entity.settings.requires_session:
        if any(c.session_id is None for c in contents):
            raise ServiceBusError(
                "The SessionId was not set on a message, and it cannot be sent to the entity. Entities that have "
                "session support enabled can only receive messages that have the SessionId set to a valid value."
            )


class SyncServiceBusSender(ServiceBusSender):
    async def _operation(self, name: str, timeout: float | None = None, *, nbytes: int = 0) -> None:
        sync_operation(self, name, nbytes=nbytes)

    def send_messages(self, message: Any, *, timeout: float | None = None, **kwargs: Any) -> None:  # type: ignore[override]
        return run(super().send_messages(message, timeout=timeout, **kwargs))

    def schedule_messages(self, messages: Any, schedule_time_utc: datetime, **kwargs: Any) -> list[int]:  # type: ignore[override]
        return run(super().schedule_messages(messages, schedule_time_utc, **kwargs))

    def cancel_scheduled_messages(self, sequence_numbers: int | list[int], **kwargs: Any) -> None:  # type: ignore[override]
        return run(super().cancel_scheduled_messages(sequence_numbers, **kwargs))

    def create_message_batch(self, max_size_in_bytes: int | None = None) -> Any:  # type: ignore[override]
        return run(super().create_message_batch(max_size_in_bytes))

    def close(self) -> None:  # type: ignore[override]
        run(super().close())

    def __enter__(self) -> SyncServiceBusSender:
        self._check_live()
        return self

    def __exit__(self, *args: Any) -> None:
        self.close()
