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

    def record_failure(self) -> bool:
        """Note a triggering error; True when the interval has passed and the entity must switch."""
        now = self._now()
        if self.failing_since is None:
            self.failing_since = now
        return now - self.failing_since >= self._interval
