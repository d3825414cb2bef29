"""The fake's clock: real time by default, frozen and advanced by tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from pairedbus.servicebus import Clock
from pairedbus.servicebus.clock import to_datetime, to_seconds


def test_frozen_clock_only_moves_when_advanced() -> None:
    clock = Clock()
    assert not clock.manual
    start = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    clock.freeze(start)
    assert clock.now() == start
    clock.advance(timedelta(minutes=1, microseconds=1))
    assert clock.now() == start + timedelta(minutes=1, microseconds=1)
    with pytest.raises(ValueError):
        clock.advance(-1)


def test_advance_notifies_listeners() -> None:
    clock = Clock()
    seen: list[float] = []
    clock.subscribe(lambda: seen.append(clock.time()))
    clock.advance(5)
    assert len(seen) == 1 and clock.manual


def test_same_instant_maps_to_the_same_float() -> None:
    when = datetime(2026, 3, 1, 12, 0, 0, 123457, tzinfo=UTC)
    assert to_datetime(to_seconds(when)) == when
    assert to_seconds(when.replace(tzinfo=None)) == to_seconds(when)
