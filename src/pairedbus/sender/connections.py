"""The client's two namespace connections: the close/fault rule, and their replacement.

paired-namespaces.md ("Close/fault behaviour"): when the primary or the secondary connection
faults or closes and its partner does not follow within 5 seconds, the partner is faulted. The
user never holds these connections, so after a fault the client does not stay broken: each side
that went down is replaced with a fresh `ServiceBusClient` after a back-off, and senders pick the
fresh one up on their next call (`generation` tells them).

A side counts as down when its client's `close()` is called by anyone but this object, when an
operation on it raises ServiceBusConnectionError (the SDK's "connection is broken", raised once
its own retries are spent), or on `report_fault`. An idle connection is not probed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from azure.servicebus import aio as servicebus_aio  # looked up at call time: the fake patches it

from pairedbus.sender.errors import is_connection_loss
from pairedbus.sender.failover import FailoverStats

_log = logging.getLogger("pairedbus.sender")

PRIMARY = "primary"
SECONDARY = "secondary"
SIDES = (PRIMARY, SECONDARY)

Sleep = Callable[[float], Awaitable[object]]


def partner_of(side: str) -> str:
    return SECONDARY if side == PRIMARY else PRIMARY


class PairedConnections:
    """Owns one aio ServiceBusClient per namespace, replaced (with its handlers) after a fault."""

    def __init__(
        self,
        namespaces: dict[str, str],
        credential: Any,
        stats: FailoverStats,
        *,
        grace: float,
        backoff_initial: float = 1.0,
        backoff_max: float = 60.0,
        client_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self._namespaces = namespaces
        self._credential = credential
        self._stats = stats
        self._grace = grace
        self._backoff = (backoff_initial, backoff_max)
        self._client_kwargs = client_kwargs or {}
        self._clients: dict[str, Any] = {}
        self._closers: dict[str, Callable[[], Awaitable[Any]]] = {}
        self.generations = dict.fromkeys(SIDES, 0)
        #: `generations[PRIMARY]`, as one attribute read for the healthy send path.
        self.primary_generation = 0
        #: Sides that are down and being replaced, with their cause.
        self._down: dict[str, str] = {}
        self._faults_in_a_row = dict.fromkeys(SIDES, 0)
        self._replaced_at: dict[str, float] = {}
        self._changed: asyncio.Condition | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._backlog_senders: dict[str, Any] = {}
        self._closing = False

    # --- lifecycle ------------------------------------------------------------------------------

    def open(self) -> None:
        for side in SIDES:
            if side not in self._clients:
                self._connect(side)

    def _connect(self, side: str) -> None:
        client = servicebus_aio.ServiceBusClient(self._namespaces[side], self._credential, **self._client_kwargs)
        original = client.close
        self._closers[side] = original

        async def close(*args: Any, **kwargs: Any) -> Any:
            if self._clients.get(side) is client:
                self.mark_down(side, "was closed")
            return await original(*args, **kwargs)

        client.close = close
        self._clients[side] = client
        if side == SECONDARY:
            self._backlog_senders = {}

    async def close(self) -> list[BaseException]:
        """Stop replacing, close both clients (and every handler they spawned); returns errors."""
        self._closing = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        errors: list[BaseException] = []
        for side in SIDES:
            closer = self._closers.pop(side, None)
            if closer is not None:
                try:
                    await closer()
                except Exception as exc:
                    errors.append(exc)
        self._clients.clear()
        return errors

    # --- what senders use -----------------------------------------------------------------------

    def client(self, side: str) -> Any:
        return self._clients[side]

    def generation(self, side: str) -> int:
        """Bumped each time `side`'s client is replaced: a handler of an older one is stale
        (`generations` is the same, read directly on the hot path)."""
        return self.generations[side]

    def backlog_sender(self, queue: str) -> Any:
        """The secondary's sender to a backlog queue (one per queue, shared by every sender)."""
        sender = self._backlog_senders.get(queue)
        if sender is None:
            sender = self._backlog_senders[queue] = self._clients[SECONDARY].get_queue_sender(queue)
        return sender

    def note_error(self, side: str, exc: BaseException) -> None:
        if is_connection_loss(exc):
            self.mark_down(side, f"faulted ({exc})")

    def is_down(self, side: str) -> bool:
        return side in self._down

    async def replaced(self, side: str, exc: BaseException, *, since: int, wait: float) -> bool:
        """After `exc` from an operation on `side` begun at generation `since`: True once a fresh
        client is there to try again on (waiting up to `wait` seconds), False if `exc` was not about
        the connection."""
        self.note_error(side, exc)
        if self.generations[side] == since and side not in self._down:
            return False
        condition = self._condition()
        try:
            async with asyncio.timeout(wait), condition:
                await condition.wait_for(lambda: self.generations[side] != since or self._closing)
        except TimeoutError:
            return False
        return not self._closing

    # --- the close/fault rule and replacement ---------------------------------------------------

    def mark_down(self, side: str, cause: str) -> None:
        """`side` closed or faulted: replace it after a back-off, and give its partner the grace
        to follow (faulting it if it does not). Idempotent while a replacement is pending."""
        if self._closing or side in self._down:
            return
        self._down[side] = cause
        self._stats.connection_faults += 1
        loop_time = asyncio.get_running_loop().time()
        if loop_time - self._replaced_at.get(side, float("-inf")) > self._backoff[1]:
            self._faults_in_a_row[side] = 0  # the last replacement held for a while: start over
        _log.warning("%s namespace connection %s; replacing it", side, cause)
        self._spawn(self._replace(side), f"pairedbus-replace:{side}")
        partner = partner_of(side)
        if partner not in self._down:
            self._spawn(self._hold_partner_to_grace(partner, side), f"pairedbus-grace:{partner}")

    def report_fault(self, side: str, cause: str = "faulted") -> None:
        if side not in SIDES:
            raise ValueError(f"side must be {PRIMARY!r} or {SECONDARY!r}, got {side!r}")
        self.mark_down(side, cause)

    async def _hold_partner_to_grace(self, partner: str, side: str) -> None:
        generation = self.generations[partner]
        await asyncio.sleep(self._grace)
        if partner not in self._down and self.generations[partner] == generation:
            _log.error("the %s connection did not follow the %s within %g s; faulting it", partner, side, self._grace)
            self.mark_down(partner, f"faulted: did not follow the {side} within the grace")

    async def _replace(self, side: str) -> None:
        initial, maximum = self._backoff
        self._faults_in_a_row[side] += 1
        await asyncio.sleep(min(maximum, initial * 2 ** min(self._faults_in_a_row[side] - 1, 30)))
        closer = self._closers.pop(side, None)
        if closer is not None:
            try:
                await closer()
            except Exception as exc:  # it is being replaced either way
                _log.debug("closing the old %s client failed: %r", side, exc)
        self._connect(side)
        self.generations[side] += 1
        self.primary_generation = self.generations[PRIMARY]
        del self._down[side]
        self._stats.connection_replacements += 1
        self._replaced_at[side] = asyncio.get_running_loop().time()
        _log.warning("%s namespace connection replaced (generation %d)", side, self.generations[side])
        condition = self._condition()
        async with condition:
            condition.notify_all()

    def _spawn(self, work: Awaitable[None], name: str) -> None:
        task = asyncio.ensure_future(work)
        task.set_name(name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed
