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
