"""The in-process front-end's messages and the model's `Content`: a message the fake sender was given
(`ServiceBusMessage`, `AmqpAnnotatedMessage`, a mapping of keyword arguments, or a received message
re-sent) frozen into the model's record, and a stored record turned back into the SDK's shapes.

Plain ServiceBusMessage fields are read as attributes (cheap); a message with more than those (an
`AmqpAnnotatedMessage`: sequence or value bodies, several data sections, header, footer,
annotations) keeps the SDK's own encoding as its `wire`, which a receive decodes as the SDK does.
The size of a fields-only message is the model's estimate, replaced by the SDK's exact encoded size
near a limit (`size_within`).
"""

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
from pairedbus.servicebus.content import BodyType, Content, MessageState, estimate_parts

__all__ = [
    "EXACT_MARGIN",
    "MAX_HEADER_TTL_MS",
    "content_from_message",
    "decode_wire",
    "exact_size",
    "sdk_body_type",
    "sdk_state",
    "size_within",
    "to_service_bus_message",
]

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

_BODY_TYPES = {
    AmqpMessageBodyType.DATA: BodyType.DATA,
    AmqpMessageBodyType.SEQUENCE: BodyType.SEQUENCE,
    AmqpMessageBodyType.VALUE: BodyType.VALUE,
}
_SDK_BODY_TYPES = {model: sdk_type for sdk_type, model in _BODY_TYPES.items()}
_SDK_STATES = {state: ServiceBusMessageState(state.value) for state in MessageState}


def sdk_body_type(body_type: BodyType) -> AmqpMessageBodyType:
    return _SDK_BODY_TYPES[body_type]


def sdk_state(state: MessageState) -> ServiceBusMessageState:
    return _SDK_STATES[state]


def _text(value: Any) -> Any:
    return value.decode("utf-8") if isinstance(value, bytes) else value


def content_from_message(message: Any) -> Content:
    """Snapshot an outgoing message: `ServiceBusMessage` (or a received one being re-sent),
    `AmqpAnnotatedMessage`, or a mapping of `ServiceBusMessage` keyword arguments. On every send:
    the record is built positionally, once (keywords, or a second record for the size, cost as much
    again)."""
    outgoing: Callable[[], Content] | None = getattr(message, "_outgoing_content", None)
    if outgoing is not None:  # a received message being re-sent (messages.FakeReceivedMessage)
        return outgoing()
    raw = _raw_of(message)
    parts = sdk.annotated_message_parts(raw)
    body_type, data_body, sequence_body, value_body, props, header, annotations, app, _, _ = parts
    body: Any
    if body_type is AmqpMessageBodyType.DATA:
        body = tuple(data_body)
    elif body_type is AmqpMessageBodyType.SEQUENCE:
        body = list(sequence_body)
    else:
        body = value_body
    model_type = _BODY_TYPES[body_type]
    ttl_ms = header.time_to_live if header is not None else None
    partition_key, scheduled = _annotations(annotations)
    app_props = _application_properties(app)
    texts = (*_properties(props), partition_key)
    wire: bytes | None = None
    if _is_rich(message, parts):
        wire = sdk.encode_message(raw)
        size = len(wire)
    else:
        size = estimate_parts(model_type, body, app_props, texts)
    message_id, session_id, content_type, correlation_id, subject, to, reply_to, reply_to_session_id, _ = texts
    return Content(
        model_type,
        body,
        message_id,
        session_id,
        partition_key,
        ttl_ms / 1000 if ttl_ms else None,
        scheduled,
        size,
        content_type,
        correlation_id,
        subject,
        to,
        reply_to,
        reply_to_session_id,
        app_props,
        wire,
    )


_NO_PROPERTIES: tuple[None, ...] = (None,) * 8


def _properties(props: Any) -> tuple[Any, ...]:
    """Message id, session id, content type, correlation id, subject, to, reply-to and reply-to
    session id (`estimate_parts`' order) of the AMQP properties: the SDK's setters store str,
    AMQP-built messages may carry bytes."""
    if props is None:
        return _NO_PROPERTIES
    return (
        _text(props.message_id),
        _text(props.group_id),
        _text(props.content_type),
        _text(props.correlation_id),
        _text(props.subject),
        _text(props.to),
        _text(props.reply_to),
        _text(props.reply_to_group_id),
    )


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


def _annotations(annotations: Any) -> tuple[str | None, float | None]:
    """The partition key and the scheduled enqueue time (epoch milliseconds or a datetime)."""
    if not annotations:
        return None, None
    partition_key = _text(annotations.get(sdk.ANNOTATION_PARTITION_KEY))
    scheduled = annotations.get(sdk.ANNOTATION_SCHEDULED_ENQUEUE_TIME)
    if isinstance(scheduled, datetime):
        return partition_key, to_seconds(scheduled)
    return partition_key, scheduled / 1000 if scheduled else None


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


def exact_size(content: Content) -> int:
    """The SDK's own encoded size (slow: ~30 µs); used only near a size limit."""
    if content.wire is not None:
        return len(content.wire)
    return sdk.encoded_size(to_service_bus_message(content))


def size_within(content: Content, limit: int) -> bool:
    """Whether the message fits `limit` bytes as the SDK measures it (exactly, when near)."""
    if content.size + EXACT_MARGIN < limit:
        return True
    return exact_size(content) <= limit


def decode_wire(wire: bytes, broker_annotations: dict[Any, Any], delivery_count: int) -> AmqpAnnotatedMessage:
    """What a receiver decodes: the stored message plus the broker's header and annotations."""
    return sdk.decode_message(wire, delivery_count=delivery_count, annotations=broker_annotations)


def to_service_bus_message(content: Content) -> ServiceBusMessage:
    body = content.body
    if content.body_type is BodyType.DATA:
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
