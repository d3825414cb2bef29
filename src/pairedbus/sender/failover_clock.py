"""The failover clock of one entity: a run of triggering errors with no success in between.

A triggering error (see `errors.starts_failover_clock`) starts the clock; any successful send
stops it. A triggering error that finds the clock has run for at least `failover_interval`
means "switch to the backlog now". With an interval of 0 the first triggering error switches.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

#: Reads a monotonic clock in seconds (`time.monotonic`; a test passes a fake).
MonotonicSeconds = Callable[[], float]


class FailoverClock:
    __slots__ = ("_interval", "_now", "failing_since")

    def __init__(self, interval: timedelta, *, clock: MonotonicSeconds = time.monotonic) -> None:
        self._interval = interval.total_seconds()
        self._now = clock
        #: When the current run of triggering errors started (None: not running). Read directly on
        #: the hot path, which must stay a couple of attribute reads.
        self.failing_since: float | None = None

    @property
    def running(self) -> bool:
        return self.failing_since is not None

    def record_success(self) -> None:
        self.failing_since = None

    def now(self) -> float:
        return self._now()

    def record_failure(self, started: float | None = None) -> bool:
        """Note a triggering error of a call begun at `started` (None: now); True when the
        interval has passed and the entity must switch. A run starts when its first failing call
        began, not when the SDK gave up on it: the SDK's own retries spend seconds before an error
        reaches the sender (12 s with its default policy against a namespace that refuses
        connections), and those seconds are already seconds without a successful send."""
        now = self._now()
        if self.failing_since is None:
            self.failing_since = now if started is None else min(started, now)
        return now - self.failing_since >= self._interval
