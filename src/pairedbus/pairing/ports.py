"""The runtime's ports: the members of azure-servicebus's aio classes it calls, and nothing more.

The syphon, the failover sender (`SenderClient`, `EntitySender`) and the restore they share are
written against these `Protocol`s, not against `Any` and not against the SDK's classes: the SDK's aio client, receiver, sender and received
message satisfy them, and so do the in-process fake's (`pairedbus.testing`) and whatever the wire
emulator's clients hand out, since those are the SDK's own. `tests/pairing/test_ports.py` checks
both sets of classes, statically (under the strict mypy run) and at run time.

A receiver settles only the messages it handed out: `Receiver` is generic in that message type
(`M`), so the real receiver is a `Receiver[ServiceBusReceivedMessage]` and the fake's a
`Receiver[FakeReceivedMessage]`, and the code that receives and settles carries `M` through.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol, TypeVar

from azure.servicebus import ServiceBusMessage, ServiceBusMessageBatch
from azure.servicebus.amqp import AmqpAnnotatedMessage, AmqpMessageBodyType

#: Application properties as the SDK types them (str or bytes keys), or as the fake does (bytes keys).
ApplicationProperties = Mapping[str | bytes, object] | Mapping[bytes, object]


class MessageBody(Protocol):
    """A message's body, as parking and restoring read it."""

    @property
    def body_type(self) -> AmqpMessageBodyType: ...

    @property
    def body(self) -> Any: ...  # the SDK's own type: bytes, a generator of data sections, a value or a sequence


class Restorable(MessageBody, Protocol):
    """What restoring a backlog message reads (`aliasing.restore_message`)."""

    @property
    def application_properties(self) -> ApplicationProperties | None: ...

    @property
    def message_id(self) -> str | None: ...

    @property
    def content_type(self) -> str | None: ...

    @property
    def correlation_id(self) -> str | None: ...

    @property
    def subject(self) -> str | None: ...

    @property
    def partition_key(self) -> str | None: ...

    @property
    def to(self) -> str | None: ...

    @property
    def reply_to(self) -> str | None: ...

    @property
    def reply_to_session_id(self) -> str | None: ...


class PeekedMessage(Protocol):
    """What a peek is read for: which message sits at a sequence number."""

    @property
    def sequence_number(self) -> int | None: ...


class ReceivedMessage(Restorable, PeekedMessage, Protocol):
    """A message received from a backlog queue (`ServiceBusReceivedMessage`)."""

    @property
    def enqueued_time_utc(self) -> datetime | None: ...

    @property
    def raw_amqp_message(self) -> AmqpAnnotatedMessage: ...


M = TypeVar("M", bound=ReceivedMessage)


class Receiver(Protocol[M]):
    """A peek-lock receiver on one backlog queue: receives, settles and renews the messages it hands out."""

    async def __aenter__(self) -> object: ...  # opens the link; the syphon does not use what it returns

    async def close(self) -> None: ...

    async def receive_messages(
        self, max_message_count: int | None = ..., max_wait_time: float | None = ...
    ) -> list[M]: ...

    # The SDK's timeouts (ASYNC109): each bounds the SDK's own retries of the call.
    async def peek_messages(
        self,
        max_message_count: int = ...,
        *,
        sequence_number: int = ...,
        timeout: float | None = ...,  # noqa: ASYNC109
    ) -> Sequence[PeekedMessage]: ...

    async def complete_message(self, message: M) -> None: ...

    async def abandon_message(self, message: M) -> None: ...

    async def dead_letter_message(
        self, message: M, reason: str | None = ..., error_description: str | None = ...
    ) -> None: ...

    async def renew_message_lock(self, message: M, *, timeout: float | None = ...) -> datetime: ...  # noqa: ASYNC109


class ReceiverSource(Protocol[M]):
    """Where a pump gets its receivers: the secondary's client (or `syphon.warm_receivers.WarmReceivers`)."""

    def get_queue_receiver(self, queue_name: str, *, prefetch_count: int = ...) -> Receiver[M]: ...


#: What a sender sends in one call: a message, a list of them (the SDK sends it as one batch) or a batch.
Outgoing = ServiceBusMessage | list[ServiceBusMessage] | ServiceBusMessageBatch


class Closable(Protocol):
    """An SDK handler (sender, receiver) or client: what is done with one that is discarded."""

    async def close(self) -> None: ...


class Sender(Closable, Protocol):
    """A sender to one destination: batches sized by its link, and sends."""

    async def create_message_batch(self, max_size_in_bytes: int | None = ...) -> ServiceBusMessageBatch: ...

    async def send_messages(
        self,
        message: Outgoing,
        *,
        timeout: float | None = ...,  # noqa: ASYNC109  (the SDK's: it bounds the SDK's own retries)
    ) -> None: ...


class EntitySender(Sender, Protocol):
    """The failover sender's handler on its primary queue or topic: a `Sender` that schedules too."""

    async def schedule_messages(
        self,
        messages: ServiceBusMessage | list[ServiceBusMessage],
        schedule_time_utc: datetime,
        *,
        timeout: float | None = ...,  # noqa: ASYNC109  (the SDK's, as above)
    ) -> list[int]: ...


class SenderSource(Protocol):
    """Where the syphon gets its senders: the primary's client."""

    def get_queue_sender(self, queue_name: str) -> Sender: ...

    def get_topic_sender(self, topic_name: str) -> Sender: ...


class SenderClient(Closable, Protocol):
    """The failover client's aio `ServiceBusClient` on one namespace: senders to the primary's entities
    and to the secondary's backlog queues, closed as one."""

    def get_queue_sender(self, queue_name: str) -> EntitySender: ...

    def get_topic_sender(self, topic_name: str) -> EntitySender: ...


class Client(ReceiverSource[M], SenderSource, Protocol[M]):
    """An aio `ServiceBusClient`: receivers and senders on one namespace's connection, closed as one."""

    async def close(self) -> None: ...
