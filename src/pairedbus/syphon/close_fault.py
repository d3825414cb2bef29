"""The syphon's reaction to the close/fault rule (`pairedbus.pairing.connections`): it stops.

When one namespace's client closes or faults, the syphon waits for the rule's verdict (the partner
followed within the grace, or was faulted), gives back what it holds while the secondary is still
open (`give_back`), closes the partner if the rule faulted it, and stops with SyphonFaulted, so the
hosting process exits non-zero and is restarted with two fresh connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Collection
from typing import Any

from pairedbus.pairing.connections import PRIMARY, ConnectionPair, Verdict, partner_of
from pairedbus.syphon.lock_keeper import LockKeeper
from pairedbus.syphon.stats import SyphonStats

log = logging.getLogger("pairedbus.syphon")

#: The most a stop waits for the broker to take back what the syphon holds (seconds), on top of the
#: close/fault grace: abandons run all at once, one round trip each (measured over the wire:
#: docs/drill.md); what is not taken back by then waits out its lock, as before.
GIVE_BACK_BOUND = 1.0


class SyphonFaulted(Exception):
    """The syphon stopped because a namespace connection closed or faulted."""

    def __init__(self, side: str, *, partner_followed: bool, cause: str) -> None:
        partner = partner_of(side)
        followed = (
            f"the {partner} followed"
            if partner_followed
            else f"the {partner} did not follow within the grace and was faulted"
        )
        super().__init__(f"the {side} namespace connection {cause}; {followed}")
        self.side = side
        self.partner_followed = partner_followed
        self.cause = cause


class StopOnFault:
    """The syphon's `CloseFaultReaction`: a side going down is logged, and the first verdict is the
    fault the syphon stops with (`watch`)."""

    def __init__(self) -> None:
        self.fault: SyphonFaulted | None = None
        self._judged = asyncio.Event()
        self._verdict: Verdict | None = None

    def went_down(self, side: str, cause: str) -> None:
        log.warning("namespace connection down", extra={"side": side, "cause": cause})

    def judged(self, verdict: Verdict) -> None:
        if self._verdict is None:
            self._verdict = verdict
            self._judged.set()

    async def watch(
        self, pair: ConnectionPair, *, before_close: Callable[[Verdict], Awaitable[None]] | None = None
    ) -> SyphonFaulted:
        """Wait for the rule's verdict, run `before_close` (the syphon halts its work and gives back
        what it holds), close the partner if the rule faulted it, and return the fault (the caller
        raises it once its work is cancelled)."""
        await self._judged.wait()
        verdict = self._verdict
        assert verdict is not None
        # Made first: `before_close` halts the syphon's work, which may end before the give-back does.
        self.fault = SyphonFaulted(verdict.side, partner_followed=verdict.partner_followed, cause=verdict.cause)
        if before_close is not None:
            await before_close(verdict)
        if not verdict.partner_followed:
            error = await pair.close_side(verdict.partner)
            if error is not None:  # closing is best effort: the syphon stops either way
                log.warning("closing a namespace client failed", extra={"side": verdict.partner, "error": repr(error)})
        return self.fault


def secondary_still_open(verdict: Verdict) -> bool:
    """Whether the secondary's connection is still open under `verdict`: the primary went down first
    and the rule faulted the secondary (it did not follow), which closes it only after the verdict.
    A secondary that went down itself, first or following, has nothing left to give back on."""
    return verdict.side == PRIMARY and not verdict.partner_followed


async def give_back(
    holders: Collection[LockKeeper[Any]], stats: SyphonStats, *, bound: float = GIVE_BACK_BOUND
) -> tuple[int, int]:
    """Abandon every message the `holders` hold, all at once, within `bound` seconds (`LockKeeper.give_back`):
    (how many the broker took back, how many were held). A stopping syphon's held messages came back
    only when their lock ran out (20 s in the wire drill, a minute by the spec's table), and the harsh
    wire drill stops its syphon 10-31 times a run (docs/drill.md)."""
    keepers = list(holders)
    held = sum(keeper.holding for keeper in keepers)
    if not held:
        return 0, 0
    started, before = time.monotonic(), stats.given_back
    with contextlib.suppress(TimeoutError):  # what was not taken back by then waits out its lock
        async with asyncio.timeout(bound):
            await asyncio.gather(*(keeper.give_back(bound) for keeper in keepers))
    given = stats.given_back - before
    log.info(
        "stopping: held messages given back",
        extra={"held": held, "given_back": given, "seconds": round(time.monotonic() - started, 3)},
    )
    return given, held
