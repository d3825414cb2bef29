from datetime import timedelta

import pytest
from pydantic import ValidationError

from pairedbus import contract
from pairedbus.sender import SendAvailabilityOptions


def test_defaults_come_from_the_contract():
    options = SendAvailabilityOptions()
    assert options.backlog_queue_count == contract.DEFAULT_BACKLOG_QUEUE_COUNT == 10
    assert options.failover_interval == contract.DEFAULT_FAILOVER_INTERVAL == timedelta(minutes=1)
    assert options.ping_primary_interval == contract.DEFAULT_PING_PRIMARY_INTERVAL == timedelta(minutes=1)
    assert options.enable_syphon is False


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("failover_interval", timedelta(0)),
        ("failover_interval", timedelta(minutes=60)),
        ("ping_primary_interval", timedelta(seconds=1)),
        ("ping_primary_interval", timedelta(minutes=30)),
        ("backlog_queue_count", 1),
    ],
)
def test_bounds_are_inclusive(field, value):
    assert getattr(SendAvailabilityOptions(**{field: value}), field) == value


def test_seconds_are_read_as_durations():
    assert SendAvailabilityOptions(failover_interval=0.05).failover_interval == timedelta(milliseconds=50)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("failover_interval", timedelta(seconds=-1)),
        ("failover_interval", timedelta(minutes=60, microseconds=1)),
        ("ping_primary_interval", timedelta(milliseconds=999)),
        ("ping_primary_interval", timedelta(minutes=30, seconds=1)),
        ("backlog_queue_count", 0),
    ],
)
def test_out_of_range_values_are_rejected_naming_the_field(field, value):
    with pytest.raises(ValidationError) as caught:
        SendAvailabilityOptions(**{field: value})
    assert caught.value.errors()[0]["loc"] == (field,)
    assert field in str(caught.value)


def test_unknown_options_are_rejected():
    with pytest.raises(ValidationError, match="failover_intervall"):
        SendAvailabilityOptions(failover_intervall=1)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("backlog_queue_count", True),  # a bool is not a count
        ("backlog_queue_count", "5"),
        ("backlog_queue_count", 5.0),
        ("backlog_queue_count", 10**9),  # above the namespace's entity quota
        ("backlog_queue_count", 10_001),
        ("enable_syphon", "yes"),
        ("enable_syphon", 1),
        ("failover_interval", "5"),
        ("failover_interval", True),
        ("operation_timeout", 15),  # partitioning.md: must exceed 15 s
        ("operation_timeout", timedelta(seconds=14)),
    ],
)
def test_lax_values_are_refused_naming_the_option(field, value):
    with pytest.raises(ValidationError) as caught:
        SendAvailabilityOptions(**{field: value})
    assert caught.value.errors()[0]["loc"][0] == field


def test_operation_timeout_defaults_to_the_recommended_60_s_and_accepts_just_above_15_s():
    assert SendAvailabilityOptions().operation_timeout == timedelta(seconds=60)
    assert SendAvailabilityOptions(operation_timeout=15.001).operation_timeout > timedelta(seconds=15)
    assert SendAvailabilityOptions(backlog_queue_count=10_000).backlog_queue_count == 10_000


def test_a_short_failover_interval_replaces_the_sdks_retry_policy_unless_the_caller_set_one():
    from pairedbus.sender.options import sdk_client_kwargs

    short = SendAvailabilityOptions(failover_interval=timedelta(seconds=1))
    default = SendAvailabilityOptions()
    assert sdk_client_kwargs(short, None) == {"retry_total": 1, "retry_backoff_factor": 0.5}
    assert sdk_client_kwargs(short, {"retry_total": 5}) == {"retry_total": 5}
    assert sdk_client_kwargs(short, {"logging_enable": True}) == {
        "logging_enable": True,
        "retry_total": 1,
        "retry_backoff_factor": 0.5,
    }
    assert sdk_client_kwargs(default, None) == {}  # 60 s outlasts the SDK's own give-up (16 s)
    assert sdk_client_kwargs(SendAvailabilityOptions(failover_interval=timedelta(seconds=16)), None) == {}
