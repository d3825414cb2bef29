"""Messages on the wire and the model's `Content`: what the broker reads of a transfer with its own
codec agrees with what the in-process front-end reads of the same message through the SDK, and a
message known only by its fields is encoded as the SDK would send it."""

from __future__ import annotations

import datetime as dt

import pytest
from azure.servicebus import ServiceBusMessage

from pairedbus import sdk
from pairedbus.emulator.codec import encode, encode_map
from pairedbus.emulator.messages import content_from_wire, delivery_bytes, encoded_fields
from pairedbus.servicebus.content import BodyType, Content, MessageState, Record
from pairedbus.testing.content import content_from_message, to_service_bus_message

MESSAGES = [
    ServiceBusMessage(b""),
    ServiceBusMessage(
        b"x" * 300,
        message_id="m-1",
        session_id="s-1",
        partition_key="s-1",
        content_type="application/json",
        correlation_id="c-1",
        subject="invoice",
        to="billing",
        reply_to="replies",
        reply_to_session_id="r-1",
        time_to_live=dt.timedelta(seconds=30),
        scheduled_enqueue_time_utc=dt.datetime(2030, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
        application_properties={"color": "red", "n": 3, "f": 1.5, "ok": True, "raw": b"eu"},
    ),
]

#: The fields both front-ends read (the body's container and the wire itself aside).
FIELDS = [f for f in Content._fields if f not in ("size", "wire", "wire_cut", "props")]


def _same_fields(a: Content, b: Content) -> None:
    assert {f: getattr(a, f) for f in FIELDS} == {f: getattr(b, f) for f in FIELDS}
    assert a.filter_properties() == b.filter_properties()


@pytest.mark.parametrize("message", MESSAGES, ids=["empty", "every-field"])
def test_the_wire_front_end_reads_what_the_sdk_front_end_reads(message: ServiceBusMessage) -> None:
    payload = sdk.encode_message(sdk.raw_amqp_message(message))
    on_wire = content_from_wire(payload)
    assert on_wire.wire is payload and on_wire.size == len(payload)  # kept byte for byte
    _same_fields(on_wire, content_from_message(message))


def test_wire_types_are_kept_a_string_stays_a_string_a_binary_a_binary() -> None:
    # the Python SDK sends bytes properties as strings; another client (Node) may send a binary
    payload = b"\x00\x53\x74" + encode_map({"s": "x", "b": b"\x00\xff"}) + b"\x00\x53\x75" + encode(b"body")
    content = content_from_wire(payload)
    assert content.props == {"s": "x", "b": b"\x00\xff"}
    assert content.body == (b"body",)
    delivered = delivery_bytes(Record(content, 1, 0.0, None), delivery_count=0, locked_until=None)
    assert payload[:-9] in delivered  # the application properties pass through byte for byte


@pytest.mark.parametrize("message", MESSAGES, ids=["empty", "every-field"])
def test_a_message_known_by_its_fields_is_encoded_as_the_sdk_encodes_it(message: ServiceBusMessage) -> None:
    content = content_from_message(message)._replace(wire=None)  # a TTL makes the SDK's message rich
    ours = sdk.annotated_message_parts(sdk.parse_message(encoded_fields(content)))
    theirs = sdk.annotated_message_parts(
        sdk.parse_message(sdk.encode_message(sdk.raw_amqp_message(to_service_bus_message(content))))
    )
    # the SDK stamps a TTL's message with its own clock's creation and expiry times: not a field
    untimed = [{**dict(p), "creation_time": None, "absolute_expiry_time": None} for p in (ours[4], theirs[4])]
    assert untimed[0] == untimed[1]
    assert ours[:4] + ours[5:] == theirs[:4] + theirs[5:]
    _same_fields(content_from_wire(encoded_fields(content)), content)


def test_sequence_and_value_bodies_are_read() -> None:
    sequence = Content(BodyType.SEQUENCE, [[1, "a"], [2]], message_id="q")
    value = Content(BodyType.VALUE, {"k": [1, 2]}, message_id="v")
    for content in (sequence, value):
        back = content_from_wire(encoded_fields(content))
        assert (back.body_type, back.body, back.message_id) == (content.body_type, content.body, content.message_id)


def test_a_delivery_carries_the_brokers_fields_and_the_senders_sections() -> None:
    content = content_from_wire(sdk.encode_message(sdk.raw_amqp_message(MESSAGES[1])))
    record = Record(content, 7, 1_700_000_000.0, None)
    record.state = MessageState.DEFERRED
    received = sdk.parse_message(delivery_bytes(record, delivery_count=2, locked_until=None))
    assert received.header is not None and received.annotations is not None
    assert received.application_properties is not None
    assert received.header.delivery_count == 2
    assert received.annotations[b"x-opt-sequence-number"] == 7
    assert received.annotations[b"x-opt-message-state"] == 1
    assert received.annotations[b"x-opt-partition-key"] == b"s-1"
    assert received.application_properties[b"raw"] == b"eu"
