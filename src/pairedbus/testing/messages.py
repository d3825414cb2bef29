"""Messages inside the fake: what a send stores, and what a receive hands back.

A send snapshots the outgoing `ServiceBusMessage` into an immutable `Content` (cheap attribute
reads, no AMQP encoding); every entity that stores it wraps it in a `Record` carrying the broker
state (sequence number, lock, delivery count). A receive returns `FakeReceivedMessage`, a
`ServiceBusReceivedMessage` subclass whose properties read those two objects, so code written for
the real SDK sees the same attributes and the same shapes (see `received_application_properties`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from azure.servicebus import ServiceBusMessage, ServiceBusMessageBatch, ServiceBusReceivedMessage
from azure.servicebus._common.constants import (
    _X_OPT_ENQUEUED_TIME,
    _X_OPT_LOCKED_UNTIL,
    _X_OPT_PARTITION_KEY,
    _X_OPT_SCHEDULED_ENQUEUE_TIME,
    _X_OPT_SEQUENCE_NUMBER,
    ServiceBusMessageState,
    ServiceBusReceiveMode,
)
from azure.servicebus.amqp import AmqpAnnotatedMessage, AmqpMessageBodyType
from azure.servicebus.exceptions import MessageSizeExceededError

from pairedbus.testing.clock import to_datetime, to_seconds

#: Encoded AMQP overhead of a message with an empty body (measured against the SDK's encoder).
_BASE_OVERHEAD = 64
#: Within this distance of a limit, the estimate is replaced by the SDK's exact encoded size.
_EXACT_MARGIN = 4096
#: The AMQP header carries time-to-live as uint32 milliseconds; longer TTLs are not put on the wire.
_MAX_HEADER_TTL_MS = 2**32 - 1

#: Application-property value types the SDK's AMQP encoder accepts (a dict may also be an
#: explicitly typed value, `{"TYPE": AMQPTypes.long, "VALUE": n}`).
_ENCODABLE_TYPES = (
    type(None),
    bool,
    str,
    uuid.UUID,
    bytes,
    bytearray,
    float,
    int,
    datetime,
    Decimal,
    dict,
    list,
    tuple,
)
_ENCODABLE = frozenset(_ENCODABLE_TYPES)

_STATE_ACTIVE = ServiceBusMessageState.ACTIVE
_STATE_DEFERRED = ServiceBusMessageState.DEFERRED
_STATE_SCHEDULED = ServiceBusMessageState.SCHEDULED


def _text(value: Any) -> Any:
    return value.decode("utf-8") if isinstance(value, bytes) else value


class Content:
    """What the sender put on the wire, frozen at send time. Shared by every copy of a message
    (topic fan-out, redeliveries); a received message that is modified copies it first."""

    __slots__ = (
        "body",
        "body_type",
        "content_type",
        "correlation_id",
        "message_id",
        "partition_key",
        "props",
        "reply_to",
        "reply_to_session_id",
        "scheduled",
        "session_id",
        "size",
        "subject",
        "to",
        "ttl",
        "wire",
    )

    body: Any  # list of bytes sections for DATA bodies, else the value / sequence
    body_type: AmqpMessageBodyType
    content_type: str | None
    correlation_id: str | None
    message_id: str | None
    partition_key: str | None
    props: dict[Any, Any] | None  # application properties as the sender gave them
    reply_to: str | None
    reply_to_session_id: str | None
    scheduled: float | None  # epoch seconds
    session_id: str | None
    size: int
    subject: str | None
    to: str | None
    ttl: float | None  # seconds, as set on the message (the SDK keeps whole seconds)
    #: The SDK's own AMQP encoding of the message, kept for messages that carry more than the
    #: ServiceBusMessage fields above (AmqpAnnotatedMessage sends: sequence or value bodies,
    #: several data sections, header, footer, annotations); a receive decodes it as the SDK does.
    wire: bytes | None

    def copy(self) -> Content:
        new = Content.__new__(Content)
        new.body = self.body
        new.body_type = self.body_type
        new.content_type = self.content_type
        new.correlation_id = self.correlation_id
        new.message_id = self.message_id
        new.partition_key = self.partition_key
        new.props = None if self.props is None else dict(self.props)
        new.reply_to = self.reply_to
        new.reply_to_session_id = self.reply_to_session_id
        new.scheduled = self.scheduled
        new.session_id = self.session_id
        new.size = self.size
        new.subject = self.subject
        new.to = self.to
        new.ttl = self.ttl
        new.wire = self.wire
        return new

    def filter_properties(self) -> dict[str, Any]:
        """Application properties keyed by str, for rule filters (typed AMQP values unwrapped)."""
        if not self.props:
            return {}
        return {
            _text(k): v["VALUE"] if isinstance(v, dict) and "TYPE" in v and "VALUE" in v else v
            for k, v in self.props.items()
        }


def estimate_size(content: Content) -> int:
    """Encoded size of a message, close to the SDK's (within a few bytes for typical messages)."""
    size = _BASE_OVERHEAD
    body = content.body
    if content.body_type is AmqpMessageBodyType.DATA:
        for section in body:
            size += len(section) + 3
    elif body is not None:
        size += len(repr(body))
    for value in (
        content.message_id,
        content.session_id,
        content.content_type,
        content.correlation_id,
        content.subject,
        content.to,
        content.reply_to,
        content.reply_to_session_id,
        content.partition_key,
    ):
        if value is not None:
            size += len(value) + 3
    props = content.props
    if props:
        for key in props:
            value = props[key]
            size += len(key) + (len(value) + 7 if value.__class__ in (str, bytes) else 13)
    return size


def exact_size(content: Content) -> int:
    """The SDK's own encoded size (slow: ~30 µs); used only near a size limit."""
    from azure.servicebus._transport._pyamqp_transport import PyamqpTransport

    outgoing = to_service_bus_message(content)
    return PyamqpTransport.get_message_encoded_size(PyamqpTransport.to_outgoing_amqp_message(outgoing.raw_amqp_message))


def size_within(content: Content, limit: int) -> bool:
    size = content.size
    if size + _EXACT_MARGIN < limit:
        return True
    return exact_size(content) <= limit


def content_from_message(message: Any) -> Content:
    """Snapshot an outgoing message: `ServiceBusMessage` (or a received one being re-sent),
    `AmqpAnnotatedMessage`, or a mapping of `ServiceBusMessage` keyword arguments."""
    if isinstance(message, FakeReceivedMessage):
        return message._outgoing_content()
    if isinstance(message, ServiceBusMessage):
        raw = message._raw_amqp_message
    elif isinstance(message, AmqpAnnotatedMessage):
        raw = message
    elif isinstance(message, Mapping):
        raw = ServiceBusMessage(**message)._raw_amqp_message
    else:
        raise TypeError(
            "Only AmqpAnnotatedMessage, ServiceBusMessage instances or Mappings representing messages are "
            f"supported. Received instead: {message.__class__.__name__}"
        )
    content = Content.__new__(Content)
    body_type = raw._body_type
    content.body_type = body_type
    if body_type is AmqpMessageBodyType.DATA:
        content.body = list(raw._data_body)
    elif body_type is AmqpMessageBodyType.SEQUENCE:
        content.body = list(raw._sequence_body)
    else:
        content.body = raw._value_body
    props = raw._properties
    if props is not None:
        # The SDK's setters store str; AMQP-built messages may carry bytes.
        v = props.message_id
        content.message_id = v if v is None or v.__class__ is str else _text(v)
        v = props.group_id
        content.session_id = v if v is None or v.__class__ is str else _text(v)
        v = props.content_type
        content.content_type = v if v is None or v.__class__ is str else _text(v)
        v = props.correlation_id
        content.correlation_id = v if v is None or v.__class__ is str else _text(v)
        v = props.subject
        content.subject = v if v is None or v.__class__ is str else _text(v)
        v = props.to
        content.to = v if v is None or v.__class__ is str else _text(v)
        v = props.reply_to
        content.reply_to = v if v is None or v.__class__ is str else _text(v)
        v = props.reply_to_group_id
        content.reply_to_session_id = v if v is None or v.__class__ is str else _text(v)
    else:
        content.message_id = content.session_id = content.content_type = content.correlation_id = None
        content.subject = content.to = content.reply_to = content.reply_to_session_id = None
    header = raw._header
    ttl_ms = header.time_to_live if header is not None else None
    content.ttl = ttl_ms / 1000 if ttl_ms else None
    annotations = raw._annotations
    if annotations:
        content.partition_key = _text(annotations.get(_X_OPT_PARTITION_KEY))
        scheduled = annotations.get(_X_OPT_SCHEDULED_ENQUEUE_TIME)
        if isinstance(scheduled, datetime):
            content.scheduled = to_seconds(scheduled)
        elif scheduled:
            content.scheduled = scheduled / 1000
        else:
            content.scheduled = None
    else:
        content.partition_key = None
        content.scheduled = None
    app = raw._application_properties
    if app:
        for value in app.values():
            if value.__class__ not in _ENCODABLE and not isinstance(value, _ENCODABLE_TYPES):
                raise TypeError(f"Unable to encode unknown value: {value}")  # as the SDK's AMQP encoder
        content.props = dict(app)
    else:
        content.props = None
    content.wire = None
    if _is_rich(message, raw):
        content.wire = encode_wire(raw)
        content.size = len(content.wire)
    else:
        content.size = estimate_size(content)
    return content


#: Message annotations a ServiceBusMessage sets itself; any other annotation makes a message "rich".
_SDK_ANNOTATIONS = frozenset({_X_OPT_PARTITION_KEY, _X_OPT_SCHEDULED_ENQUEUE_TIME})


def _is_rich(message: Any, raw: AmqpAnnotatedMessage) -> bool:
    """True when the message carries AMQP parts the plain fields of `Content` cannot hold."""
    if isinstance(message, AmqpAnnotatedMessage):
        return True
    if raw._body_type is not AmqpMessageBodyType.DATA or len(raw._data_body) > 1:
        return True
    if raw._footer or raw._delivery_annotations:
        return True
    if raw._annotations and any(k not in _SDK_ANNOTATIONS for k in raw._annotations):
        return True
    header = raw._header
    if header is not None and (header.priority is not None or header.durable or header.first_acquirer):
        return True
    props = raw._properties
    return props is not None and any(
        getattr(props, name, None) is not None
        for name in ("user_id", "content_encoding", "absolute_expiry_time", "creation_time", "group_sequence")
    )


def encode_wire(raw: AmqpAnnotatedMessage) -> bytes:
    """The message as the SDK's AMQP encoder puts it on the wire."""
    from azure.servicebus._pyamqp._encode import encode_payload
    from azure.servicebus._transport._pyamqp_transport import PyamqpTransport

    return bytes(encode_payload(bytearray(), PyamqpTransport.to_outgoing_amqp_message(raw)))


def decode_wire(wire: bytes, broker_annotations: dict[Any, Any], delivery_count: int) -> AmqpAnnotatedMessage:
    """What a receiver decodes: the stored message plus the broker's header and annotations."""
    from azure.servicebus._pyamqp._decode import decode_payload
    from azure.servicebus._pyamqp.message import Header

    decoded = decode_payload(memoryview(wire))
    header = decoded.header
    header = Header(delivery_count=delivery_count) if header is None else header._replace(delivery_count=delivery_count)
    annotations = dict(decoded.message_annotations or {})
    annotations.update(broker_annotations)
    return AmqpAnnotatedMessage(message=decoded._replace(header=header, message_annotations=annotations))


def to_service_bus_message(content: Content) -> ServiceBusMessage:
    body = content.body
    if content.body_type is AmqpMessageBodyType.DATA:
        body = b"".join(body)
    message = ServiceBusMessage(
        body,
        application_properties=dict(content.props) if content.props else None,
        session_id=content.session_id,
        message_id=content.message_id,
        content_type=content.content_type,
        correlation_id=content.correlation_id,
        subject=content.subject,
        partition_key=content.partition_key,
        to=content.to,
        reply_to=content.reply_to,
        reply_to_session_id=content.reply_to_session_id,
    )
    if content.ttl:
        message.time_to_live = timedelta(seconds=content.ttl)
    if content.scheduled is not None:
        message.scheduled_enqueue_time_utc = to_datetime(content.scheduled)
    return message


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


class Record:
    """One message stored in one entity (queue, subscription or a dead-letter sub-queue)."""

    __slots__ = (
        "content",
        "deliveries",
        "dl_description",
        "dl_reason",
        "dl_source",
        "enqueued",
        "expires",
        "lock_owner",
        "lock_token",
        "locked_until",
        "sequence_number",
        "state",
    )

    def __init__(self, content: Content, sequence_number: int, enqueued: float, expires: float | None) -> None:
        self.content = content
        self.sequence_number = sequence_number
        self.enqueued = enqueued
        self.expires = expires
        self.deliveries = 0
        self.lock_token = 0  # 0: not locked
        self.locked_until = 0.0
        self.lock_owner: Any = None
        self.state = _STATE_ACTIVE
        self.dl_reason: str | None = None
        self.dl_description: str | None = None
        self.dl_source: str | None = None


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
        if content.body_type is AmqpMessageBodyType.DATA:
            return iter(content.body)
        if content.body_type is AmqpMessageBodyType.SEQUENCE:
            return iter(content.body)
        return content.body

    @property
    def body_type(self) -> AmqpMessageBodyType:
        return self._content.body_type

    def __str__(self) -> str:
        content = self._content
        if content.wire is not None:
            return str(self.raw_amqp_message)
        if content.body_type is AmqpMessageBodyType.DATA:
            return "".join(section.decode("utf-8") for section in content.body)
        return str(content.body)

    def _own(self) -> Content:
        if self._content is self._record.content:
            self._content = self._content.copy()
        self._raw = None
        self._content.wire = None  # a modified message is re-encoded from its fields when re-sent
        return self._content

    @property
    def application_properties(self) -> dict[bytes, Any] | None:
        if self._app_props is _UNSET:
            self._app_props = received_application_properties(self._content.props)
        return self._app_props

    @application_properties.setter
    def application_properties(self, value: Mapping[Any, Any] | None) -> None:
        self._own()
        self._app_props = dict(value) if value is not None else None
        self._content.props = self._app_props

    def _string_property(name: str) -> property:  # type: ignore[misc]
        def getter(self: FakeReceivedMessage) -> str | None:
            return getattr(self._content, name)

        def setter(self: FakeReceivedMessage, value: str | None) -> None:
            setattr(self._own(), name, value)

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
        if not ttl_s or ttl_s * 1000 > _MAX_HEADER_TTL_MS:
            return None
        return timedelta(seconds=ttl_s)

    @time_to_live.setter
    def time_to_live(self, value: timedelta | int | None) -> None:
        if isinstance(value, timedelta):
            value = int(value.total_seconds())  # the SDK keeps whole seconds
        self._own().ttl = float(value) if value else None

    @property
    def scheduled_enqueue_time_utc(self) -> datetime | None:
        scheduled = self._content.scheduled
        return None if scheduled is None else to_datetime(scheduled)

    @scheduled_enqueue_time_utc.setter
    def scheduled_enqueue_time_utc(self, value: datetime | None) -> None:
        self._own().scheduled = None if value is None else to_seconds(value)

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
        return to_datetime(self._locked_until_s)  # type: ignore[arg-type]

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
        return self._record.state

    @property
    def raw_amqp_message(self) -> AmqpAnnotatedMessage:
        if self._raw is None and self._content.wire is not None:
            broker: dict[Any, Any] = {
                _X_OPT_SEQUENCE_NUMBER: self._record.sequence_number,
                _X_OPT_ENQUEUED_TIME: int(self._record.enqueued * 1000),
            }
            if self._locked_until_s:
                broker[_X_OPT_LOCKED_UNTIL] = int(self._locked_until_s * 1000)
            self._raw = decode_wire(self._content.wire, broker, self._delivery_count)
        if self._raw is None:
            raw = to_service_bus_message(self._content).raw_amqp_message
            raw.header.delivery_count = self._delivery_count
            raw.application_properties = self.application_properties
            annotations = dict(raw.annotations or {})
            annotations[_X_OPT_SEQUENCE_NUMBER] = self._record.sequence_number
            annotations[_X_OPT_ENQUEUED_TIME] = int(self._record.enqueued * 1000)
            if self._locked_until_s:
                annotations[_X_OPT_LOCKED_UNTIL] = int(self._locked_until_s * 1000)
            raw.annotations = annotations
            self._raw = raw
        return self._raw

    @property
    def _raw_amqp_message(self) -> AmqpAnnotatedMessage:  # type: ignore[override]
        return self.raw_amqp_message

    @_raw_amqp_message.setter
    def _raw_amqp_message(self, value: AmqpAnnotatedMessage) -> None:
        self._raw = value

    @property
    def message(self) -> Any:
        """DEPRECATED in the SDK: a LegacyMessage view (it cannot settle; use the receiver)."""
        import warnings

        from azure.servicebus._pyamqp._message_backcompat import LegacyMessage
        from azure.servicebus._transport._pyamqp_transport import PyamqpTransport

        warnings.warn(
            "The `message` property is deprecated and will be removed in future versions.",
            DeprecationWarning,
            stacklevel=2,
        )
        return LegacyMessage(self.raw_amqp_message, to_outgoing_amqp_message=PyamqpTransport.to_outgoing_amqp_message)

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
        content = content.copy()
        if app_props is not _UNSET:
            content.props = dict(app_props) if app_props else None
        content.size = estimate_size(content)
        return content

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
        from azure.servicebus._transport._pyamqp_transport import PyamqpTransport

        self._amqp_transport = PyamqpTransport

    def add_message(self, message: Any) -> None:
        content = content_from_message(message)
        cost = content.size + (5 if content.size < 256 else 8)
        if self._size + cost > self._max_size_in_bytes:
            if self._size + cost + _EXACT_MARGIN > self._max_size_in_bytes and (
                self._size + exact_size(content) + 8 > self._max_size_in_bytes
            ):
                raise MessageSizeExceededError(
                    message=f"ServiceBusMessageBatch has reached its size limit: {self._max_size_in_bytes}"
                )
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


def batch_contents(batch: ServiceBusMessageBatch) -> list[Content]:
    if isinstance(batch, FakeMessageBatch):
        return batch.contents()
    return [content_from_message(m) for m in batch._messages]


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
STATE_ACTIVE = _STATE_ACTIVE
STATE_DEFERRED = _STATE_DEFERRED
STATE_SCHEDULED = _STATE_SCHEDULED
