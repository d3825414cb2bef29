"""The close/fault rule of a connection pair (paired-namespaces.md, "Close/fault behaviour").

When the primary or the secondary connection faults or closes and its partner does not follow
within the grace (`contract.CLOSE_FAULT_GRACE`, 5 s), the partner is faulted. The sender and the
syphon both apply this rule to their two connections; only what they do when a side goes down
differs, and that is the `CloseFaultReaction` each hands to its `ConnectionPair`: the sender
replaces the side with a fresh client, the syphon stops with `SyphonFaulted`.

A side is *down* when its client's `close()` is called by anyone but its owner, when an operation
on it raises ServiceBusConnectionError (the SDK's "connection is broken", raised once its own
retries are spent), or when the owner reports a fault. The Python SDK reconnects on its own and has
no "faulted" state to observe, so an idle connection is not probed: a fault is noticed on the next
operation that uses it, as the SDK itself notices it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pairedbus.pairing.failures import Failure, failure_of

_log = logging.getLogger("pairedbus.pairing")

PRIMARY = "primary"
SECONDARY = "secondary"
SIDES = (PRIMARY, SECONDARY)


def partner_of(side: str) -> str:
    return SECONDARY if side == PRIMARY else PRIMARY


def check_side(side: str) -> str:
    """`side` if it names one of the pair's sides; a ValueError naming the field otherwise."""
    if side not in SIDES:
        raise ValueError(f"side must be {PRIMARY!r} or {SECONDARY!r}, got {side!r}")
    return side


def is_connection_loss(exc: BaseException) -> bool:
    """The namespace's connection is gone (not one entity): its side of the pair is down."""
    return failure_of(exc) is Failure.CONNECTION_LOST


@dataclass(frozen=True)
class Verdict:
    """How the rule ended for the side that went down first: its partner followed within the
    grace, or did not and was faulted."""

    side: str
    cause: str
    partner_followed: bool

    @property
    def partner(self) -> str:
        return partner_of(self.side)


class CloseFaultReaction(Protocol):
    """What the owner of a pair does under the rule."""

    def went_down(self, side: str, cause: str) -> None:
        """`side` closed or faulted (once per going down, the rule's own faulting included)."""

    def judged(self, verdict: Verdict) -> None:
        """The grace after a side went down is over (or its partner followed sooner)."""


class ConnectionPair:
    """The primary and secondary connections under the close/fault rule, with `reaction` applied."""

    def __init__(self, grace: float, reaction: CloseFaultReaction) -> None:
        self.grace = grace
        self._reaction = reaction
        #: Down sides and their cause.
        self._down: dict[str, str] = {}
        #: Set when a side goes down; a fresh event once it is back (`mark_up`), so a grace wait
        #: sees only a going down that happened after it began.
        self._fell = {side: asyncio.Event() for side in SIDES}
        self._clients: dict[str, Any] = {}
        self._closers: dict[str, Callable[[], Awaitable[Any]]] = {}
        self._graces: set[asyncio.Task[None]] = set()
        self.shutting_down = False

    # --- state ----------------------------------------------------------------------------------

    def is_down(self, side: str) -> bool:
        return side in self._down

    @property
    def both_up(self) -> bool:
        return not self._down

    @property
    def pending_graces(self) -> int:
        """Grace periods running now (a partner being given the chance to follow)."""
        return len(self._graces)

    # --- how a side goes down -------------------------------------------------------------------

    def mark_down(self, side: str, cause: str) -> None:
        """`side` closed or faulted: react, and give its partner the grace to follow (faulting it if
        it does not). Idempotent while the side is down; ignored during the owner's shutdown."""
        self._went_down(side, cause)

    def report_fault(self, side: str, cause: str = "faulted") -> None:
        """The owner's user says `side` faulted."""
        self.mark_down(check_side(side), cause)

    def note_error(self, side: str, exc: BaseException) -> bool:
        """Mark `side` down if `exc` says its connection is broken; returns whether it did."""
        if is_connection_loss(exc):
            self.mark_down(side, f"faulted ({exc})")
            return True
        return False

    def watch_close(self, side: str, client: Any) -> None:
        """Wrap `client.close` so that a close by anyone but the pair counts as `side` going down
        (while `client` is the side's current one: closing a replaced client is no fault)."""
        original = client.close
        self._clients[side] = client
        self._closers[side] = original

        async def close(*args: Any, **kwargs: Any) -> Any:
            if self._clients.get(side) is client:
                self.mark_down(side, "was closed")
            return await original(*args, **kwargs)

        client.close = close

    def mark_up(self, side: str) -> None:
        """`side` has a fresh connection (the owner replaced it)."""
        if self._down.pop(side, None) is not None:
            self._fell[side] = asyncio.Event()

    # --- closing --------------------------------------------------------------------------------

    async def close_side(self, side: str) -> BaseException | None:
        """Close `side`'s client through its original `close` (not a fault); returns what that
        raised, if anything. A side with no client, or closed already, is left alone."""
        closer = self._closers.pop(side, None)
        self._clients.pop(side, None)
        if closer is None:
            return None
        try:
            await closer()
        except Exception as exc:
            return exc
        return None

    async def shut_down(self) -> None:
        """The owner is closing: nothing counts as going down from now on, and no grace runs."""
        self.shutting_down = True
        for task in list(self._graces):
            task.cancel()
        await asyncio.gather(*self._graces, return_exceptions=True)

    # --- the rule -------------------------------------------------------------------------------

    def _went_down(self, side: str, cause: str, *, faulted_by_rule: bool = False) -> None:
        if self.shutting_down or side in self._down:
            return
        self._down[side] = cause
        self._fell[side].set()
        self._reaction.went_down(side, cause)
        partner = partner_of(side)
        # A side the rule faulted did not follow its partner: that partner went down first, so
        # there is nothing for it to follow (else the two would fault each other in turn).
        if not faulted_by_rule and partner not in self._down:
            task = asyncio.ensure_future(self._hold_to_grace(partner, side, cause))
            task.set_name(f"pairedbus-grace:{partner}")
            self._graces.add(task)
            task.add_done_callback(self._graces.discard)

    async def _hold_to_grace(self, partner: str, side: str, cause: str) -> None:
        try:
            await asyncio.wait_for(self._fell[partner].wait(), self.grace)
            followed = True
        except TimeoutError:
            followed = False
        if not followed:
            _log.error(
                "the %s connection did not follow the %s within %g s; faulting it",
                partner,
                side,
                self.grace,
                extra={"side": side, "partner": partner, "grace_seconds": self.grace},
            )
            self._went_down(partner, f"faulted: did not follow the {side} within the grace", faulted_by_rule=True)
        if not self.shutting_down:
            self._reaction.judged(Verdict(side, cause, partner_followed=followed))
