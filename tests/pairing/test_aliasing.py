"""Parking and restoring, through the SDK's own AMQP encoder and decoder (what the wire does)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from azure.servicebus import ServiceBusMessage, ServiceBusReceivedMessage
from azure.servicebus._common.constants import _X_OPT_ENQUEUED_TIME
from azure.servicebus._pyamqp._encode import encode_payload
from azure.servicebus._transport._pyamqp_transport import PyamqpTransport
from azure.servicebus.exceptions import MessageSizeExceededError

from pairedbus import contract
from pairedbus.pairing.aliasing import (
    DEAD_LETTER_MALFORMED_ALIAS,
    DEAD_LETTER_MISSING_PATH,
    DEAD_LETTER_UNSUPPORTED_PROPERTY,
    ExpiredInBacklogError,
    MalformedAliasError,
    ParkedMessageTooLargeError,
    UnrestorableMessage,
    build_message,
    epoch_ms,
    from_epoch_ms,
    park_message,
    parked_copy,
    restore_message,
    set_time_to_live_ms,
)
from pairedbus.pairing.ping import is_ping
from pairedbus.sdk import encoded_size

ENQUEUED = datetime(2026, 11, 21, 12, 0, 0, tzinfo=UTC)


def over_the_wire(message: ServiceBusMessage, *, enqueued: datetime = ENQUEUED) -> ServiceBusReceivedMessage:
    """What a receiver gets: the message encoded by the SDK, stamped by the broker, decoded by the SDK."""
    raw = message.raw_amqp_message
    raw.annotations = {**(raw.annotations or {}), _X_OPT_ENQUEUED_TIME: enqueued}
    payload = encode_payload(bytearray(), PyamqpTransport.to_outgoing_amqp_message(raw))
    return ServiceBusReceivedMessage.from_bytes(bytes(payload))


def ttl_ms(message: ServiceBusMessage) -> int | None:
    return message.raw_amqp_message.header.time_to_live


def full_message(**overrides: object) -> ServiceBusMessage:
    fields: dict[str, object] = {
        "application_properties": {"tenant": "contoso", "attempt": 3, "urgent": True, "ratio": 0.25},
        "session_id": "session-7",
        "message_id": "order-42",
        "content_type": "application/json",
        "correlation_id": "corr-1",
        "subject": "order.created",
        "to": "billing",
        "reply_to": "replies",
        "reply_to_session_id": "reply-session",
        "partition_key": "session-7",
        "time_to_live": timedelta(minutes=5),
        "scheduled_enqueue_time_utc": datetime(2026, 11, 21, 12, 30, 0, 250_000, tzinfo=UTC),
    }
    fields.update(overrides)
    return ServiceBusMessage(b'{"order": 42}', **fields)  # type: ignore[arg-type]


def test_parked_message_carries_routing_in_aliases_and_has_none_of_its_own() -> None:
    parked = park_message(full_message(), "orders")

    props = parked.application_properties
    assert props is not None
    assert props[contract.ALIAS_PATH] == "orders"
    assert props[contract.ALIAS_SESSION_ID] == "session-7"
    assert props[contract.ALIAS_TIME_TO_LIVE] == 300_000
    assert props[contract.ALIAS_SCHEDULED_ENQUEUE_TIME] == datetime(2026, 11, 21, 12, 30, 0, 250_000, tzinfo=UTC)
    assert parked.session_id is None
    assert parked.time_to_live is None
    assert parked.scheduled_enqueue_time_utc is None
    assert parked.partition_key is None  # it only mirrored the session id


def test_parked_message_keeps_every_other_property() -> None:
    parked = park_message(full_message(), "orders")

    assert b"".join(parked.body) == b'{"order": 42}'
    assert (parked.message_id, parked.content_type, parked.correlation_id, parked.subject) == (
        "order-42",
        "application/json",
        "corr-1",
        "order.created",
    )
    assert (parked.to, parked.reply_to, parked.reply_to_session_id) == ("billing", "replies", "reply-session")
    assert {k: v for k, v in parked.application_properties.items() if k not in contract.ALIASES} == {
        "tenant": "contoso",
        "attempt": 3,
        "urgent": True,
        "ratio": 0.25,
    }


def test_parking_leaves_the_original_message_unchanged() -> None:
    original = full_message()
    park_message(original, "orders")
    assert original.session_id == "session-7"
    assert contract.ALIAS_PATH not in original.application_properties


def test_round_trip_restores_every_property() -> None:
    original = full_message()
    received = over_the_wire(park_message(original, "orders"))

    restored = restore_message(received, now=ENQUEUED)

    assert restored.destination == "orders"
    msg = restored.message
    assert b"".join(msg.body) == b'{"order": 42}'
    assert msg.session_id == "session-7"
    assert msg.partition_key == "session-7"
    assert msg.message_id == "order-42"
    assert msg.content_type == "application/json"
    assert msg.correlation_id == "corr-1"
    assert msg.subject == "order.created"
    assert msg.to == "billing"
    assert msg.reply_to == "replies"
    assert msg.reply_to_session_id == "reply-session"
    assert msg.application_properties == {"tenant": "contoso", "attempt": 3, "urgent": True, "ratio": 0.25}
    assert msg.scheduled_enqueue_time_utc == datetime(2026, 11, 21, 12, 30, 0, 250_000, tzinfo=UTC)
    # Scheduled later than the backlog enqueue: the TTL clock has not started, all of it is left.
    assert ttl_ms(msg) == 300_000


def test_a_restored_ping_is_told_from_the_restored_record_without_reading_the_message() -> None:
    ping_type = "application/vnd.ms-servicebus-ping"
    ping = restore_message(over_the_wire(park_message(full_message(content_type=ping_type), "o")), now=ENQUEUED)
    order = restore_message(over_the_wire(park_message(full_message(), "orders")), now=ENQUEUED)
    assert (ping.content_type, order.content_type) == (ping_type, "application/json")
    assert is_ping(ping) and not is_ping(order)


def test_restored_message_survives_the_wire_to_the_primary() -> None:
    restored = restore_message(over_the_wire(park_message(full_message(), "orders")), now=ENQUEUED)
    at_primary = over_the_wire(restored.message)
    assert at_primary.session_id == "session-7"
    assert at_primary.application_properties == {b"tenant": b"contoso", b"attempt": 3, b"urgent": True, b"ratio": 0.25}
    assert at_primary.time_to_live == timedelta(minutes=5)


def test_round_trip_of_a_plain_message_adds_nothing() -> None:
    restored = restore_message(over_the_wire(park_message(ServiceBusMessage(b"x"), "q")), now=ENQUEUED)
    msg = restored.message
    assert (msg.session_id, msg.partition_key, msg.time_to_live, msg.scheduled_enqueue_time_utc) == (None,) * 4
    assert msg.application_properties is None


@pytest.mark.parametrize(("body", "expected"), [("text body", b"text body"), (b"", b""), (b"\x00\xff", b"\x00\xff")])
def test_round_trip_keeps_body_bytes(body: str | bytes, expected: bytes) -> None:
    restored = restore_message(over_the_wire(park_message(ServiceBusMessage(body), "q")), now=ENQUEUED)
    assert b"".join(restored.message.body) == expected


def test_round_trip_keeps_an_empty_body_empty() -> None:
    restored = restore_message(over_the_wire(park_message(ServiceBusMessage(None), "q")), now=ENQUEUED)
    assert restored.message.body is None


def test_partition_key_without_session_is_kept_on_the_parked_message_and_restored() -> None:
    parked = park_message(ServiceBusMessage(b"x", partition_key="pk-1"), "q")
    assert parked.partition_key == "pk-1"
    restored = restore_message(over_the_wire(parked), now=ENQUEUED)
    assert (restored.message.partition_key, restored.message.session_id) == ("pk-1", None)


def test_session_without_partition_key_is_restored_with_the_session_as_key() -> None:
    parked = park_message(ServiceBusMessage(b"x", session_id="s"), "q")
    restored = restore_message(over_the_wire(parked), now=ENQUEUED)
    assert (restored.message.session_id, restored.message.partition_key) == ("s", "s")


def test_time_to_live_keeps_milliseconds() -> None:
    message = ServiceBusMessage(b"x")
    message.raw_amqp_message.header.time_to_live = 90_123
    restored = restore_message(over_the_wire(park_message(message, "q")), now=ENQUEUED)
    assert ttl_ms(restored.message) == 90_123


def test_time_to_live_beyond_int32_milliseconds_round_trips() -> None:
    forty_days = timedelta(days=40)
    restored = restore_message(
        over_the_wire(park_message(ServiceBusMessage(b"x", time_to_live=forty_days), "q")), now=ENQUEUED
    )
    assert restored.message.time_to_live == forty_days


def test_restored_time_to_live_is_what_the_backlog_left() -> None:
    received = over_the_wire(park_message(ServiceBusMessage(b"x", time_to_live=timedelta(minutes=1)), "q"))
    restored = restore_message(received, now=ENQUEUED + timedelta(seconds=20, milliseconds=500))
    assert ttl_ms(restored.message) == 39_500


def test_a_sub_second_remainder_stays_a_time_to_live_and_never_becomes_unlimited() -> None:
    received = over_the_wire(park_message(ServiceBusMessage(b"x", time_to_live=timedelta(seconds=10)), "q"))
    restored = restore_message(received, now=ENQUEUED + timedelta(seconds=9, milliseconds=600))
    assert ttl_ms(restored.message) == 400
    assert restored.message.time_to_live == timedelta(milliseconds=400)


@pytest.mark.parametrize("waited", [timedelta(seconds=10), timedelta(hours=3)])
def test_time_to_live_spent_in_the_backlog_is_expired_with_the_spec_reason(waited: timedelta) -> None:
    received = over_the_wire(park_message(ServiceBusMessage(b"x", time_to_live=timedelta(seconds=10)), "q"))
    with pytest.raises(ExpiredInBacklogError) as caught:
        restore_message(received, now=ENQUEUED + waited)
    assert caught.value.reason == contract.DEAD_LETTER_TTL_EXPIRED_IN_BACKLOG
    assert "10000 ms" in caught.value.description


def test_a_scheduled_message_time_to_live_starts_at_its_scheduled_time() -> None:
    scheduled = ENQUEUED + timedelta(minutes=10)
    message = ServiceBusMessage(b"x", time_to_live=timedelta(minutes=1), scheduled_enqueue_time_utc=scheduled)
    received = over_the_wire(park_message(message, "q"))
    restored = restore_message(received, now=scheduled + timedelta(seconds=15))
    assert ttl_ms(restored.message) == 45_000


def test_missing_path_is_unrestorable_with_its_own_reason() -> None:
    received = over_the_wire(ServiceBusMessage(b"x", application_properties={"tenant": "a"}))
    with pytest.raises(MalformedAliasError) as caught:
        restore_message(received, now=ENQUEUED)
    assert caught.value.reason == DEAD_LETTER_MISSING_PATH


@pytest.mark.parametrize(
    "aliases",
    [
        {contract.ALIAS_PATH: ""},
        {contract.ALIAS_PATH: 7},
        {contract.ALIAS_PATH: "q", contract.ALIAS_TIME_TO_LIVE: "5000"},
        {contract.ALIAS_PATH: "q", contract.ALIAS_TIME_TO_LIVE: -5},
        {contract.ALIAS_PATH: "q", contract.ALIAS_TIME_TO_LIVE: 0},
        {contract.ALIAS_PATH: "q", contract.ALIAS_TIME_TO_LIVE: True},
        {contract.ALIAS_PATH: "q", contract.ALIAS_SCHEDULED_ENQUEUE_TIME: "next tuesday"},
        {contract.ALIAS_PATH: "q", contract.ALIAS_SCHEDULED_ENQUEUE_TIME: 1.5},
        {contract.ALIAS_PATH: "q", contract.ALIAS_SESSION_ID: ""},
    ],
)
def test_malformed_alias_is_unrestorable(aliases: dict[str, object]) -> None:
    with pytest.raises(MalformedAliasError) as caught:
        restore_message(over_the_wire(ServiceBusMessage(b"x", application_properties=aliases)), now=ENQUEUED)
    assert caught.value.reason == DEAD_LETTER_MALFORMED_ALIAS
    assert isinstance(caught.value, UnrestorableMessage)


def test_scheduled_time_as_iso_string_is_accepted() -> None:
    aliases = {contract.ALIAS_PATH: "q", contract.ALIAS_SCHEDULED_ENQUEUE_TIME: "2030-01-01T00:00:00Z"}
    restored = restore_message(over_the_wire(ServiceBusMessage(b"x", application_properties=aliases)), now=ENQUEUED)
    assert restored.message.scheduled_enqueue_time_utc == datetime(2030, 1, 1, tzinfo=UTC)


def test_restore_reads_str_keys_as_well_as_the_wire_bytes_keys() -> None:
    # A message that never crossed the wire (str keys, datetime values) restores the same way.
    parked = park_message(full_message(), "orders")
    restored = restore_message(parked, now=ENQUEUED)
    assert restored.destination == "orders"
    assert restored.message.session_id == "session-7"
    assert restored.message.application_properties == {"tenant": "contoso", "attempt": 3, "urgent": True, "ratio": 0.25}


def test_a_property_that_is_not_utf8_text_is_unrestorable() -> None:
    parked = park_message(ServiceBusMessage(b"x"), "q")
    parked.application_properties[b"blob"] = b"\xff\xfe"
    with pytest.raises(MalformedAliasError) as caught:
        restore_message(parked, now=ENQUEUED)
    assert caught.value.reason == DEAD_LETTER_UNSUPPORTED_PROPERTY


def test_uuid_property_round_trips() -> None:
    value = uuid.UUID("12345678-1234-5678-1234-567812345678")
    parked = park_message(ServiceBusMessage(b"x", application_properties={"id": value}), "q")
    restored = restore_message(over_the_wire(parked), now=ENQUEUED)
    assert restored.message.application_properties == {"id": value}


@pytest.mark.parametrize("alias", contract.ALIASES)
def test_parking_refuses_a_message_already_using_an_alias_name(alias: str) -> None:
    with pytest.raises(ValueError, match=alias):
        park_message(ServiceBusMessage(b"x", application_properties={alias: "mine"}), "q")


def test_parking_needs_a_destination() -> None:
    with pytest.raises(ValueError, match="destination"):
        park_message(ServiceBusMessage(b"x"), "")


def test_parked_copy_is_the_parked_message_when_it_fits() -> None:
    message = ServiceBusMessage(b"x" * 100)
    parked = parked_copy(message, "orders")
    assert encoded_size(parked) == encoded_size(park_message(message, "orders")) > encoded_size(message)


def test_a_message_that_only_fits_without_aliases_is_refused_with_a_size_error() -> None:
    message = ServiceBusMessage(b"x")
    body_room = contract.MAX_MESSAGE_SIZE_BYTES - encoded_size(message)
    near_limit = ServiceBusMessage(b"x" * (body_room - 4))
    assert encoded_size(near_limit) <= contract.MAX_MESSAGE_SIZE_BYTES

    with pytest.raises(ParkedMessageTooLargeError) as caught:
        parked_copy(near_limit, "orders")

    assert isinstance(caught.value, MessageSizeExceededError)
    assert caught.value.size > contract.MAX_MESSAGE_SIZE_BYTES
    assert "orders" in str(caught.value)


@pytest.mark.parametrize("scheduled", [None, datetime(2030, 1, 1, tzinfo=UTC)])
@pytest.mark.parametrize("body", [b"payload", None])
def test_build_message_encodes_exactly_as_the_public_constructor(
    body: bytes | None, scheduled: datetime | None
) -> None:
    fields: dict[str, object] = {
        "application_properties": {"tenant": "contoso", "n": 1},
        "session_id": "s",
        "message_id": "m-1",
        "content_type": "application/json",
        "correlation_id": "c",
        "subject": "subj",
        "partition_key": "s",
        "to": "t",
        "reply_to": "r",
        "reply_to_session_id": "rs",
        "scheduled_enqueue_time_utc": scheduled,
    }
    built = build_message(body, **fields)  # type: ignore[arg-type]
    public = ServiceBusMessage(body, **fields)  # type: ignore[arg-type]

    def wire(message: ServiceBusMessage) -> bytes:
        return bytes(encode_payload(bytearray(), PyamqpTransport.to_outgoing_amqp_message(message.raw_amqp_message)))

    assert wire(built) == wire(public)


def test_build_message_gives_a_scheduled_message_an_id_as_the_sdk_does() -> None:
    built = build_message(b"x", scheduled_enqueue_time_utc=datetime(2030, 1, 1, tzinfo=UTC))
    assert built.message_id


def test_build_message_keeps_time_to_live_milliseconds() -> None:
    built = build_message(b"x", time_to_live_ms=1_500)
    assert built.time_to_live == timedelta(milliseconds=1_500)
    assert over_the_wire(built).time_to_live == timedelta(milliseconds=1_500)


def test_restore_reads_a_naive_now_as_utc() -> None:
    received = over_the_wire(park_message(ServiceBusMessage(b"x", time_to_live=timedelta(seconds=10)), "q"))
    restored = restore_message(received, now=ENQUEUED.replace(tzinfo=None) + timedelta(seconds=4))
    assert ttl_ms(restored.message) == 6_000


# --- pinned by mutation testing (issue 22) ----------------------------------------------------


def test_a_session_id_of_exactly_128_characters_is_restored_and_129_is_refused() -> None:
    longest = "s" * 128
    aliases = {contract.ALIAS_PATH: "q", contract.ALIAS_SESSION_ID: longest}
    restored = restore_message(over_the_wire(ServiceBusMessage(b"x", application_properties=aliases)), now=ENQUEUED)
    assert restored.message.session_id == longest and restored.message.partition_key == longest
    too_long = {**aliases, contract.ALIAS_SESSION_ID: "s" * 129}
    with pytest.raises(MalformedAliasError) as caught:
        restore_message(over_the_wire(ServiceBusMessage(b"x", application_properties=too_long)), now=ENQUEUED)
    assert caught.value.reason == DEAD_LETTER_MALFORMED_ALIAS
    assert caught.value.description == f"x-ms-sessionid must be a string of 1 to 128 characters, got {'s' * 129!r}"


def test_a_naive_scheduled_time_is_read_as_utc_when_parked_and_restored() -> None:
    naive = datetime(2030, 1, 1, 8, 30, 0, 250_000)
    parked = park_message(ServiceBusMessage(b"x", scheduled_enqueue_time_utc=naive), "q")
    assert parked.application_properties[contract.ALIAS_SCHEDULED_ENQUEUE_TIME] == naive.replace(tzinfo=UTC)
    as_text = {contract.ALIAS_PATH: "q", contract.ALIAS_SCHEDULED_ENQUEUE_TIME: "2030-01-01T08:30:00"}
    restored = restore_message(ServiceBusMessage(b"x", application_properties=as_text), now=ENQUEUED)
    assert restored.message.scheduled_enqueue_time_utc == datetime(2030, 1, 1, 8, 30, tzinfo=UTC)
    as_datetime = {contract.ALIAS_PATH: "q", contract.ALIAS_SCHEDULED_ENQUEUE_TIME: naive}
    restored = restore_message(ServiceBusMessage(b"x", application_properties=as_datetime), now=ENQUEUED)
    assert restored.message.scheduled_enqueue_time_utc == naive.replace(tzinfo=UTC)


def test_a_scheduled_time_as_epoch_milliseconds_is_restored() -> None:
    aliases = {contract.ALIAS_PATH: "q", contract.ALIAS_SCHEDULED_ENQUEUE_TIME: 1_893_456_000_250}
    restored = restore_message(ServiceBusMessage(b"x", application_properties=aliases), now=ENQUEUED)
    assert restored.message.scheduled_enqueue_time_utc == datetime(2030, 1, 1, 0, 0, 0, 250_000, tzinfo=UTC)


def test_a_restored_scheduled_message_without_an_id_gets_a_fresh_uuid() -> None:
    aliases = {contract.ALIAS_PATH: "q", contract.ALIAS_SCHEDULED_ENQUEUE_TIME: "2030-01-01T00:00:00Z"}
    first = restore_message(ServiceBusMessage(b"x", application_properties=aliases), now=ENQUEUED).message
    second = restore_message(ServiceBusMessage(b"x", application_properties=aliases), now=ENQUEUED).message
    assert str(uuid.UUID(first.message_id)) == first.message_id
    assert first.message_id != second.message_id
    kept = restore_message(ServiceBusMessage(b"x", message_id="m-1", application_properties=aliases), now=ENQUEUED)
    assert kept.message.message_id == "m-1"


def test_the_epoch_helpers_are_inverse_and_read_naive_as_utc() -> None:
    moment = datetime(2030, 1, 1, 0, 0, 0, 250_000, tzinfo=UTC)
    assert epoch_ms(moment) == 1_893_456_000_250
    assert epoch_ms(moment.replace(tzinfo=None)) == 1_893_456_000_250
    assert from_epoch_ms(1_893_456_000_250) == moment


def test_a_time_to_live_must_be_positive_and_sets_the_absolute_expiry() -> None:
    message = build_message(b"x")
    with pytest.raises(ValueError, match="time to live must be positive, got 0 ms"):
        set_time_to_live_ms(message, 0)
    set_time_to_live_ms(message, 2_500)
    properties = message.raw_amqp_message.properties
    assert message.raw_amqp_message.header.time_to_live == 2_500
    assert properties.absolute_expiry_time - properties.creation_time == 2_500


def test_the_absolute_expiry_is_clamped_to_the_services_ceiling() -> None:
    message = build_message(b"x")
    set_time_to_live_ms(message, 2**62)
    assert message.raw_amqp_message.properties.absolute_expiry_time == 253_402_243_199_000
