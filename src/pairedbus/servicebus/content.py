"""What a send stores: an outgoing message frozen into a `Content` (cheap attribute reads, or the
SDK's own AMQP encoding for messages with more than ServiceBusMessage fields), and the `Record`
each entity wraps it in (sequence number, lock, delivery count)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from azure.servicebus import ServiceBusMessage, ServiceBusMessageState
from azure.servicebus.amqp import AmqpAnnotatedMessage, AmqpMessageBodyType

from pairedbus import sdk
from pairedbus.servicebus.clock import to_datetime, to_seconds

#: Encoded AMQP overhead of a message with an empty body (measured against the SDK's encoder).
_BASE_OVERHEAD = 64
#: Within this distance of a limit, the estimate is replaced by the SDK's exact encoded size.
EXACT_MARGIN = 4096
#: The AMQP header carries time-to-live as uint32 milliseconds; longer TTLs are not put on the wire.
MAX_HEADER_TTL_MS = 2**32 - 1

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

STATE_ACTIVE = ServiceBusMessageState.ACTIVE
STATE_DEFERRED = ServiceBusMessageState.DEFERRED
STATE_SCHEDULED = ServiceBusMessageState.SCHEDULED


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
        "wire_layout",
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
    #: What a wire front-end cut of `wire` once, to reuse on every delivery (valid while its
    #: `payload` is `wire`; unset until a wire receiver asks).
    wire_layout: Any

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
    return sdk.encoded_size(to_service_bus_message(content))


def size_within(content: Content, limit: int) -> bool:
    size = content.size
    if size + EXACT_MARGIN < limit:
        return True
    return exact_size(content) <= limit


def content_from_message(message: Any) -> Content:
    """Snapshot an outgoing message: `ServiceBusMessage` (or a received one being re-sent),
    `AmqpAnnotatedMessage`, or a mapping of `ServiceBusMessage` keyword arguments."""
    outgoing: Callable[[], Content] | None = getattr(message, "_outgoing_content", None)
    if outgoing is not None:  # a received message being re-sent (messages.FakeReceivedMessage)
        return outgoing()
    raw = _raw_of(message)
    content = Content.__new__(Content)
    parts = sdk.annotated_message_parts(raw)
    _fill(content, parts)
    content.wire = None
    if _is_rich(message, parts):
        content.wire = encode_wire(raw)
        content.size = len(content.wire)
    else:
        content.size = estimate_size(content)
    return content


def content_from_wire(payload: bytes) -> Content:
    """A message as a wire front-end received it: its bytes are kept as the client sent them
    (wire types and all) and are what a receiver gets back, with the broker's fields added."""
    content = Content.__new__(Content)
    _fill(content, sdk.annotated_message_parts(sdk.parse_message(payload)))
    content.wire = payload
    content.size = len(payload)
    return content


def _fill(content: Content, parts: tuple[Any, ...]) -> None:
    """The fields of `Content` from an `AmqpAnnotatedMessage`'s parts."""
    body_type, data_body, sequence_body, value_body, props, header, annotations, app, _, _ = parts
    content.body_type = body_type
    if body_type is AmqpMessageBodyType.DATA:
        content.body = list(data_body)
    elif body_type is AmqpMessageBodyType.SEQUENCE:
        content.body = list(sequence_body)
    else:
        content.body = value_body
    _read_properties(content, props)
    ttl_ms = header.time_to_live if header is not None else None
    content.ttl = ttl_ms / 1000 if ttl_ms else None
    _read_annotations(content, annotations)
    content.props = _application_properties(app)


def _raw_of(message: Any) -> AmqpAnnotatedMessage:
    if isinstance(message, ServiceBusMessage):
        return sdk.raw_amqp_message(message)
    if isinstance(message, AmqpAnnotatedMessage):
        return message
    if isinstance(message, Mapping):
        return sdk.raw_amqp_message(ServiceBusMessage(**message))
    raise TypeError(
        "Only AmqpAnnotatedMessage, ServiceBusMessage instances or Mappings representing messages are "
        f"supported. Received instead: {message.__class__.__name__}"
    )


def _read_properties(content: Content, props: Any) -> None:
    """The AMQP properties section (the SDK's setters store str; AMQP-built messages may carry
    bytes, which `_text` decodes)."""
    if props is None:
        content.message_id = content.session_id = content.content_type = content.correlation_id = None
        content.subject = content.to = content.reply_to = content.reply_to_session_id = None
        return
    content.message_id = _text(props.message_id)
    content.session_id = _text(props.group_id)
    content.content_type = _text(props.content_type)
    content.correlation_id = _text(props.correlation_id)
    content.subject = _text(props.subject)
    content.to = _text(props.to)
    content.reply_to = _text(props.reply_to)
    content.reply_to_session_id = _text(props.reply_to_group_id)


def _read_annotations(content: Content, annotations: Any) -> None:
    """The partition key and the scheduled enqueue time (epoch milliseconds or a datetime)."""
    content.partition_key = None
    content.scheduled = None
    if not annotations:
        return
    content.partition_key = _text(annotations.get(sdk.ANNOTATION_PARTITION_KEY))
    scheduled = annotations.get(sdk.ANNOTATION_SCHEDULED_ENQUEUE_TIME)
    if isinstance(scheduled, datetime):
        content.scheduled = to_seconds(scheduled)
    elif scheduled:
        content.scheduled = scheduled / 1000


def _application_properties(app: Any) -> dict[Any, Any] | None:
    if not app:
        return None
    for value in app.values():
        if value.__class__ not in _ENCODABLE and not isinstance(value, _ENCODABLE_TYPES):
            raise TypeError(f"Unable to encode unknown value: {value}")  # as the SDK's AMQP encoder
    return dict(app)


#: Message annotations a ServiceBusMessage sets itself; any other annotation makes a message "rich".
_SDK_ANNOTATIONS = frozenset({sdk.ANNOTATION_PARTITION_KEY, sdk.ANNOTATION_SCHEDULED_ENQUEUE_TIME})


def _is_rich(message: Any, parts: tuple[Any, ...]) -> bool:
    """True when the message carries AMQP parts the plain fields of `Content` cannot hold
    (`parts`: the message's `sdk.annotated_message_parts`)."""
    if isinstance(message, AmqpAnnotatedMessage):
        return True
    body_type, data_body, _, _, props, header, annotations, _, footer, delivery_annotations = parts
    if body_type is not AmqpMessageBodyType.DATA or len(data_body) > 1:
        return True
    if footer or delivery_annotations:
        return True
    if annotations and any(k not in _SDK_ANNOTATIONS for k in annotations):
        return True
    return _rich_header(header) or _rich_properties(props)


def _rich_header(header: Any) -> bool:
    return header is not None and bool(header.priority is not None or header.durable or header.first_acquirer)


def _rich_properties(props: Any) -> bool:
    return props is not None and any(
        getattr(props, name, None) is not None
        for name in ("user_id", "content_encoding", "absolute_expiry_time", "creation_time", "group_sequence")
    )


def encode_wire(raw: AmqpAnnotatedMessage) -> bytes:
    """The message as the SDK's AMQP encoder puts it on the wire."""
    return sdk.encode_message(raw)


def decode_wire(wire: bytes, broker_annotations: dict[Any, Any], delivery_count: int) -> AmqpAnnotatedMessage:
    """What a receiver decodes: the stored message plus the broker's header and annotations."""
    return sdk.decode_message(wire, delivery_count=delivery_count, annotations=broker_annotations)


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
        self.state = STATE_ACTIVE
        self.dl_reason: str | None = None
        self.dl_description: str | None = None
        self.dl_source: str | None = None
