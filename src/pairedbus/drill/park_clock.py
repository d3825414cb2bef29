"""The drill's park clock: per outage, how long after its start a failover of its own parked the
first message (issue 34, item 3: the failover interval a caller gets), or why there is no figure."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from pairedbus.drill.scenario import DrillEntity

if TYPE_CHECKING:
    from pairedbus.sender import PairedNamespaceClient

#: How often the park clock reads the senders' counters while sending (its figures' resolution).
PARK_CLOCK_POLL = 0.01


class ParkOutcome(StrEnum):
    """What followed one outage's start, as the park clock saw it (the report's `outage_parking`)."""

    #: A sender failed over after the outage began (before the next one began): the figure is the
    #: seconds to the first message it parked after that failover.
    FAILED_OVER = "failed over"
    #: As above, but the outage before had no failover of its own: the failing calls behind this one
    #: may have begun in that earlier outage (the SDK's retries outlast short outages), so no figure.
    FAILED_OVER_AFTER_AN_EARLIER_OUTAGE = "failed over, maybe for an earlier outage"
    #: As FAILED_OVER, but the primary was back before the failover: a retry of a call that failed in
    #: the outage, or a random fault (`--fault-rate`) of the healthy primary; which, the clock cannot
    #: tell, so no figure.
    FAILED_OVER_AFTER_THE_PRIMARY_WAS_BACK = "failed over after the primary was back"
    #: No failover before the next outage began, and a sender entity was still switched to the backlog
    #: when it began (parked since an earlier outage or fault): its sends parked with no failover to time.
    ALREADY_FAILED_OVER = "already failed over"
    #: No failover before the next outage began (or sending ended), and nothing was switched when it
    #: began: e.g. the primary was back before the SDK's own retries gave up.
    NO_FAILOVER = "no failover"


@dataclass
class OutageParking:
    """One outage as the park clock saw it; seconds count from the outage's start, `began_seconds`
    from the clock's (the sending phase's)."""

    began_seconds: float
    #: Sender entities (client x entity) still switched to the backlog when it began.
    switched_at_start: int
    #: Until the primary was back (None: still down when sending ended).
    lasted_seconds: float | None = None
    #: To the first failover after it began, before the next outage began.
    failed_over_seconds: float | None = None
    #: To the first message the failing-over client parked after that failover (it may come later).
    first_parked_seconds: float | None = None
    outcome: ParkOutcome = ParkOutcome.NO_FAILOVER


@dataclass
class _Watch:
    record: OutageParking
    began: float
    failovers_before: list[int]
    #: The outage before had no failover of its own when this one began.
    after_an_unresolved_outage: bool
    #: The client that failed over, and its parked count when the failover was seen.
    client: int | None = None
    parked_before: int = 0


class ParkClock:
    """Per outage, the time from its start to the first message parked by a failover after it (the
    failover interval the caller gets: with the SDK's own retries before any error reaches the sender,
    more than the interval it set), and what the outage was when there is no such figure.

    It reads the clients' counters (`failovers`, `parked_messages`) every `PARK_CLOCK_POLL` while
    sending (`watch`), not when a send returns: over the wire the harsh drill's ten outages all began
    within its first 6 s, before any send had returned, and only the last one got a figure. A park by
    a sender entity already switched when the outage began is not the outage's: only a failover after
    it began (and before the next one began) starts its figure."""

    def __init__(
        self,
        clients: Sequence[PairedNamespaceClient],
        entities: Sequence[DrillEntity],
        *,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._clients = clients
        self._entities = entities
        self._clock = clock
        self._started = clock()
        #: The latest outage while no failover of its own was seen (its window is open).
        self._current: _Watch | None = None
        #: Outages whose failover was seen and whose client has parked nothing since.
        self._waiting: list[_Watch] = []
        self._parked = self._counts("parked_messages")
        self.outages: list[OutageParking] = []

    def _counts(self, name: str) -> list[int]:
        return [getattr(c.stats, name) for c in self._clients]

    def _switched(self) -> int:
        return sum(c.is_switched(e.name, topic=e.is_topic) for c in self._clients for e in self._entities)

    @property
    def first_parked(self) -> list[float | None]:
        """Per outage, its figure when a failover of its own was timed; None otherwise (its `outcome`
        says why)."""
        return [o.first_parked_seconds if o.outcome is ParkOutcome.FAILED_OVER else None for o in self.outages]

    def outage_began(self) -> None:
        self.observe()
        # The previous outage had no failover before this one began: one seen from now on may be its.
        unresolved = bool(self.outages) and self.outages[-1].failed_over_seconds is None
        now = self._clock()
        switched = self._switched()
        record = OutageParking(
            began_seconds=now - self._started,
            switched_at_start=switched,
            outcome=ParkOutcome.ALREADY_FAILED_OVER if switched else ParkOutcome.NO_FAILOVER,
        )
        self.outages.append(record)
        self._current = _Watch(record, now, self._counts("failovers"), unresolved)

    def outage_ended(self) -> None:
        if self.outages and self.outages[-1].lasted_seconds is None:
            record = self.outages[-1]
            record.lasted_seconds = self._clock() - self._started - record.began_seconds

    def observe(self) -> None:
        """Read the counters: a failover since the current outage began, a park since a failover."""
        now = self._clock()
        parked = self._counts("parked_messages")
        watch = self._current
        if watch is not None:
            for i, failovers in enumerate(self._counts("failovers")):
                if failovers > watch.failovers_before[i]:
                    watch.client, watch.parked_before = i, self._parked[i]
                    watch.record.failed_over_seconds = now - watch.began
                    watch.record.outcome = _failover_outcome(watch)
                    self._waiting.append(watch)
                    self._current = None
                    break
        for waiting in list(self._waiting):
            if waiting.client is not None and parked[waiting.client] > waiting.parked_before:
                waiting.record.first_parked_seconds = now - waiting.began
                self._waiting.remove(waiting)
        self._parked = parked

    async def watch(self) -> None:
        """Observe until cancelled (at the end of sending)."""
        while True:
            self.observe()
            await asyncio.sleep(PARK_CLOCK_POLL)


def _failover_outcome(watch: _Watch) -> ParkOutcome:
    """What a failover seen after `watch`'s outage began says: the outage's own, or maybe not."""
    if watch.after_an_unresolved_outage:
        return ParkOutcome.FAILED_OVER_AFTER_AN_EARLIER_OUTAGE
    if watch.record.lasted_seconds is not None:
        return ParkOutcome.FAILED_OVER_AFTER_THE_PRIMARY_WAS_BACK
    return ParkOutcome.FAILED_OVER
