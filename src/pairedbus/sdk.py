"""The one place that reads private attributes of azure-servicebus.

Checked against azure-servicebus 7.15.0 (`SDK_VERSION_CHECKED`). Each name below is private to the
SDK and may change in any release; `tests/test_sdk.py` fails when one of them no longer exists or
behaves as relied on here, so an SDK upgrade is noticed before the runtime misbehaves. Everything
else in the runtime uses the SDK's public surface.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, Final

from azure.servicebus import ServiceBusMessage, ServiceBusMessageBatch
from azure.servicebus._common.constants import (
    _BATCH_MESSAGE_OVERHEAD_COST,
    _X_OPT_PARTITION_KEY,
    _X_OPT_SCHEDULED_ENQUEUE_TIME,
)
from azure.servicebus._pyamqp._encode import encode_payload
from azure.servicebus._pyamqp.types import TYPE, VALUE
from azure.servicebus._pyamqp.utils import amqp_long_value
from azure.servicebus._transport._pyamqp_transport import PyamqpTransport
from azure.servicebus.amqp import AmqpAnnotatedMessage, AmqpMessageBodyType

SDK_VERSION_CHECKED: Final = "7.15.0"

#: Message-annotation keys the service routes by (bytes, as the SDK encodes them).
ANNOTATION_PARTITION_KEY: Final[bytes] = _X_OPT_PARTITION_KEY
ANNOTATION_SCHEDULED_ENQUEUE_TIME: Final[bytes] = _X_OPT_SCHEDULED_ENQUEUE_TIME
#: Keys of an explicitly typed AMQP value (`{TYPE: ..., VALUE: ...}`) before it is encoded.
AMQP_TYPE: Final = TYPE
AMQP_VALUE: Final = VALUE

__all__ = [
    "AMQP_TYPE",
    "AMQP_VALUE",
    "ANNOTATION_PARTITION_KEY",
    "ANNOTATION_SCHEDULED_ENQUEUE_TIME",
    "SDK_VERSION_CHECKED",
    "add_to_batch",
    "amqp_long",
    "bare_annotated_message",
    "batch_messages",
    "batch_transport",
    "encoded_size",
    "is_retryable",
    "raw_amqp_message",
]


def is_retryable(exc: BaseException) -> bool:
    """Whether azure-servicebus says a retry can help. Each of its exception classes sets the flag,
    but the SDK keeps it private (`_retryable`) and branches on it in its own retry policy."""
    return bool(getattr(exc, "_retryable", False))


#: `message.raw_amqp_message` without the property's Python call (read on every healthy send):
#: a C-level attribute getter of the SDK's private field.
raw_amqp_message: Callable[[ServiceBusMessage], AmqpAnnotatedMessage] = operator.attrgetter("_raw_amqp_message")


def batch_messages(batch: ServiceBusMessageBatch) -> list[ServiceBusMessage]:
    """The messages added to a batch (the SDK keeps them in `_messages`)."""
    return list(batch._messages)


def batch_transport(batch: Any) -> dict[str, Any]:
    """Keyword arguments that make a new batch use the same AMQP transport as `batch`."""
    transport = getattr(batch, "_amqp_transport", None)
    return {"amqp_transport": transport} if transport is not None else {}


def amqp_long(value: int) -> Any:
    """An int the SDK encodes as an AMQP long (a plain int above 2**31-1 would not encode)."""
    return amqp_long_value(value)


def encoded_size(message: ServiceBusMessage) -> int:
    """The message's size on the wire, as the SDK measures it against the size limit."""
    amqp_message = PyamqpTransport.to_outgoing_amqp_message(message.raw_amqp_message)
    return PyamqpTransport.get_message_encoded_size(amqp_message)


def bare_annotated_message(body: bytes | None) -> AmqpAnnotatedMessage:
    """`AmqpAnnotatedMessage(data_body=body)` (or `value_body=None`) without its constructor, which
    evaluates typing casts at run time (half of `restore_message`'s CPU); the byte-for-byte
    equality with the public constructor is pinned by the tests."""
    raw = AmqpAnnotatedMessage.__new__(AmqpAnnotatedMessage)
    raw._encoding = "UTF-8"
    raw._data_body = None if body is None else [body]
    raw._sequence_body = None
    raw._value_body = None
    raw._body_type = AmqpMessageBodyType.VALUE if body is None else AmqpMessageBodyType.DATA
    raw._header = None
    raw._footer = None
    raw._properties = None
    raw._application_properties = None
    raw._annotations = None
    raw._delivery_annotations = None
    return raw


def add_to_batch(batch: Any, message: ServiceBusMessage) -> bool:
    """Add `message` to `batch`; False when it does not fit (the batch is unchanged).

    `ServiceBusMessageBatch.add_message` encodes each message twice (once to measure it, once
    into the batch): on the syphon's hop that is a quarter of the CPU. This encodes it once and
    appends the bytes as `add_message` does (`_pyamqp.utils.add_batch`), with the same size
    arithmetic. Distributed tracing attributes (`trace_message`) are not added. Any other batch
    (another transport, a test double) goes through its own `add_message`.
    """
    if type(batch) is not ServiceBusMessageBatch or batch._amqp_transport is not PyamqpTransport:
        from azure.servicebus.exceptions import MessageSizeExceededError

        try:
            batch.add_message(message)
        except MessageSizeExceededError:
            return False
        return True
    outgoing = PyamqpTransport.to_outgoing_amqp_message(message.raw_amqp_message)
    payload = bytearray()
    encode_payload(payload, outgoing)
    size = len(payload)
    size_after = batch._size + size + _BATCH_MESSAGE_OVERHEAD_COST[0 if size < 256 else 1]
    if size_after > batch.max_size_in_bytes:
        return False
    message._message = outgoing
    batch._message[5].append(payload)  # the batch message's data sections
    batch._size = size_after
    batch._count += 1
    batch._messages.append(message)
    if batch._count == 1:  # the envelope takes the first message's routing, as add_message does
        PyamqpTransport.set_batch_envelope_properties(
            batch._message, message.message_id, message.session_id, message.partition_key
        )
    return True
