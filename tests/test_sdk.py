"""`pairedbus.sdk`: every private azure-servicebus attribute the runtime reads, checked against the
installed SDK. A failure here means the SDK changed something the runtime relies on: re-check the
module against the new SDK, then update `SDK_VERSION_CHECKED`."""

from __future__ import annotations

from importlib.metadata import version

import azure.servicebus
from azure.servicebus import ServiceBusMessage, ServiceBusMessageBatch
from azure.servicebus._pyamqp._encode import encode_payload
from azure.servicebus._transport._pyamqp_transport import PyamqpTransport
from azure.servicebus.amqp import AmqpAnnotatedMessage
from azure.servicebus.exceptions import (
    MessageSizeExceededError,
    MessagingEntityNotFoundError,
    ServiceBusConnectionError,
    ServiceBusServerBusyError,
)

from pairedbus import sdk


def _wire(raw: AmqpAnnotatedMessage) -> bytes:
    return bytes(encode_payload(bytearray(), PyamqpTransport.to_outgoing_amqp_message(raw)))


def test_the_installed_sdk_is_the_one_this_module_was_checked_against() -> None:
    assert version("azure-servicebus") == azure.servicebus.__version__ == sdk.SDK_VERSION_CHECKED


def test_the_retryable_flag_is_where_the_sdk_keeps_it() -> None:
    assert sdk.is_retryable(ServiceBusServerBusyError(message="busy"))
    assert sdk.is_retryable(ServiceBusConnectionError(message="reset"))
    assert not sdk.is_retryable(MessageSizeExceededError(message="big"))
    assert not sdk.is_retryable(MessagingEntityNotFoundError(message="gone"))


def test_the_raw_message_and_the_batch_internals_are_where_the_sdk_keeps_them() -> None:
    message = ServiceBusMessage(b"x", message_id="m-1")
    assert sdk.raw_amqp_message(message) is message.raw_amqp_message
    batch = ServiceBusMessageBatch(max_size_in_bytes=1024)
    batch.add_message(message)
    assert sdk.batch_messages(batch) == [message]
    assert set(sdk.batch_transport(batch)) <= {"amqp_transport"}
    ServiceBusMessageBatch(max_size_in_bytes=1024, **sdk.batch_transport(batch)).add_message(message)


def test_the_annotation_keys_are_the_service_bus_wire_names() -> None:
    assert sdk.ANNOTATION_PARTITION_KEY == b"x-opt-partition-key"
    assert sdk.ANNOTATION_SCHEDULED_ENQUEUE_TIME == b"x-opt-scheduled-enqueue-time"
    assert ServiceBusMessage(b"x", partition_key="p").raw_amqp_message.annotations[sdk.ANNOTATION_PARTITION_KEY] == "p"


def test_a_bare_annotated_message_encodes_like_the_public_constructor() -> None:
    for body in (b"payload", b""):
        assert _wire(sdk.bare_annotated_message(body)) == _wire(AmqpAnnotatedMessage(data_body=body))
    assert _wire(sdk.bare_annotated_message(None)) == _wire(AmqpAnnotatedMessage(value_body=None))


def test_encoded_size_is_the_size_of_the_sdk_encoding_and_a_long_encodes() -> None:
    message = ServiceBusMessage(b"x" * 300, application_properties={"big": sdk.amqp_long(2**40)})
    assert sdk.encoded_size(message) == len(_wire(message.raw_amqp_message))


def test_add_to_batch_builds_the_batch_add_message_builds_with_one_encoding() -> None:
    messages = [ServiceBusMessage(b"x" * n, message_id=f"m-{n}", session_id="s") for n in (10, 300, 8000)]
    public = ServiceBusMessageBatch(max_size_in_bytes=6000)
    ours = ServiceBusMessageBatch(max_size_in_bytes=6000)
    for message in messages[:2]:
        public.add_message(message)
        assert sdk.add_to_batch(ours, message)
    assert not sdk.add_to_batch(ours, messages[2])  # over 6000 bytes: refused, batch unchanged
    assert (len(ours), ours.size_in_bytes) == (len(public), public.size_in_bytes)
    assert _wire_batch(ours) == _wire_batch(public)


def _wire_batch(batch: ServiceBusMessageBatch) -> bytes:
    return bytes(encode_payload(bytearray(), batch._message))
