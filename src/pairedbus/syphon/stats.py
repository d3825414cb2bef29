"""Counters the syphon keeps for its service (metrics) and for `drain()`'s result."""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class SyphonStats:
    """What the syphon did so far. `Syphon.stats` hands out a copy (a snapshot)."""

    #: Messages sent to their destination and completed in the backlog.
    moved: int = 0
    #: Backlog messages dead-lettered, and how many per reason.
    dead_lettered: int = 0
    dead_letter_reasons: Counter[str] = field(default_factory=Counter)
    #: Pings completed in the backlog and never forwarded.
    dropped_pings: int = 0
    #: Sends retried in place after a retryable failure.
    retries: int = 0
    #: Messages left locked for the broker to redeliver (destination backing off, or stopping).
    left_locked: int = 0
    lock_renewals: int = 0
    #: Failures by kind (exception class name), whether or not they were recovered from.
    errors: Counter[str] = field(default_factory=Counter)
    #: Active messages per backlog queue at the last listing (None before the first).
    backlog_depth: dict[str, int] = field(default_factory=dict)

    def snapshot(self) -> SyphonStats:
        return copy.deepcopy(self)

    def count_error(self, exc: BaseException) -> None:
        self.errors[type(exc).__name__] += 1

    def log_fields(self) -> dict[str, object]:
        """The counters a log line about the syphon carries."""
        return {
            "moved": self.moved,
            "dead_lettered": self.dead_lettered,
            "dropped_pings": self.dropped_pings,
            "left_locked": self.left_locked,
            "errors": dict(self.errors),
        }

    def count_dead_letter(self, reason: str) -> None:
        self.dead_lettered += 1
        self.dead_letter_reasons[reason] += 1
