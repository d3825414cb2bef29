"""The contract states the spec's names and numbers exactly."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pairedbus import contract, durations


def test_backlog_queue_names_follow_the_spec_example() -> None:
    assert contract.backlog_queue_name("contoso", 0) == "contoso/x-servicebus-transfer/0"
    assert contract.parse_backlog_queue_name("contoso/x-servicebus-transfer/7") == ("contoso", 7)
    for other in (
        "contoso/x-servicebus-transfer/",
        "contoso/x-servicebus-transfer/07",
        "orders",
        "a/b/x-servicebus-transfer/1",
    ):
        assert contract.parse_backlog_queue_name(other) is None
    with pytest.raises(ValueError):
        contract.backlog_queue_name("contoso", -1)


def test_the_backlog_table_is_the_documented_one() -> None:
    assert contract.BACKLOG_QUEUE_PROPERTIES == {
        "maxSizeInMegabytes": 5120,
        "maxDeliveryCount": 2147483647,
        "defaultMessageTimeToLive": "P10675199DT2H48M5.4775807S",
        "autoDeleteOnIdle": "P10675199DT2H48M5.4775807S",
        "lockDuration": "PT1M",
        "deadLetteringOnMessageExpiration": True,
        "enableBatchedOperations": True,
    }


def test_timespan_max_value_is_exact_to_the_tick() -> None:
    assert durations.duration_ticks(contract.TIMESPAN_MAX_ISO) == durations.TIMESPAN_MAX_TICKS == 2**63 - 1
    assert durations.iso_duration(durations.TIMESPAN_MAX_TICKS) == contract.TIMESPAN_MAX_ISO
    # timedelta loses the last 0.7 us; comparison still treats it as the same duration
    assert durations.durations_equal(durations.duration_timedelta(contract.TIMESPAN_MAX_ISO), contract.TIMESPAN_MAX_ISO)
    assert not durations.durations_equal("PT1M", "PT61S")


@pytest.mark.parametrize(
    ("text", "delta"),
    [
        ("PT1M", timedelta(minutes=1)),
        ("P14D", timedelta(days=14)),
        ("PT0.5S", timedelta(milliseconds=500)),
        ("P1DT2H3M4S", timedelta(days=1, hours=2, minutes=3, seconds=4)),
    ],
)
def test_iso_durations_round_trip(text: str, delta: timedelta) -> None:
    assert durations.duration_timedelta(text) == delta
    assert durations.iso_duration(delta) == text


@pytest.mark.parametrize("bad", ["", "P", "PT", "1M", "P1Y", "PT1.12345678S", "minute"])
def test_malformed_durations_are_rejected(bad: str) -> None:
    with pytest.raises(ValueError):
        durations.duration_ticks(bad)


def test_backlog_values_compare_durations_as_durations_and_booleans_strictly() -> None:
    assert contract.backlog_value_matches("lockDuration", "PT1M", timedelta(seconds=60))
    assert not contract.backlog_value_matches("lockDuration", "PT1M", "not a duration")
    assert not contract.backlog_value_matches("enableBatchedOperations", True, 1)
    assert contract.backlog_value_matches("maxSizeInMegabytes", 5120, 5120.0)  # the Pulumi wire sends doubles


def test_reported_partitioned_size_maps_back_to_the_configured_one() -> None:
    assert contract.configured_size_mb(81920, partitioned=True, expected_mb=5120) == 5120
    assert contract.configured_size_mb(10240, partitioned=True, expected_mb=5120) == 5120
    assert contract.configured_size_mb(81920, partitioned=False, expected_mb=5120) == 81920
    assert contract.configured_size_mb(3072, partitioned=True, expected_mb=5120) == 3072


def test_syphon_poll_arithmetic_matches_the_spec() -> None:
    # 10 backlog queues: 40 receives an hour, 960 a day, 28,800 in 30 days.
    per_hour = 10 * contract.SYPHON_RECEIVES_PER_HOUR_PER_QUEUE
    assert (per_hour, per_hour * 24, per_hour * 24 * 30) == (40, 960, 28_800)


def test_the_erratum_keeps_the_path_alias_for_the_destination_alone() -> None:
    assert contract.ALIAS_SCHEDULED_ENQUEUE_TIME == "x-ms-scheduledenqueuetimeutc"
    assert len(set(contract.ALIASES)) == 4


# --- The spec's values where the runtime puts them to use, as the literals the spec states -----
# (scripts/mutation-check changes each constant of the contract in a copy of the tree and checks
# that one of these tests fails.)


def _text(mapping: dict) -> dict:
    return {
        (k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
        for k, v in mapping.items()
    }


def test_a_parked_message_carries_the_spec_alias_names() -> None:
    from datetime import UTC, datetime

    from azure.servicebus import ServiceBusMessage

    from pairedbus.pairing.aliasing import park_message

    message = ServiceBusMessage(
        b"x",
        session_id="s-1",
        time_to_live=timedelta(seconds=90),
        scheduled_enqueue_time_utc=datetime(2030, 1, 1, tzinfo=UTC),
    )
    parked = _text(park_message(message, "orders").application_properties)
    assert parked["x-ms-path"] == "orders"
    assert parked["x-ms-sessionid"] == "s-1"
    assert parked["x-ms-timetolive"] == 90_000
    assert "x-ms-scheduledenqueuetimeutc" in parked  # erratum: not x-ms-path
    assert set(parked) == {"x-ms-path", "x-ms-sessionid", "x-ms-timetolive", "x-ms-scheduledenqueuetimeutc"}


def test_the_syphon_reads_the_spec_alias_names_back() -> None:
    from datetime import UTC, datetime

    from azure.servicebus import ServiceBusMessage

    from pairedbus.pairing.aliasing import restore_message

    backlog = ServiceBusMessage(
        b"x",
        application_properties={
            "x-ms-path": "orders",
            "x-ms-sessionid": "s-1",
            "x-ms-timetolive": 90_000,
            "x-ms-scheduledenqueuetimeutc": "2030-01-01T00:00:00+00:00",
        },
    )
    restored = restore_message(backlog, now=datetime(2029, 1, 1, tzinfo=UTC))
    assert restored.destination == "orders"
    assert restored.message.session_id == "s-1"
    assert restored.message.scheduled_enqueue_time_utc == datetime(2030, 1, 1, tzinfo=UTC)
    assert restored.message.application_properties is None  # every alias was recognised


def test_a_ping_is_an_empty_message_of_the_ping_content_type_living_one_second() -> None:
    from pairedbus.pairing.ping import is_ping, ping_message

    ping = ping_message(session=False)
    assert ping.content_type == "application/vnd.ms-servicebus-ping"
    assert ping.time_to_live == timedelta(seconds=1)
    assert b"".join(ping.body) == b""

    class Received:
        content_type = "application/vnd.ms-servicebus-ping"

    assert is_ping(Received())


def test_the_close_fault_grace_is_five_seconds_in_the_syphon_and_the_client() -> None:
    from pairedbus.sender import PairedNamespaceClient
    from pairedbus.syphon import SyphonOptions

    assert SyphonOptions().close_fault_grace == timedelta(seconds=5)
    client = PairedNamespaceClient("contoso.servicebus.windows.net", "contoso-dr.servicebus.windows.net", object())
    assert client.close_fault_grace == timedelta(seconds=5)


def test_operation_timeouts_default_to_60_s_and_must_exceed_15_s() -> None:
    from pydantic import ValidationError

    from pairedbus.sender import SendAvailabilityOptions
    from pairedbus.syphon import SyphonOptions

    for options in (SendAvailabilityOptions, SyphonOptions):
        assert options().operation_timeout == timedelta(seconds=60)
        assert options(operation_timeout=timedelta(seconds=15.001)).operation_timeout == timedelta(seconds=15.001)
        with pytest.raises(ValidationError):
            options(operation_timeout=timedelta(seconds=15))


def test_pings_default_to_once_a_minute_and_the_syphon_polls_for_15_minutes() -> None:
    from pairedbus.sender import SendAvailabilityOptions
    from pairedbus.syphon import SyphonOptions

    assert SendAvailabilityOptions().ping_primary_interval == timedelta(minutes=1)
    assert SyphonOptions().long_poll == timedelta(minutes=15)
    assert SyphonOptions().lock_duration == timedelta(minutes=1)  # the backlog table's PT1M


def test_a_parked_message_may_take_up_to_256_kb_and_not_one_byte_more() -> None:
    from azure.servicebus import ServiceBusMessage

    from pairedbus.pairing.aliasing import ParkedMessageTooLargeError, park_message, parked_copy
    from pairedbus.sdk import encoded_size

    overhead = encoded_size(park_message(ServiceBusMessage(b"x" * 1000), "orders")) - 1000
    fits = ServiceBusMessage(b"x" * (262_144 - overhead))
    assert encoded_size(park_message(fits, "orders")) == 262_144
    parked_copy(fits, "orders")
    with pytest.raises(ParkedMessageTooLargeError):
        parked_copy(ServiceBusMessage(b"x" * (262_145 - overhead)), "orders")


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("contoso", True),
        ("abcdef", True),  # 6 characters, the least
        ("a" * 50, True),  # 50, the most
        ("contoso-weu-2", True),
        ("abcde", False),
        ("a" * 51, False),
        ("1contoso", False),  # starts with a letter
        ("contoso-", False),  # ends with a letter or digit
        ("contoso_weu", False),
        ("contoso.weu", False),
        ("contoso-sb", False),
        ("contoso-SB", False),  # the name is a DNS label: any letter case
        ("contoso-mgmt", False),
        ("contoso-Mgmt", False),
    ],
)
def test_the_namespace_name_rule_is_the_services(name: str, valid: bool) -> None:
    assert contract.is_namespace_name(name) is valid


def test_the_namespace_name_rule_in_words_names_every_bound() -> None:
    assert contract.NAMESPACE_NAME_RULE == (
        "6-50 letters, digits or '-', starting with a letter, ending with a letter or digit, "
        "not ending in -sb or -mgmt (in any letter case)"
    )


def test_the_backlog_queue_count_is_one_stack_config_key() -> None:
    from pairedbus.iac.config import StackConfig

    assert contract.BACKLOG_QUEUE_COUNT_KEY == "backlogQueueCount"
    assert StackConfig.model_fields["backlog_queue_count"].alias == "backlogQueueCount"


def test_the_backlog_queue_count_takes_one_to_ten_thousand_wherever_it_is_read() -> None:
    from pydantic import ValidationError

    from pairedbus.iac.config import StackConfig
    from pairedbus.sender import SendAvailabilityOptions
    from pairedbus.syphon import SyphonOptions

    # partitioning.md: a namespace holds at most 10,000 entities; the spec's table needs index 0
    assert (contract.MIN_BACKLOG_QUEUE_COUNT, contract.MAX_BACKLOG_QUEUE_COUNT) == (1, 10_000)
    for count, accepted in ((1, True), (10_000, True), (0, False), (10_001, False)):
        for model in (SendAvailabilityOptions, SyphonOptions):
            try:
                model.model_validate({"backlog_queue_count": count})
                took = True
            except ValidationError:
                took = False
            assert took is accepted, (model.__name__, count)
    field = StackConfig.model_fields["backlog_queue_count"]
    bounds = {type(m).__name__: m for m in field.metadata}
    assert (bounds["Ge"].ge, bounds["Le"].le) == (1, 10_000)
