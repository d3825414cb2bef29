"""The contract states the spec's names and numbers exactly."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pairedbus import contract


def test_backlog_queue_names_follow_the_spec_example() -> None:
    assert contract.backlog_queue_name("contoso", 0) == "contoso/x-servicebus-transfer/0"
    assert contract.parse_backlog_queue_name("contoso/x-servicebus-transfer/7") == ("contoso", 7)
    for other in ("contoso/x-servicebus-transfer/", "contoso/x-servicebus-transfer/07", "orders", "a/b/x-servicebus-transfer/1"):
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
    assert contract.duration_ticks(contract.TIMESPAN_MAX_ISO) == contract.TIMESPAN_MAX_TICKS == 2**63 - 1
    assert contract.iso_duration(contract.TIMESPAN_MAX_TICKS) == contract.TIMESPAN_MAX_ISO
    # timedelta loses the last 0.7 us; comparison still treats it as the same duration
    assert contract.durations_equal(contract.duration_timedelta(contract.TIMESPAN_MAX_ISO), contract.TIMESPAN_MAX_ISO)
    assert not contract.durations_equal("PT1M", "PT61S")


@pytest.mark.parametrize(
    ("text", "delta"),
    [("PT1M", timedelta(minutes=1)), ("P14D", timedelta(days=14)), ("PT0.5S", timedelta(milliseconds=500)), ("P1DT2H3M4S", timedelta(days=1, hours=2, minutes=3, seconds=4))],
)
def test_iso_durations_round_trip(text: str, delta: timedelta) -> None:
    assert contract.duration_timedelta(text) == delta
    assert contract.iso_duration(delta) == text


@pytest.mark.parametrize("bad", ["", "P", "PT", "1M", "P1Y", "PT1.12345678S", "minute"])
def test_malformed_durations_are_rejected(bad: str) -> None:
    with pytest.raises(ValueError):
        contract.duration_ticks(bad)


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
