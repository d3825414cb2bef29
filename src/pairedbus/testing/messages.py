"""What a receive hands back: `FakeReceivedMessage`, a `ServiceBusReceivedMessage` subclass whose
properties read the stored `Content` and `Record` (the model's records; `content.py` converts), so code written for the real SDK
sees the same attributes and shapes; and `FakeMessageBatch`, the sender's batch.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from typing import Any

from azure.servicebus import (
    ServiceBusMessage,
    ServiceBusMessageBatch,
    ServiceBusMessageState,
    ServiceBusReceivedMessage,
    ServiceBusReceiveMode,
)
from azure.servicebus.amqp import AmqpAnnotatedMessage, AmqpMessageBodyType

from pairedbus import sdk
from pairedbus.servicebus.clock import to_datetime, to_seconds
from pairedbus.servicebus.content import BodyType, Content, Record, estimate_size
from pairedbus.testing.content import (
    EXACT_MARGIN,
    MAX_HEADER_TTL_MS,
    content_from_message,
    decode_wire,
    exact_size,
    sdk_body_type,
    sdk_state,
    to_service_bus_message,
)
from pairedbus.testing.errors import batch_full

__all__ = [
    "RECEIVE_AND_DELETE",
    "FakeMessageBatch",
    "FakeReceivedMessage",
    "batch_contents",
    "iter_contents",
    "lock_of",
    "peeked",
    "received_application_properties",
    "record_of",
    "relock",
]


def _received_value(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, dict) and "TYPE" in value and "VALUE" in value:  # an explicitly typed AMQP value
        return _received_value(value["VALUE"])
    if isinstance(value, datetime):  # AMQP timestamp: comes back as int milliseconds since the epoch
        return int(to_seconds(value) * 1000)
    if isinstance(value, bytearray):
        return bytes(value)
    return value


def received_application_properties(props: Mapping[Any, Any] | None) -> dict[bytes, Any] | None:
    """Application properties as the real SDK returns them after a round trip through the service:
    keys and str values are bytes, datetimes are int milliseconds since the epoch, int/float/bool/
    UUID/bytes keep their types, and no properties at all is None."""
    if not props:
        return None
    return {(k.encode("utf-8") if isinstance(k, str) else k): _received_value(v) for k, v in props.items()}


class FakeReceivedMessage(ServiceBusReceivedMessage):
    """A received message with the real class's attributes, built without AMQP decoding.

    Broker-assigned values (sequence number, delivery count, lock) are the ones at delivery time,
    as with the real SDK; `raw_amqp_message` is built on first use only.
    """

    def __init__(
        self,
        record: Record,
        receiver: Any,
        *,
        settled: bool,
        peeked: bool = False,
        deferred: bool = False,
    ) -> None:
        # The parent's __init__ decodes an AMQP frame; everything it would set is provided here
        # (rarely changed attributes are class-level defaults, to keep delivery cheap).
        self._record = record
        self._content = record.content
        self._receiver = receiver
        self._settled = settled
        if peeked:
            self._is_peeked_message = True
            self._delivery_count = record.deliveries
        else:
            self._delivery_count = record.deliveries - 1
            if not settled:
                self._token = record.lock_token
                self._locked_until_s = record.locked_until
        if deferred:
            self._is_deferred_message = True

    _is_peeked_message = False
    _is_deferred_message = False
    _token = 0
    _locked_until_s: float | None = None
    _app_props: Any = None  # replaced by _UNSET below, once defined
    _raw: AmqpAnnotatedMessage | None = None
    _uamqp_message = None
    _message = None
    _expiry: datetime | None = None
    auto_renew_error: Exception | None = None

    # --- what the sender set --------------------------------------------------------------

    @property
    def body(self) -> Any:
        content = self._content
        if content.wire is not None:
            return self.raw_amqp_message.body
        if content.body_type is BodyType.VALUE:
            return content.body
        return iter(content.body)

    @property
    def body_type(self) -> AmqpMessageBodyType:
        return sdk_body_type(self._content.body_type)

    def __str__(self) -> str:
        content = self._content
        if content.wire is not None:
            return str(self.raw_amqp_message)
        if content.body_type is BodyType.DATA:
            return "".join(section.decode("utf-8") for section in content.body)
        return str(content.body)

    def _change(self, **changes: Any) -> None:
        """This message now carries `changes` (a new record: the stored one is never changed); a
        modified message is re-encoded from its fields when re-sent."""
        self._content = self._content._replace(wire=None, wire_cut=None, **changes)
        self._raw = None

    @property
    def application_properties(self) -> dict[bytes, Any] | None:
        if self._app_props is _UNSET:
            self._app_props = received_application_properties(self._content.props)
        return self._app_props

    @application_properties.setter
    def application_properties(self, value: Mapping[Any, Any] | None) -> None:
        self._app_props = dict(value) if value is not None else None
        self._change(props=self._app_props)

    def _string_property(name: str) -> property:
        def getter(self: FakeReceivedMessage) -> str | None:
            return getattr(self._content, name)

        def setter(self: FakeReceivedMessage, value: str | None) -> None:
            self._change(**{name: value})

        return property(getter, setter)

    message_id = _string_property("message_id")
    session_id = _string_property("session_id")
    content_type = _string_property("content_type")
    correlation_id = _string_property("correlation_id")
    subject = _string_property("subject")
    to = _string_property("to")
    reply_to = _string_property("reply_to")
    reply_to_session_id = _string_property("reply_to_session_id")
    partition_key = _string_property("partition_key")
    del _string_property

    @property
    def time_to_live(self) -> timedelta | None:
        ttl = self._record.expires
        if self._content is not self._record.content or ttl is None:
            ttl_s = self._content.ttl
        else:
            ttl_s = ttl - self._record.enqueued
        if not ttl_s or ttl_s * 1000 > MAX_HEADER_TTL_MS:
            return None
        return timedelta(seconds=ttl_s)

    @time_to_live.setter
    def time_to_live(self, value: timedelta | int | None) -> None:
        if isinstance(value, timedelta):
            value = int(value.total_seconds())  # the SDK keeps whole seconds
        self._change(ttl=float(value) if value else None)

    @property
    def scheduled_enqueue_time_utc(self) -> datetime | None:
        scheduled = self._content.scheduled
        return None if scheduled is None else to_datetime(scheduled)

    @scheduled_enqueue_time_utc.setter
    def scheduled_enqueue_time_utc(self, value: datetime | None) -> None:
        self._change(scheduled=None if value is None else to_seconds(value))

    # --- what the broker set --------------------------------------------------------------

    @property
    def sequence_number(self) -> int:
        return self._record.sequence_number

    @property
    def enqueued_sequence_number(self) -> int:
        return self._record.sequence_number

    @property
    def enqueued_time_utc(self) -> datetime:
        return to_datetime(self._record.enqueued)

    @property
    def expires_at_utc(self) -> datetime | None:
        ttl = self.time_to_live
        return None if ttl is None else self.enqueued_time_utc + ttl

    @property
    def delivery_count(self) -> int:
        return self._delivery_count

    @property
    def lock_token(self) -> uuid.UUID | None:
        if self._settled or not self._token:
            return None
        return uuid.UUID(int=self._token)

    @property
    def locked_until_utc(self) -> datetime | None:
        if self._settled or not self._token:
            return None
        if getattr(self._receiver, "_session", None) is not None:
            return None  # session messages are covered by the session lock
        return to_datetime(self._locked_until_s)  # type: ignore[arg-type]  # a message with a lock token has its lock's expiry

    @property
    def _lock_expired(self) -> bool:
        if getattr(self._receiver, "_session", None) is not None:
            raise TypeError("Session messages do not expire. Please use the Session expiry instead.")
        until = self._locked_until_s
        if not until or self._receiver is None:
            return False
        return until <= self._receiver._world.clock.time()

    @property
    def _received_timestamp_utc(self) -> datetime:
        """When the message was delivered (AutoLockRenewer measures its renewal budget from it)."""
        if self._locked_until_s and self._receiver is not None:
            entity = self._receiver._receivable
            if entity is not None:
                return to_datetime(self._locked_until_s - entity.settings.lock_seconds)
        return to_datetime(self._record.enqueued)

    @property
    def dead_letter_reason(self) -> str | None:
        return self._record.dl_reason

    @property
    def dead_letter_error_description(self) -> str | None:
        return self._record.dl_description

    @property
    def dead_letter_source(self) -> str | None:
        return self._record.dl_source

    @property
    def state(self) -> ServiceBusMessageState:
        return sdk_state(self._record.state)

    @property
    def raw_amqp_message(self) -> AmqpAnnotatedMessage:
        if self._raw is None and self._content.wire is not None:
            broker: dict[Any, Any] = {
                sdk.ANNOTATION_SEQUENCE_NUMBER: self._record.sequence_number,
                sdk.ANNOTATION_ENQUEUED_TIME: int(self._record.enqueued * 1000),
            }
            if self._locked_until_s:
                broker[sdk.ANNOTATION_LOCKED_UNTIL] = int(self._locked_until_s * 1000)
            self._raw = decode_wire(self._content.wire, broker, self._delivery_count)
        if self._raw is None:
            raw = to_service_bus_message(self._content).raw_amqp_message
            raw.header.delivery_count = self._delivery_count
            raw.application_properties = self.application_properties
            annotations = dict(raw.annotations or {})
            annotations[sdk.ANNOTATION_SEQUENCE_NUMBER] = self._record.sequence_number
            annotations[sdk.ANNOTATION_ENQUEUED_TIME] = int(self._record.enqueued * 1000)
            if self._locked_until_s:
                annotations[sdk.ANNOTATION_LOCKED_UNTIL] = int(self._locked_until_s * 1000)
            raw.annotations = annotations
            self._raw = raw
        return self._raw

    @property
    def _raw_amqp_message(self) -> AmqpAnnotatedMessage:
        return self.raw_amqp_message

    @_raw_amqp_message.setter
    def _raw_amqp_message(self, value: AmqpAnnotatedMessage) -> None:
        self._raw = value

    @property
    def message(self) -> Any:
        """DEPRECATED in the SDK: a LegacyMessage view (it cannot settle; use the receiver)."""
        import warnings

        warnings.warn(
            "The `message` property is deprecated and will be removed in future versions.",
            DeprecationWarning,
            stacklevel=2,
        )
        return sdk.legacy_message(self.raw_amqp_message)

    def _outgoing_content(self) -> Content:
        """What re-sending this received message sends: what it carries now. Stored contents are
        never mutated, so an unmodified message is re-sent without copying; its application
        properties go out in their received (bytes) shape, as with the real SDK (the received
        shape is computed lazily and is idempotent, so it is not converted here)."""
        content = self._content
        app_props = self._app_props
        if content is self._record.content and app_props is _UNSET:
            return content
        if content.wire is not None and app_props is _UNSET:
            return content
        if app_props is not _UNSET:
            content = content._replace(props=dict(app_props) if app_props else None)
        return content._replace(size=estimate_size(content))

    def __repr__(self) -> str:
        return (
            f"FakeReceivedMessage(sequence_number={self.sequence_number}, message_id={self.message_id!r}, "
            f"session_id={self.session_id!r}, delivery_count={self._delivery_count})"
        )


class _Unset:
    __slots__ = ()


_UNSET: Any = _Unset()
FakeReceivedMessage._app_props = _UNSET


class FakeMessageBatch(ServiceBusMessageBatch):
    """`ServiceBusMessageBatch` that sizes messages by estimate (exactly near the limit) instead
    of AMQP-encoding each one; `add_message` raises `MessageSizeExceededError` when full."""

    def __init__(self, max_size_in_bytes: int) -> None:
        self._max_size_in_bytes = max_size_in_bytes
        self._size = 0
        self._count = 0
        self._messages: list[Any] = []
        self._contents: list[Content] = []
        self._tracing_attributes: dict[str, Any] = {}
        self._uamqp_message = None
        self._amqp_transport = sdk.PyamqpTransport

    def add_message(self, message: Any) -> None:
        content = content_from_message(message)
        cost = content.size + (5 if content.size < 256 else 8)
        if self._size + cost > self._max_size_in_bytes:
            if self._size + cost + EXACT_MARGIN > self._max_size_in_bytes and (
                self._size + exact_size(content) + 8 > self._max_size_in_bytes
            ):
                raise batch_full(self._max_size_in_bytes)
        self._size += cost
        self._count += 1
        self._messages.append(message)
        self._contents.append(content)

    _add = add_message

    def _from_list(self, messages: Any) -> None:
        for message in messages:
            self.add_message(message)

    def contents(self) -> list[Content]:
        return self._contents


def peeked(record: Record) -> FakeReceivedMessage:
    """A stored message as the inspection helpers show it (`ServiceBusWorld.present`): peeked."""
    return FakeReceivedMessage(record, None, settled=True, peeked=True)


def record_of(message: FakeReceivedMessage) -> Record:
    """The stored record a received message reads (what its receiver settles)."""
    return message._record


def lock_of(message: FakeReceivedMessage) -> int:
    """The lock token the message was delivered under (0: none)."""
    return message._token


def relock(message: FakeReceivedMessage, until: float) -> None:
    """A renewed lock: the message now reports `until` (epoch seconds) as its expiry."""
    message._locked_until_s = until


def batch_contents(batch: ServiceBusMessageBatch) -> list[Content]:
    if isinstance(batch, FakeMessageBatch):
        return batch.contents()
    return [content_from_message(m) for m in sdk.batch_messages(batch)]


def iter_contents(message: Any) -> Iterator[Content]:
    if isinstance(message, ServiceBusMessageBatch):
        yield from batch_contents(message)
    elif isinstance(message, (list, tuple)) or (
        not isinstance(message, (Mapping, ServiceBusMessage, AmqpAnnotatedMessage)) and hasattr(message, "__iter__")
    ):
        for m in message:
            yield content_from_message(m)
    else:
        yield content_from_message(message)


RECEIVE_AND_DELETE = ServiceBusReceiveMode.RECEIVE_AND_DELETE
