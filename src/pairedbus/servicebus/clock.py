"""The fake's clock: real UTC time by default, or frozen and advanced by hand in lock/TTL tests."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


_MICROSECOND = timedelta(microseconds=1)


def to_datetime(seconds: float) -> datetime:
    """Epoch seconds as a UTC-aware datetime (timestamps inside the fake are floats for speed)."""
    return _EPOCH + timedelta(microseconds=round(seconds * 1_000_000))


def to_seconds(value: datetime) -> float:
    """A datetime as epoch seconds: integer microseconds / 1e6, so the same instant always maps
    to the same float (a frozen clock keeps its time the same way)."""
    if value.tzinfo is None:  # the SDK treats naive datetimes as UTC
        value = value.replace(tzinfo=UTC)
    return ((value - _EPOCH) // _MICROSECOND) / 1_000_000


def _aligned(seconds: float) -> float:
    return round(seconds * 1_000_000) / 1_000_000


class Clock:
    """`time()` is epoch seconds. `freeze()` stops it; `advance()` moves a frozen clock forward and
    wakes every waiting receiver so that lock expiry, TTL and schedules are re-evaluated."""

    def __init__(self) -> None:
        self._frozen_at: float | None = None
        self._listeners: list[Callable[[], None]] = []

    @property
    def manual(self) -> bool:
        return self._frozen_at is not None

    def time(self) -> float:
        frozen = self._frozen_at
        return time.time() if frozen is None else frozen

    def now(self) -> datetime:
        return to_datetime(self.time())

    def freeze(self, at: datetime | None = None) -> None:
        self._frozen_at = _aligned(time.time()) if at is None else to_seconds(at)

    def unfreeze(self) -> None:
        self._frozen_at = None
        self._notify()

    def advance(self, seconds: float | timedelta) -> None:
        """Move time forward. A real-time clock is frozen at now first."""
        if isinstance(seconds, timedelta):
            seconds = seconds.total_seconds()
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        if self._frozen_at is None:
            self.freeze()
        self._frozen_at = (round(self.time() * 1_000_000) + round(seconds * 1_000_000)) / 1_000_000
        self._notify()

    def subscribe(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def _notify(self) -> None:
        for listener in self._listeners:
            listener()
