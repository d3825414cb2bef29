"""ISO 8601 <-> ticks, exact, and the value handed to the SDK never above the input."""

from __future__ import annotations

from datetime import timedelta

import isodate
import pytest

from pairedbus import durations


def test_timespan_max_value_to_the_tick() -> None:
    assert durations.duration_ticks("P10675199DT2H48M5.4775807S") == 2**63 - 1 == durations.TIMESPAN_MAX_TICKS
    assert durations.iso_duration(2**63 - 1) == "P10675199DT2H48M5.4775807S"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # TimeSpan.MaxValue: isodate (the SDK's serializer) would write ...5.477581S, 3 ticks above.
        ("P10675199DT2H48M5.4775807S", "P10675199DT2H48M5.47758S"),
        ("PT1M", "PT1M"),
        ("PT0.0000009S", "P0D"),  # 9 ticks: below a microsecond, toward zero
        ("P14D", "P14D"),
    ],
)
def test_wire_duration_rounds_down_and_serializes_at_or_below_the_input(text: str, expected: str) -> None:
    wire = durations.wire_duration(text)
    assert isinstance(wire, timedelta)
    assert isodate.duration_isoformat(wire) == expected
    assert 0 <= durations.duration_ticks(text) - durations.duration_ticks(wire) < 10


def test_wire_duration_refuses_a_value_above_timespan_max() -> None:
    with pytest.raises(ValueError, match=r"exceeds TimeSpan\.MaxValue"):
        durations.wire_duration("P10675199DT2H48M5.4775808S")
    with pytest.raises(ValueError, match=r"exceeds TimeSpan\.MaxValue"):
        durations.wire_duration("P10675199DT2H48M5.477581S")


def test_duration_timedelta_rounds_toward_zero() -> None:
    assert durations.duration_timedelta("PT0.0000019S") == timedelta(microseconds=1)


# --- pinned by mutation testing (issue 22) ----------------------------------------------------


@pytest.mark.parametrize("text", ["P", "PT", "P1DT", "p1d", "PT1.00000001S", "1D", ""])
def test_what_is_not_an_iso_duration_is_refused_by_name(text: str) -> None:
    with pytest.raises(ValueError) as caught:
        durations.duration_ticks(text)
    assert str(caught.value) == f"not an ISO 8601 duration: {text!r}"


@pytest.mark.parametrize("value", [5, None, 1.5])
def test_a_value_that_is_neither_text_nor_timedelta_is_a_value_error(value: object) -> None:
    with pytest.raises(ValueError, match="not an ISO 8601 duration"):
        durations.duration_ticks(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, "PT0S"),
        (timedelta(0), "PT0S"),
        ("PT0S", "PT0S"),
        ("P0D", "PT0S"),
        (10_000_000, "PT1S"),
        (timedelta(seconds=5), "PT5S"),
        ("PT10.5S", "PT10.5S"),
        (timedelta(milliseconds=500), "PT0.5S"),
        (1, "PT0.0000001S"),
        ("PT90S", "PT1M30S"),
        (timedelta(hours=1), "PT1H"),
        (timedelta(days=1), "P1D"),
        (timedelta(days=2, hours=3, minutes=4, seconds=5), "P2DT3H4M5S"),
        ("P1DT0H0M0.25S", "P1DT0.25S"),
    ],
)
def test_iso_duration_writes_as_service_bus_does(value: object, expected: str) -> None:
    text = durations.iso_duration(value)  # type: ignore[arg-type]
    assert text == expected
    assert durations.duration_ticks(text) == (value if isinstance(value, int) else durations.duration_ticks(value))  # type: ignore[arg-type]


def test_durations_equal_within_a_microsecond_only() -> None:
    assert durations.durations_equal("PT1M", timedelta(minutes=1))
    assert durations.durations_equal("PT0.0000009S", "PT0S")  # 9 ticks: below a microsecond
    assert not durations.durations_equal("PT0.000001S", "PT0S")  # 10 ticks: a microsecond apart
    assert not durations.durations_equal("PT0S", "PT0.000001S")


def test_duration_ticks_of_each_part() -> None:
    assert durations.duration_ticks("P1D") == 86_400 * 10_000_000
    assert durations.duration_ticks("PT1H") == 3_600 * 10_000_000
    assert durations.duration_ticks("PT1M") == 60 * 10_000_000
    assert durations.duration_ticks("PT1.5S") == 15_000_000
    assert durations.duration_ticks(timedelta(days=1, seconds=1, microseconds=1)) == 864_010_000_010
