# ruff: noqa: ASYNC109 - the signatures mirror the SDK, whose coroutines take `timeout=`
"""The fake ServiceBusSender (aio) and its sync twin, on one core (`SenderCore`): the twins only
say how a call is made (awaited, or run to completion on the calling thread)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pairedbus.servicebus.clock import to_seconds
from pairedbus.servicebus.content import Content
from pairedbus.servicebus.entities import SendableEntity, check_sessions
from pairedbus.servicebus.errors import message_too_large, scheduled_message_not_found
from pairedbus.testing.content import size_within
from pairedbus.testing.errors import batch_full, raises_sdk_errors
from pairedbus.testing.handler import AsyncHandler, ClientLike, HandlerCore, SyncHandler, run
from pairedbus.testing.messages import FakeMessageBatch, iter_contents

#: The encoded overhead the SDK adds per message in a batch.
_BATCH_OVERHEAD = 8


class SenderCore(HandlerCore):
    """Sending, scheduling and cancelling, as coroutines both twins drive."""

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
                raise message_too_large(contents[0].size, limit)
            return contents
        total = sum(c.size + _BATCH_OVERHEAD for c in contents)
        if total > limit:
            raise batch_full(limit)
        return contents

    async def _send(self, message: Any, timeout: float | None) -> None:
        self._check_live()
        if timeout is not None and timeout <= 0:
            raise ValueError("The timeout must be greater than 0.")
        contents = self._contents(message)
        if not contents:
            return
        await self._operation("send", timeout, nbytes=self._wire_bytes(contents))
        entity = self._entity()
        check_sessions(entity, contents)
        entity.accept(contents, self._world.clock.time())
        self._world.after_send(self.fully_qualified_namespace, self._entity_name)

    async def _schedule(self, messages: Any, schedule_time_utc: datetime, timeout: float | None) -> list[int]:
        self._check_live()
        due = to_seconds(schedule_time_utc)
        contents = []
        for content in self._contents(messages):
            contents.append(content if content.scheduled == due else content._replace(scheduled=due))
        if not contents:
            return []
        await self._operation("schedule", timeout, nbytes=self._wire_bytes(contents))
        entity = self._entity()
        check_sessions(entity, contents)
        numbers = entity.accept(contents, self._world.clock.time())
        entity.counts.schedules += len(numbers)
        self._world.after_send(self.fully_qualified_namespace, self._entity_name)
        return numbers

    async def _cancel_scheduled(self, sequence_numbers: int | list[int], timeout: float | None) -> None:
        self._check_live()
        numbers = [sequence_numbers] if isinstance(sequence_numbers, int) else list(sequence_numbers)
        await self._operation("cancel_scheduled", timeout)
        entity = self._entity()
        missing = [n for n in numbers if not entity.is_scheduled(n)]
        if missing:
            raise scheduled_message_not_found(missing[0])
        entity.cancel_scheduled(numbers)

    def _new_batch(self, max_size_in_bytes: int | None) -> FakeMessageBatch:
        self._check_live()
        limit = self._world.resolve(self.fully_qualified_namespace).max_message_size_in_bytes
        if max_size_in_bytes and max_size_in_bytes > limit:
            raise ValueError(
                f"Max message size: {max_size_in_bytes} is too large, acceptable max batch size is: {limit} bytes."
            )
        return FakeMessageBatch(max_size_in_bytes or limit)

    def __str__(self) -> str:
        return f"Sender client id: {self.client_identifier}, entity: {self._entity_name}"


@raises_sdk_errors
class ServiceBusSender(SenderCore, AsyncHandler):
    """Fake `azure.servicebus.aio.ServiceBusSender`."""

    async def send_messages(self, message: Any, *, timeout: float | None = None, **kwargs: Any) -> None:
        await self._send(message, timeout)

    async def schedule_messages(
        self, messages: Any, schedule_time_utc: datetime, *, timeout: float | None = None, **kwargs: Any
    ) -> list[int]:
        return await self._schedule(messages, schedule_time_utc, timeout)

    async def cancel_scheduled_messages(
        self, sequence_numbers: int | list[int], *, timeout: float | None = None, **kwargs: Any
    ) -> None:
        await self._cancel_scheduled(sequence_numbers, timeout)

    async def create_message_batch(self, max_size_in_bytes: int | None = None) -> FakeMessageBatch:
        return self._new_batch(max_size_in_bytes)


@raises_sdk_errors
class SyncServiceBusSender(SenderCore, SyncHandler):
    """Fake `azure.servicebus.ServiceBusSender`."""

    def send_messages(self, message: Any, *, timeout: float | None = None, **kwargs: Any) -> None:
        run(self._send(message, timeout))

    def schedule_messages(
        self, messages: Any, schedule_time_utc: datetime, *, timeout: float | None = None, **kwargs: Any
    ) -> list[int]:
        return run(self._schedule(messages, schedule_time_utc, timeout))

    def cancel_scheduled_messages(
        self, sequence_numbers: int | list[int], *, timeout: float | None = None, **kwargs: Any
    ) -> None:
        run(self._cancel_scheduled(sequence_numbers, timeout))

    def create_message_batch(self, max_size_in_bytes: int | None = None) -> FakeMessageBatch:
        return self._new_batch(max_size_in_bytes)
