"""A pump's sends to the primary (settlement.md, "Sending"): every send is acknowledged or fails,
and a failure is judged (`outcomes.send_failure`) and acted on here: its error counted, the
close/fault rule told, the destination or one of its partition keys backed off."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from azure.servicebus import ServiceBusMessage

from pairedbus.pairing.connections import PRIMARY, ConnectionPair
from pairedbus.pairing.failures import SERVICE_BUS, Failure, failure_of
from pairedbus.syphon.destinations import KEYS_UNKNOWN, BatchKey, Destinations, MaybeKey, Sendable
from pairedbus.syphon.health import Health
from pairedbus.syphon.outcomes import (
    DEAD_LETTER_DESTINATION_NOT_FOUND,
    DEAD_LETTER_SEND_REJECTED,
    DeadLetter,
    Retry,
    SendOutcome,
    Sent,
    Split,
    send_failure,
)
from pairedbus.syphon.stats import SyphonStats

log = logging.getLogger("pairedbus.syphon")

#: What is logged when the primary refuses messages for good (a message too large is not news).
_REFUSALS = {
    DEAD_LETTER_DESTINATION_NOT_FOUND: "destination not found in the primary; dead-lettering",
    DEAD_LETTER_SEND_REJECTED: "the primary refused a message; dead-lettering",
}


@dataclass(slots=True)
class Unit:
    """What one send carries: a batch (or a lone message), the delivery's item indexes in it, and
    the partition key they all share (None: unkeyed)."""

    batch: Sendable
    members: list[int]
    key: BatchKey


class PrimarySends:
    """Sends to the primary, told to each destination's health (`health.DestinationHealth`)."""

    def __init__(
        self, destinations: Destinations, health: Health, stats: SyphonStats, pair: ConnectionPair, *, queue: str
    ) -> None:
        self._destinations = destinations
        self._health = health
        self._stats = stats
        self._pair = pair
        self._queue = queue  # the backlog queue whose messages these are (for the logs)

    async def pack(
        self, destination: str, messages: list[ServiceBusMessage], *, key: MaybeKey = KEYS_UNKNOWN
    ) -> list[Unit] | SendOutcome:
        """`messages` (in order) in as few units as fit, their members indexes into `messages`;
        or what opening the sender or sizing a batch failing means. `key`: their one batch key, if known."""
        try:
            packed = await self._destinations.batches(destination, messages, key=key)
        except Exception as exc:
            return self._opening_failed(exc, destination)
        return [Unit(batch, members, key) for batch, members, key in packed]

    async def send(self, destination: str, unit: Unit) -> SendOutcome:
        """Send one unit; what its answer means. A retryable failure backs off the unit's key (an
        unkeyed unit's: the destination); a success clears it, and the destination's."""
        try:
            await self._destinations.send(destination, unit.batch)
        except Exception as exc:
            return self._failed(exc, destination, len(unit.members), unit.key)
        self._health.of(destination).sent(unit.key)
        self._stats.note_progress()
        return Sent()

    async def send_all(self, destination: str, units: list[Unit]) -> list[SendOutcome]:
        """Send the units all at once (pipelined on the link); their outcomes in their order."""
        return list(await asyncio.gather(*(self.send(destination, unit) for unit in units)))

    def _failed(self, exc: Exception, destination: str, count: int, key: BatchKey) -> SendOutcome:
        self._stats.count_error(exc)
        self._pair.note_error(PRIMARY, exc)
        outcome = send_failure(exc, destination, count)
        fields = {"destination": destination, "backlog_queue": self._queue, "error": repr(exc), "messages": count}
        match outcome:
            case Retry(whole_destination=True):
                # Destinations made a fresh sender for next time; a closed client has tripped
                # the close/fault rule.
                self._health.of(destination).failed()
            case Retry():
                health = self._health.of(destination)
                delay = health.failed(key)
                log.warning(
                    "send to the primary failed; backing off",
                    extra={**fields, "delay_seconds": delay, "down_seconds": health.down_for()},
                )
            case Split(keyed_by_message_id=True):
                # From now on its batches are keyed by message id (partitioning.md, "Partition keys").
                self._destinations.learn_keyed_by_message_id(destination)
            case DeadLetter(reason) if reason in _REFUSALS:
                log.error(_REFUSALS[reason], extra=fields)
        return outcome

    def _opening_failed(self, exc: Exception, destination: str) -> SendOutcome:
        """Opening the sender or sizing a batch failed: only a missing entity is final."""
        failure = failure_of(exc)
        if failure is Failure.ENTITY_NOT_FOUND:
            return self._failed(exc, destination, 1, None)
        if failure not in SERVICE_BUS:
            raise exc
        self._stats.count_error(exc)
        self._pair.note_error(PRIMARY, exc)
        health = self._health.of(destination)
        delay = health.failed()
        log.warning(
            "opening a sender to the primary failed; backing off",
            extra={
                "destination": destination,
                "backlog_queue": self._queue,
                "error": repr(exc),
                "delay_seconds": delay,
                "down_seconds": health.down_for(),
            },
        )
        return Retry()
