"""`PairedSender`: the failover sender of one queue or topic (paired-namespaces.md).

What the caller sees:

- Healthy primary: the SDK sender's `send_messages`/`schedule_messages`, nothing added but a
  message id where one is missing and the SessionId/PartitionKey check.
- While the failover clock runs (retryable errors and timeouts, no success yet for less than
  `failover_interval`): the primary's error propagates, exactly as without pairing, and the
  caller retries as it would anyway. Nothing of that call was parked, so a retry cannot
  duplicate it in the backlog (the message id makes a repeat on the primary recognisable).
- The triggering error that finds the interval elapsed switches the entity: that same call is
  parked in the backlog and returns normally, and so do later calls until a ping succeeds.
- Errors that never fail over (size, entity not found, authorization) always reach the caller.
- While switched, `schedule_messages` parks the messages with their schedule aliased and
  returns an empty list: a parked message has no sequence number in the primary to cancel.
- A list or batch is parked whole when it fits one backlog batch. One that no longer fits once
  aliased is sent as several backlog batches; if a later one fails on every backlog queue, the
  earlier ones stay parked and the error reaches the caller. A retry parks them again under the
  same message ids, and the destination's duplicate detection drops the second copy.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from azure.servicebus import ServiceBusMessage, ServiceBusMessageBatch
from azure.servicebus.exceptions import MessageSizeExceededError

from pairedbus import contract
from pairedbus.aliasing import ParkedMessageTooLargeError, encoded_size, park_message
from pairedbus.sender.availability import EntityAvailability
from pairedbus.sender.errors import starts_failover_clock
from pairedbus.sender.outbound import prepare, prepare_all

if TYPE_CHECKING:
    from pairedbus.sender.client import PairedNamespaceClient

MessageInput = ServiceBusMessage | list[ServiceBusMessage] | ServiceBusMessageBatch


class _IdAssigningBatch(ServiceBusMessageBatch):
    """A batch made by `PairedSender.create_message_batch`: ids are assigned as messages are
    added, before they are encoded into the batch."""

    def add_message(self, message: Any) -> None:
        prepare(message)
        super().add_message(message)


class PairedSender:
    """Send to a primary queue or topic, failing over to the backlog. Async context manager."""

    def __init__(
        self,
        client: PairedNamespaceClient,
        availability: EntityAvailability,
        primary_sender: Any,
        backlog_queue: str,
    ) -> None:
        self._client = client
        self._availability = availability
        self._primary = primary_sender
        #: The backlog queue this sender picked at random when created (re-picked if it leaves
        #: the rotation).
        self.backlog_queue = backlog_queue
        self._closed = False

    @property
    def entity_name(self) -> str:
        return self._availability.name

    @property
    def switched(self) -> bool:
        """Whether sends to this entity currently go to the backlog."""
        return self._availability.switched

    async def __aenter__(self) -> PairedSender:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._client._forget_sender(self)
            await self._primary.close()

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError(f"the sender for {self.entity_name!r} is closed")

    # --- sending ------------------------------------------------------------------------

    async def send_messages(self, message: MessageInput, *, timeout: float | None = None) -> None:  # noqa: ASYNC109 (the SDK's keyword)
        """Send a message, a list (one batch, as the SDK does) or a batch; see the module doc."""
        if self._closed:
            self._check_open()
        availability = self._availability
        if isinstance(message, ServiceBusMessage):
            # The common case in two attribute reads: an id and no session id (see `prepare`).
            properties = message._raw_amqp_message.properties
            if properties is None or properties.message_id is None or properties.group_id is not None:
                if prepare(message):
                    availability.requires_session = True
        elif isinstance(message, ServiceBusMessageBatch):
            message = self._with_ids(message)
            if not len(message):
                return
        else:
            message = list(message)
            if not message:
                return
            if prepare_all(message):
                availability.requires_session = True

        if not availability.switched:
            try:
                await self._primary.send_messages(message, timeout=timeout)
            except Exception as exc:
                if not (starts_failover_clock(exc) and self._client._fail_over_now(availability)):
                    raise
            else:
                if availability.failover_clock.failing_since is not None:
                    availability.failover_clock.record_success()
                return
        await self._park(_messages_of(message), timeout=timeout)

    async def schedule_messages(
        self,
        messages: ServiceBusMessage | list[ServiceBusMessage],
        schedule_time_utc: dt.datetime,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (the SDK's keyword, passed through)
    ) -> list[int]:
        """Schedule on the primary (its sequence numbers), or park with the schedule aliased ([])."""
        self._check_open()
        batch = [messages] if isinstance(messages, ServiceBusMessage) else list(messages)
        if not batch:
            return []
        if prepare_all(batch):
            self._availability.requires_session = True
        availability = self._availability
        if not availability.switched:
            try:
                numbers = await self._primary.schedule_messages(messages, schedule_time_utc, timeout=timeout)
            except Exception as exc:
                if not (starts_failover_clock(exc) and self._client._fail_over_now(availability)):
                    raise
            else:
                if availability.failover_clock.failing_since is not None:
                    availability.failover_clock.record_success()
                return list(numbers)
        for message in batch:
            message.scheduled_enqueue_time_utc = schedule_time_utc
        await self._park(batch, timeout=timeout)
        return []

    async def create_message_batch(self, max_size_in_bytes: int | None = None) -> ServiceBusMessageBatch:
        """A batch whose messages get their ids as they are added. Sized by the primary's link
        while it is healthy, by the 256 KB message limit while switched."""
        self._check_open()
        if self._availability.switched:
            return _IdAssigningBatch(max_size_in_bytes=max_size_in_bytes or contract.MAX_MESSAGE_SIZE_BYTES)
        template = await self._primary.create_message_batch(max_size_in_bytes)
        # Same transport as the primary's batches, so the SDK sends it as it is.
        return _IdAssigningBatch(max_size_in_bytes=template.max_size_in_bytes, **_transport_of(template))

    # --- the backlog --------------------------------------------------------------------

    def _with_ids(self, batch: ServiceBusMessageBatch) -> ServiceBusMessageBatch:
        """A batch whose messages all have ids: ids must be set before the messages are encoded,
        so a batch holding a message without one is rebuilt (rare: ours assign them on add)."""
        messages = _messages_of(batch)
        missing = any(
            m.raw_amqp_message.properties is None or m.raw_amqp_message.properties.message_id is None for m in messages
        )
        has_session = prepare_all(messages)  # assigns the missing ids
        if missing:
            rebuilt = ServiceBusMessageBatch(max_size_in_bytes=batch.max_size_in_bytes, **_transport_of(batch))
            for message in messages:
                rebuilt.add_message(message)  # a MessageSizeExceededError if the ids overflow it
            batch = rebuilt
        if has_session:
            self._availability.requires_session = True
        return batch

    async def _park(self, messages: list[ServiceBusMessage], *, timeout: float | None) -> None:  # noqa: ASYNC109
        """Alias every message and check every size before the first backlog send, then send in
        as few backlog batches as fit."""
        parked = [self._parked_copy(m) for m in messages]
        if len(parked) == 1:
            await self._send_to_backlog(parked[0], timeout=timeout)
        else:
            for batch in _pack(parked):
                await self._send_to_backlog(batch, timeout=timeout)
        self._client.stats.parked_messages += len(parked)

    def _parked_copy(self, message: ServiceBusMessage) -> ServiceBusMessage:
        parked = park_message(message, self.entity_name)
        size = encoded_size(parked)
        limit = contract.MAX_MESSAGE_SIZE_BYTES
        if size > limit:
            raise ParkedMessageTooLargeError(
                destination=self.entity_name, size=size, added=size - encoded_size(message), limit=limit
            )
        return parked

    async def _send_to_backlog(self, payload: Any, *, timeout: float | None) -> None:  # noqa: ASYNC109
        """Send to this sender's backlog queue; a failed queue leaves the rotation for the whole
        client and the payload goes to another; when every queue failed, the last error is raised."""
        rotation = self._client.rotation
        queue = self.backlog_queue
        if queue not in rotation:
            queue = self.backlog_queue = rotation.pick() or queue
        tried: set[str] = set()
        while True:
            try:
                await self._client._backlog_sender(queue).send_messages(payload, timeout=timeout)
                return
            except Exception as exc:
                if not starts_failover_clock(exc):
                    raise
                self._client.stats.backlog_send_failures += 1
                tried.add(queue)
                rotation.take_out(queue)
                following = rotation.pick(exclude=tried)
                if following is None:
                    raise
                queue = self.backlog_queue = following


def _messages_of(message: MessageInput) -> list[ServiceBusMessage]:
    if isinstance(message, ServiceBusMessage):
        return [message]
    if isinstance(message, ServiceBusMessageBatch):
        return list(message._messages)  # the SDK keeps the added messages here
    return message


def _transport_of(batch: Any) -> dict[str, Any]:
    transport = getattr(batch, "_amqp_transport", None)
    return {"amqp_transport": transport} if transport is not None else {}


def _pack(messages: list[ServiceBusMessage]) -> list[ServiceBusMessageBatch]:
    """Backlog batches of at most the message-size limit each (a batch that fitted the primary
    may not fit once every message carries its aliases)."""
    batches: list[ServiceBusMessageBatch] = []
    current: ServiceBusMessageBatch | None = None
    for message in messages:
        if current is not None:
            try:
                current.add_message(message)
                continue
            except MessageSizeExceededError:
                pass
        current = ServiceBusMessageBatch(max_size_in_bytes=contract.MAX_MESSAGE_SIZE_BYTES)
        current.add_message(message)  # fits: its size was checked when it was parked
        batches.append(current)
    return batches
