"""Close/fault coordination of the primary and secondary connections (paired-namespaces.md).

When one namespace's client closes or faults and its partner does not follow within the grace
(`contract.CLOSE_FAULT_GRACE`), the syphon faults the partner and stops with SyphonFaulted, so the
hosting process exits non-zero and is restarted with two fresh connections.

The Python SDK reconnects on its own and has no "faulted" state to observe; what ends a client for
good is its `close()` (every handler it spawned is shut down with it). So a namespace counts as
down when its client's `close()` is called by anyone but the syphon's own shutdown, when one of its
handlers reports ServiceBusConnectionError (the SDK's "connection is broken", raised once its own
retries are spent), or when `Syphon.report_fault` is called. An idle connection is not probed: a
fault is noticed on the next operation that uses it, as the SDK itself notices it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from azure.servicebus.exceptions import ServiceBusConnectionError

log = logging.getLogger("pairedbus.syphon")

PRIMARY = "primary"
SECONDARY = "secondary"


class SyphonFaulted(Exception):
    """The syphon stopped because a namespace connection closed or faulted."""

    def __init__(self, side: str, *, partner_followed: bool, cause: str) -> None:
        partner = SECONDARY if side == PRIMARY else PRIMARY
        followed = (
            f"the {partner} followed"
            if partner_followed
            else f"the {partner} did not follow within the grace and was faulted"
        )
        super().__init__(f"the {side} namespace connection {cause}; {followed}")
        self.side = side
        self.partner_followed = partner_followed
        self.cause = cause


class ConnectionPair:
    """Watches the two namespace connections and applies the close/fault rule."""

    def __init__(self, grace: float) -> None:
        self._grace = grace
        self._down = {PRIMARY: asyncio.Event(), SECONDARY: asyncio.Event()}
        self._causes: dict[str, str] = {}
        self._closers: dict[str, Callable[[], Awaitable[Any]]] = {}
        self.shutting_down = False
        self.fault: SyphonFaulted | None = None

    def is_down(self, side: str) -> bool:
        return self._down[side].is_set()

    @property
    def both_up(self) -> bool:
        return not (self._down[PRIMARY].is_set() or self._down[SECONDARY].is_set())

    def mark_down(self, side: str, cause: str) -> None:
        """Record that `side` closed or faulted (idempotent; ignored during our own shutdown)."""
        if self.shutting_down or self._down[side].is_set():
            return
        self._causes[side] = cause
        self._down[side].set()
        log.warning("namespace connection down", extra={"side": side, "cause": cause})

    def note_error(self, side: str, exc: BaseException) -> bool:
        """Mark `side` down if `exc` says its connection is broken; returns whether it did."""
        if isinstance(exc, ServiceBusConnectionError):
            self.mark_down(side, f"faulted ({exc})")
            return True
        return False

    def watch_close(self, side: str, client: Any) -> None:
        """Wrap `client.close` so a close by anyone else counts as that namespace going down."""
        original = client.close
        self._closers[side] = original

        async def close(*args: Any, **kwargs: Any) -> Any:
            self.mark_down(side, "was closed")
            return await original(*args, **kwargs)

        client.close = close

    async def close_quietly(self, side: str) -> None:
        closer = self._closers.get(side)
        if closer is None:
            return
        try:
            await closer()
        except Exception as exc:  # closing is best effort: the process is stopping either way
            log.warning("closing a namespace client failed", extra={"side": side, "error": repr(exc)})

    async def watch(self) -> SyphonFaulted:
        """Wait for a side to go down, give its partner the grace, fault the partner if it did
        not follow; returns the fault (the caller raises it once its work is cancelled)."""
        waiters = {asyncio.ensure_future(event.wait()): side for side, event in self._down.items()}
        try:
            done, _ = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
            await asyncio.gather(*waiters, return_exceptions=True)
        side = waiters[next(iter(done))]
        partner = SECONDARY if side == PRIMARY else PRIMARY
        try:
            await asyncio.wait_for(self._down[partner].wait(), self._grace)
            followed = True
        except TimeoutError:
            followed = False
            log.error(
                "partner connection did not follow within the grace; faulting it",
                extra={"side": side, "partner": partner, "grace_seconds": self._grace},
            )
            await self.close_quietly(partner)
        self.fault = SyphonFaulted(side, partner_followed=followed, cause=self._causes[side])
        return self.fault
