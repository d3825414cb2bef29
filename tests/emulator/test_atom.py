"""The admin plane's documents, one conversion at a time (the wire round trips are in
test_admin_http.py)."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET

import pytest

from pairedbus import durations
from pairedbus.emulator import atom
from pairedbus.servicebus.errors import ErrorKind, ServiceError
from pairedbus.servicebus.filters import CorrelationFilter, FalseFilter, Rule, SqlAction, SqlFilter, TrueFilter

SB = "http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"


def queue_body(fields: str) -> bytes:
    return (
        f'<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml">'
        f'<QueueDescription xmlns="{SB}" xmlns:i="http://www.w3.org/2001/XMLSchema-instance">{fields}'
        "</QueueDescription></content></entry>"
    ).encode()


def test_timespan_max_is_written_to_the_tick_and_other_durations_as_the_service_writes_them() -> None:
    held = durations.duration_timedelta("P10675199DT2H48M5.4775807S")  # what the model holds
    assert atom.duration_text(held) == "P10675199DT2H48M5.4775807S"
    assert atom.duration_text(dt.timedelta(minutes=1)) == "PT1M"
    assert atom.duration_text(dt.timedelta(days=14)) == "P14D"
    assert atom.duration_text(dt.timedelta(seconds=30, microseconds=500)) == "PT30.0005S"
    # one microsecond below the maximum's floor is not the maximum
    assert atom.duration_text(held - dt.timedelta(microseconds=1)) == "P10675199DT2H48M5.477579S"


def test_instants_are_utc_with_a_z_and_no_trailing_zeros() -> None:
    assert atom.datetime_text(dt.datetime(2018, 10, 9, 19, 56, 34, 903000, tzinfo=dt.UTC)) == "2018-10-09T19:56:34.903Z"
    assert atom.datetime_text(dt.datetime(2026, 1, 1, tzinfo=dt.UTC)) == "2026-01-01T00:00:00Z"
    assert atom.datetime_text(None) == "0001-01-01T00:00:00Z"


def test_a_description_is_read_by_sdk_name_and_read_only_elements_are_ignored() -> None:
    description = atom.parse_entry(
        queue_body(
            "<LockDuration>PT30S</LockDuration><MaxDeliveryCount>2147483647</MaxDeliveryCount>"
            "<RequiresSession>true</RequiresSession><MessageCount>99</MessageCount>"
            "<ForwardTo>sb://localhost:5300/archive</ForwardTo><SizeInBytes>5</SizeInBytes>"
        )
    )
    assert atom.parse_description(description) == {
        "lock_duration": "PT30S",  # the model parses and judges durations
        "max_delivery_count": 2147483647,
        "requires_session": True,
        "forward_to": "archive",
    }


def test_an_update_clears_the_optional_elements_it_leaves_out() -> None:
    description = atom.parse_entry(queue_body("<MaxDeliveryCount>3</MaxDeliveryCount>"))
    assert atom.parse_description(description, replacing=True) == {
        "max_delivery_count": 3,
        "forward_to": None,
        "user_metadata": None,
        "forward_dead_lettered_messages_to": None,
        "max_message_size_in_kilobytes": None,
    }


@pytest.mark.parametrize(
    "body",
    [
        b"<entry><unclosed>",
        b'<feed xmlns="http://www.w3.org/2005/Atom"/>',
        queue_body("<MaxDeliveryCount>many</MaxDeliveryCount>"),
        queue_body("<RequiresSession>yes</RequiresSession>"),
    ],
)
def test_what_cannot_be_read_is_a_400(body: bytes) -> None:
    with pytest.raises(ServiceError) as refused:
        atom.parse_description(atom.parse_entry(body))
    assert refused.value.kind is ErrorKind.BAD_REQUEST  # HTTP 400 (admin_http._status_of)


@pytest.mark.parametrize(
    ("rule_filter", "action"),
    [
        (TrueFilter(), None),
        (FalseFilter(), None),
        (SqlFilter("a > @n AND b = @s", {"@n": 3, "@s": "x", "@big": 2**40, "@f": 1.5, "@b": False}), None),
        (
            CorrelationFilter(correlation_id="c", subject="l", properties={"k": "v", "n": 7}),
            SqlAction("SET x = 1"),
        ),
    ],
)
def test_rules_survive_their_round_trip_through_the_document(rule_filter, action) -> None:
    written = atom.rule_xml(Rule("r", rule_filter, action))
    assert atom.parse_rule(ET.fromstring(written)) == (rule_filter, action)


def test_key_values_carry_the_xsd_types_the_sdk_reads() -> None:
    written = atom.rule_xml(Rule("r", SqlFilter("1=1", {"@i": 1, "@l": 2**40, "@s": "x"})))
    assert 'i:type="d6p1:int">1<' in written
    assert 'i:type="d6p1:long">1099511627776<' in written
    assert 'i:type="d6p1:string">x<' in written


def test_error_details_are_escaped() -> None:
    assert atom.error(400, "a < b & c") == "<Error><Code>400</Code><Detail>a &lt; b &amp; c</Detail></Error>"
