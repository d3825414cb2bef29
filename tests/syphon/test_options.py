"""Syphon options: keyword-only, with defaults from the contract, validated at construction."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from pairedbus import durations
from pairedbus.syphon import Syphon, SyphonOptions

from .helpers import CREDENTIAL, PRIMARY, SECONDARY


def test_defaults_come_from_the_spec() -> None:
    options = SyphonOptions()
    assert options.long_poll == timedelta(minutes=15)  # the spec's 15-minute long poll
    assert options.close_fault_grace == timedelta(seconds=5)  # the spec's close/fault grace
    assert options.lock_duration == durations.duration_timedelta("PT1M")
    assert options.lock_renewal_interval == 30.0


def test_backlog_prefix_defaults_to_the_primary_namespace_name() -> None:
    syphon = Syphon(primary=PRIMARY, secondary=SECONDARY, credential=CREDENTIAL)
    assert syphon.backlog_prefix == "contoso-primary"
    assert (
        Syphon(primary=PRIMARY, secondary=SECONDARY, credential=CREDENTIAL, backlog_prefix="legacy").backlog_prefix
        == "legacy"
    )


@pytest.mark.parametrize(
    "options",
    [
        {"max_in_flight": 0},
        {"receive_batch_size": 0},
        {"receivers_per_queue": 0},
        {"receivers_per_queue": 9},
        {"senders_per_destination": 0},
        {"senders_per_destination": 17},
        {"settles_per_receiver": 0},
        {"lock_renewal_fraction": 1.0},
        {"backoff_initial": 0},
        {"backoff_initial": 10, "backoff_max": 1},
        {"retry_hold": 60},
        {"long_poll": -1},
        {"no_such_option": 1},
    ],
)
def test_invalid_options_are_refused_at_construction(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        Syphon(primary=PRIMARY, secondary=SECONDARY, credential=CREDENTIAL, **options)


def test_primary_and_secondary_must_differ() -> None:
    with pytest.raises(ValueError, match="differ"):
        Syphon(primary=PRIMARY, secondary=PRIMARY.upper(), credential=CREDENTIAL)


def test_operation_timeout_defaults_to_60_s_and_must_exceed_15_s() -> None:
    from datetime import timedelta

    from pydantic import ValidationError

    from pairedbus.syphon import SyphonOptions

    assert SyphonOptions().operation_timeout == timedelta(seconds=60)
    assert SyphonOptions(operation_timeout=timedelta(seconds=15, milliseconds=1)).operation_timeout
    with pytest.raises(ValidationError, match="operation_timeout"):
        SyphonOptions(operation_timeout=timedelta(seconds=15))


@pytest.mark.parametrize(
    ("field", "value"),
    [("max_in_flight", True), ("max_in_flight", "100"), ("receive_batch_size", 2.0), ("receivers_per_queue", "4")],
)
def test_counts_are_strict_integers(field: str, value: Any) -> None:
    with pytest.raises(ValidationError, match=field):
        SyphonOptions(**{field: value})


def test_the_backlog_queue_count_is_unknown_unless_given() -> None:
    assert SyphonOptions().backlog_queue_count is None
    assert SyphonOptions(backlog_queue_count=10).backlog_queue_count == 10
    assert SyphonOptions(backlog_queue_count=10_000).backlog_queue_count == 10_000  # a namespace's entity limit


@pytest.mark.parametrize("value", [0, -1, 10_001, True, "10", 2.0])
def test_a_backlog_queue_count_out_of_range_or_not_an_integer_is_refused_naming_the_field(value: Any) -> None:
    with pytest.raises(ValidationError) as refused:
        Syphon(primary=PRIMARY, secondary=SECONDARY, credential=CREDENTIAL, backlog_queue_count=value)
    error = refused.value.errors()[0]
    assert error["loc"] == ("backlog_queue_count",) and error["type"] != "extra_forbidden"  # a known field, refused
    assert "backlog_queue_count" in str(refused.value).splitlines()[1]
