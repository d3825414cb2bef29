"""The syphon's reaction to the close/fault rule (`pairedbus.pairing.connections`): it stops.

When one namespace's client closes or faults, the syphon waits for the rule's verdict (the partner
followed within the grace, or was faulted), closes the partner if the rule faulted it, and stops
with SyphonFaulted, so the hosting process exits non-zero and is restarted with two fresh
connections.
"""

from __future__ import annotations

import asyncio
import logging

from pairedbus.pairing.connections import ConnectionPair, Verdict, partner_of

log = logging.getLogger("pairedbus.syphon")


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

    async def watch(self, pair: ConnectionPair) -> SyphonFaulted:
        """Wait for the rule's verdict, close the partner if the rule faulted it, and return the
        fault (the caller raises it once its work is cancelled)."""
        await self._judged.wait()
        verdict = self._verdict
        assert verdict is not None
        if not verdict.partner_followed:
            error = await pair.close_side(verdict.partner)
            if error is not None:  # closing is best effort: the syphon stops either way
                log.warning("closing a namespace client failed", extra={"side": verdict.partner, "error": repr(error)})
        self.fault = SyphonFaulted(verdict.side, partner_followed=verdict.partner_followed, cause=verdict.cause)
        return self.fault
