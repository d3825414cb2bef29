"""A destination's health as the syphon's sends find it: one object per destination, shared by every
pump, that the delivery code holds and asks (how long to wait, is the destination down) and tells
(a send went through, failed, or failed for the whole destination).

What it holds: the destination's back-off and each of its partition keys' (a failed fragment backs
off only the keys it holds: partitioning.md), the keyed sends failed in a row whichever their keys
(a few of them mean the destination itself, not one fragment, is down), and since when the
destination is down. Every back-off is the runtime's one policy (`pairing.backoff.BackoffPolicy`:
exponential from `initial`, capped, full jitter), on an injectable monotonic clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Final

from pairedbus.pairing.backoff import BackoffPolicy

#: Keyed sends to one destination failed in a row, across its keys, after which the destination
#: itself backs off (it, not one fragment, is down).
DOWN_AFTER: Final = 3


@dataclass(slots=True)
class _Window:
    """Failures in a row of one target (the destination, or one of its keys) and its earliest next try."""

    failures: int = 0
    not_before: float = 0.0


class DestinationHealth:
    """One destination's health (see the module's docstring). A key is a partition key the destination's
    messages are batched by (`destinations.batch_key`); None stands for the destination itself."""

    def __init__(self, destination: str, policy: BackoffPolicy, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.destination = destination
        self._policy = policy
        self._clock = clock
        self._own = _Window()
        self._keys: dict[Hashable, _Window] = {}
        #: Sends tried one by one that failed in a row, whichever their keys (`count`).
        self.failed_in_a_row = 0
        #: When the destination itself began backing off (its clock's time); None while it is up.
        self.down_since: float | None = None

    # --- what the delivery code asks ----------------------------------------------------------------

    def wait(self, key: Hashable | None = None) -> float:
        """Seconds until `key`'s messages may be sent again (None: the destination's); 0: now."""
        window = self._own if key is None else self._keys.get(key)
        if window is None or not window.failures:
            return 0.0
        return max(0.0, window.not_before - self._clock())

    def failures(self, key: Hashable | None = None) -> int:
        """`key`'s failures in a row (None: the destination's)."""
        window = self._own if key is None else self._keys.get(key)
        return 0 if window is None else window.failures

    @property
    def down_by_its_keys(self) -> bool:
        """Keyed sends failed `DOWN_AFTER` times in a row, whichever their keys: the destination is down."""
        return self.failed_in_a_row >= DOWN_AFTER

    def down_for(self) -> float:
        """Seconds the destination has been backing off as a whole (0 while it is up)."""
        return 0.0 if self.down_since is None else self._clock() - self.down_since

    # --- what the delivery code tells ---------------------------------------------------------------

    def sent(self, key: Hashable | None = None) -> None:
        """A send of `key`'s messages went through: `key` and the destination are up again. (On every
        acknowledged send: a healthy destination's costs two reads.)"""
        if key is not None and self._keys:
            self._keys.pop(key, None)
        if self._own.failures:
            self._own = _Window()
            self.down_since = None

    def failed(self, key: Hashable | None = None) -> float:
        """A send of `key`'s messages failed in a way a later try can fix (None: an unkeyed one, or one
        that failed for the whole destination: its sender or client gone, its link refused): back `key`
        (or the destination) off; returns the delay."""
        if key is not None:
            return self._back_off(self._keys.setdefault(key, _Window()))
        if self.down_since is None:
            self.down_since = self._clock()
        return self._back_off(self._own)

    def went_down(self) -> float:
        """Its keyed sends failed in a row (`down_by_its_keys`): the destination backs off as a whole,
        and the count starts again; returns the delay."""
        self.failed_in_a_row = 0
        return self.failed()

    def count(self, *, failed: bool) -> int:
        """Count a send tried one by one (whether it failed in a way a later try can fix): the sends
        failed in a row now (0: this one did not)."""
        self.failed_in_a_row = self.failed_in_a_row + 1 if failed else 0
        return self.failed_in_a_row

    def _back_off(self, window: _Window) -> float:
        window.failures += 1
        delay = self._policy.delay(window.failures)
        window.not_before = self._clock() + delay
        return delay


class Health:
    """Every destination's health, made on first use: what all of one syphon's pumps share."""

    def __init__(self, policy: BackoffPolicy, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._policy = policy
        self._clock = clock
        self._destinations: dict[str, DestinationHealth] = {}

    def of(self, destination: str) -> DestinationHealth:
        health = self._destinations.get(destination)
        if health is None:
            health = self._destinations[destination] = DestinationHealth(destination, self._policy, clock=self._clock)
        return health
