"""Received messages look like the real SDK's after a round trip through the service."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from azure.servicebus import ServiceBusMessage

from pairedbus.testing import received_application_properties
from pairedbus.testing.content import content_from_message


def test_received_application_properties_use_bytes_for_keys_and_strings() -> None:
    ident = uuid.uuid4()
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    props = {"s": "text", b"b": b"raw", "i": 1, "f": 1.5, "t": True, "u": ident, "d": when, "n": None}
    assert received_application_properties(props) == {
        b"s": b"text",
        b"b": b"raw",
        b"i": 1,
        b"f": 1.5,
        b"t": True,
        b"u": ident,
        b"d": int(when.timestamp() * 1000),
        b"n": None,
    }
    assert received_application_properties(None) is None
    assert received_application_properties({}) is None


async def test_raw_amqp_message_of_a_received_message_carries_broker_annotations(servicebus_world) -> None:  # type: ignore[no-untyped-def]
    from azure.servicebus.aio import ServiceBusClient

    fqdn = "raw-ns.servicebus.windows.net"
    servicebus_world.namespace(fqdn).create_queue("q")
    async with ServiceBusClient(fqdn, object()) as client:
        await client.get_queue_sender("q").send_messages(ServiceBusMessage(b"x", application_properties={"k": "v"}))
        [message] = await client.get_queue_receiver("q").receive_messages(max_wait_time=1)
    raw = message.raw_amqp_message
    assert raw.annotations[b"x-opt-sequence-number"] == 1
    assert raw.application_properties == {b"k": b"v"}
    assert raw.header.delivery_count == 0
    # As with the real SDK, every ServiceBusMessage gets a generated message_id.
    assert message.message_id


def test_explicitly_typed_amqp_values_come_back_as_plain_values() -> None:
    from azure.servicebus._pyamqp.types import TYPE, VALUE, AMQPTypes

    long_ttl = {TYPE: AMQPTypes.long, VALUE: 3_456_000_000}
    content = content_from_message(ServiceBusMessage(b"x", application_properties={"x-ms-timetolive": long_ttl}))
    assert received_application_properties(content.props) == {b"x-ms-timetolive": 3_456_000_000}
    assert content.filter_properties() == {"x-ms-timetolive": 3_456_000_000}
