"""The runtime's one back-off policy: exponential, with full jitter.

After `n` failures in a row the wait is drawn uniformly from `[0, min(maximum, initial * 2**(n-1))]`:
tenacity's `wait_random_exponential` ("Full Jitter"), its window from tenacity's `wait_exponential`
(capped, overflow-safe), the draw from a `random.Random` the caller may pass. Jitter spreads the
retries of many clients that failed together (senders whose namespace came back, syphon replicas
restarted by one outage) instead of sending them back in step. Used by the syphon's destinations'
health (`syphon.health`) and its receive and listing back-offs (`syphon.backoff.Backoff`), the sender's
connection replacement and its embedded syphon's restarts.

A test that pins delays passes a seeded `random.Random`, or `TOP_OF_WINDOW` (the exponential
back-off without jitter)."""

from __future__ import annotations

import random

from tenacity import RetryCallState, Retrying
from tenacity.wait import wait_exponential


class _TopOfWindow(random.Random):
    """A random source whose draws are the top of their range: the back-off without its jitter."""

    def uniform(self, a: float, b: float) -> float:
        return b


#: The fixed source for tests that pin delays: every wait is its window's top, `initial * 2**(n-1)`.
TOP_OF_WINDOW: random.Random = _TopOfWindow()

#: The source when none is given (one per process, seeded by the operating system).
_SHARED = random.Random()


class BackoffPolicy:
    """Waits after failures in a row: exponential from `initial` seconds, capped at `maximum`, with
    full jitter drawn from `rng` (a shared source when None)."""

    def __init__(self, initial: float, maximum: float, *, rng: random.Random | None = None) -> None:
        self.initial = initial
        self.maximum = maximum
        self._rng = _SHARED if rng is None else rng
        self._window = wait_exponential(multiplier=initial, max=maximum)
        self._retrying = Retrying(wait=self._window)

    def window(self, failures: int) -> float:
        """The top of the wait after `failures` (>= 1) failures in a row: `initial * 2**(failures-1)`,
        at most `maximum`."""
        state = RetryCallState(self._retrying, None, (), {})
        state.attempt_number = max(1, failures)
        return float(self._window(state))

    def delay(self, failures: int) -> float:
        """The wait after `failures` (>= 1) failures in a row, drawn from `[0, window(failures)]`."""
        return self._rng.uniform(0.0, self.window(failures))
