"""Counters the syphon keeps for its service (metrics) and for `drain()`'s result."""

from __future__ import annotations

import copy
import time
from collections import Counter
from dataclasses import dataclass, field

from azure.core.exceptions import ClientAuthenticationError, HttpResponseError, ResourceNotFoundError

from pairedbus.pairing.failures import Failure, failure_of


def is_unfixable(exc: BaseException) -> bool:
    """Failures no retry can fix: a credential that cannot sign in, a role assignment that is missing,
    a namespace that does not exist (as ARM or DNS says it). The syphon keeps retrying them (a role
    assignment may still be propagating), but sustained, they make the replica not live."""
    failure = failure_of(exc)
    if failure is Failure.DENIED or isinstance(exc, ClientAuthenticationError):
        return True
    if isinstance(exc, ResourceNotFoundError):
        return True  # the ARM listing: the secondary namespace (or its resource group) is gone
    if isinstance(exc, HttpResponseError) and exc.status_code in (401, 403):
        return True
    return failure is Failure.CONNECTION_LOST and "resolve" in str(exc).lower()


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
    #: Held messages abandoned by a stop under the close/fault rule, so they came back at once.
    given_back: int = 0
    #: Failures by kind (exception class name), whether or not they were recovered from.
    errors: Counter[str] = field(default_factory=Counter)
    #: Active messages per backlog queue at the last listing (None before the first); 0 for every
    #: queue after a `drain()` round that found them all empty itself (see `Syphon.drain`).
    backlog_depth: dict[str, int] = field(default_factory=dict)
    #: Monotonic time of the last successful receive, send or settlement.
    progress_at: float = field(default_factory=time.monotonic)
    #: Monotonic time since which every failure was one no retry can fix (None: not so).
    unfixable_since: float | None = None
    #: The last such failure, for the health endpoint and the log.
    unfixable_error: str | None = None
    listed: bool = False

    def snapshot(self) -> SyphonStats:
        return copy.deepcopy(self)

    def count_error(self, exc: BaseException) -> None:
        self.errors[type(exc).__name__] += 1
        if is_unfixable(exc):
            if self.unfixable_since is None:
                self.unfixable_since = time.monotonic()
            self.unfixable_error = f"{type(exc).__name__}: {exc}"[:300]

    def note_progress(self) -> None:
        """A receive, send or settlement succeeded: the syphon is making progress."""
        self.progress_at = time.monotonic()
        self.note_reachable()

    def note_reachable(self) -> None:
        """A call to Service Bus succeeded: whatever failed for good is fixed."""
        self.unfixable_since = None
        self.unfixable_error = None

    def liveness_problem(self, *, now: float, stall_after: float, unfixable_after: float, in_flight: int) -> str | None:
        """Why the syphon is not live (None: it is): failures no retry can fix for
        `unfixable_after` seconds, or no progress for `stall_after` seconds while there is work
        (messages in the backlog or in flight, or no listing yet)."""
        if self.unfixable_since is not None and now - self.unfixable_since >= unfixable_after:
            return (
                f"failing for {now - self.unfixable_since:.0f} s with errors no retry can fix: {self.unfixable_error}"
            )
        pending = in_flight > 0 or not self.listed or any(self.backlog_depth.values())
        if pending and now - self.progress_at >= stall_after:
            return f"no progress for {now - self.progress_at:.0f} s with work pending"
        return None

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
