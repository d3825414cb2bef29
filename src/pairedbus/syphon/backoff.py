"""Back-off per key: a backlog queue's receives (`pump`), the backlog listing (`syphon`). One failing
key never slows another. A destination's back-offs are part of its health (`health.DestinationHealth`)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Hashable

from pairedbus.pairing.backoff import BackoffPolicy


class Backoff:
    """Delay before the next try of each key: 0 while healthy; after consecutive failures the
    runtime's policy (`pairing.backoff.BackoffPolicy`: exponential from `initial`, capped at
    `maximum`, full jitter from `rng`), in seconds on a monotonic clock."""

    def __init__(
        self,
        initial: float,
        maximum: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        self._policy = BackoffPolicy(initial, maximum, rng=rng)
        self._clock = clock
        self._failures: dict[Hashable, int] = {}
        self._not_before: dict[Hashable, float] = {}

    def remaining(self, destination: Hashable) -> float:
        """Seconds until a send to `destination` may be tried again (0: now)."""
        not_before = self._not_before.get(destination)
        if not_before is None:
            return 0.0
        return max(0.0, not_before - self._clock())

    def failed(self, destination: Hashable) -> float:
        """Record a failure; returns the new delay."""
        failures = self._failures.get(destination, 0) + 1
        self._failures[destination] = failures
        delay = self._policy.delay(failures)
        self._not_before[destination] = self._clock() + delay
        return delay

    def succeeded(self, destination: Hashable) -> None:
        if self._failures.pop(destination, None) is not None:
            self._not_before.pop(destination, None)

    def failures(self, destination: Hashable) -> int:
        return self._failures.get(destination, 0)
