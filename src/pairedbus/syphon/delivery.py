"""A pump's deliveries: a received batch's messages, restored and grouped by destination and
partition key, each group sent round by round and settled once the send that carried it returned.

A round packs what is left, sends it unit by unit and hands each send's outcome to one handler
(`Round._take`), which starts settling what the send finished; the round returns what it finished
and what stopped it (`RoundEnd`). Between rounds the delivery waits out a back-off in place, or,
when the wait is longer than the retry hold or the pump is halted, leaves its messages locked."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from datetime import datetime
from typing import Generic, TypeAlias

from azure.servicebus import ServiceBusMessage

from pairedbus.pairing.aliasing import UnrestorableMessage, restore_message
from pairedbus.pairing.ping import is_ping
from pairedbus.pairing.ports import M
from pairedbus.syphon.destinations import KEYS_UNKNOWN, BatchKey, MaybeKey, batch_key
from pairedbus.syphon.health import DestinationHealth, Health
from pairedbus.syphon.key_order import KeyOrder
from pairedbus.syphon.outcomes import DeadLetter, KeysBackingOff, Retry, RoundEnd, SendOutcome, Sent, Split
from pairedbus.syphon.sending import PrimarySends, Unit
from pairedbus.syphon.settlement import Settlement
from pairedbus.syphon.stats import SyphonStats

#: A delivery's messages: (the backlog message, its restored message), in the order received.
Items: TypeAlias = list[tuple[M, ServiceBusMessage]]


class Deliveries(Generic[M]):
    """What one pump's deliveries share across its batches: the turn of each (destination, key),
    so a key's messages reach the destination in the order the queue received them (`KeyOrder`);
    and what every pump shares: each destination's health (`health.Health`)."""

    def __init__(
        self,
        sends: PrimarySends,
        health: Health,
        stats: SyphonStats,
        *,
        retry_hold: float,
        halted: Callable[[], bool],
    ) -> None:
        self.sends = sends
        self._health = health
        self._stats = stats
        self._retry_hold = retry_hold
        self._halted = halted
        self._order = KeyOrder()

    async def dispatch(
        self, settlement: Settlement[M], tasks: asyncio.TaskGroup, messages: list[M], *, now: datetime
    ) -> None:
        """Pings are dropped, unrestorable messages dead-lettered, the rest delivered by
        destination and partition key (tasks started in the order received: a key's turns follow it).
        A batch for one destination and key, the usual case, is delivered here, not in a task of
        its own: a task starts a turn of the event loop later, and a busy loop's turn is milliseconds
        that every message of the batch would spend holding its slot before its send."""
        groups: dict[tuple[str, BatchKey], Items[M]] = {}
        pings: list[M] = []
        for message in messages:
            try:
                restored = restore_message(message, now=now)
            except UnrestorableMessage as exc:
                if is_ping(message):  # a ping is never forwarded, restorable or not
                    pings.append(message)
                else:
                    settlement.dead_letter(message, exc.reason, exc.description)
                continue
            if is_ping(restored):  # by the content type received and restored
                pings.append(message)
                continue
            outgoing = restored.message
            groups.setdefault((restored.destination, batch_key(outgoing)), []).append((message, outgoing))
        if pings:
            settlement.drop_pings(pings)
        if len(groups) == 1:
            ((destination, key), items), *_ = groups.items()
            await self.deliver(settlement, destination, key, items)
            return
        for (destination, key), items in groups.items():
            tasks.create_task(self.deliver(settlement, destination, key, items))

    async def deliver(self, settlement: Settlement[M], destination: str, key: BatchKey, items: Items[M]) -> None:
        """Send one destination's messages of one partition key in order, round by round.
        Retryable failures back off this key or this destination only.

        Keyed messages (session id or partition key: the ones whose order the service keeps) wait
        for the turn of their key, so they reach the destination in the order this queue received
        them; a key backing off holds up only its own later messages. Unkeyed messages have no
        order to keep (the service spreads them over fragments): their sends overlap."""
        turn = self._order.turn((destination, key)) if key is not None else contextlib.nullcontext()
        health = self._health.of(destination)
        async with turn:
            remaining = list(range(len(items)))
            waited = False
            while remaining:
                # A delivery that waited out a back-off tries once: the back-off it reads now may
                # have been pushed on by another delivery's failure meanwhile, and deliveries that
                # re-slept on it would leave one try per back-off for a whole destination.
                wait = 0.0 if waited else health.wait()
                waited = False
                if not wait:
                    remaining, wait = await self._round(settlement, health, key, items, remaining)
                if remaining and wait:
                    if not await self._wait_out(settlement, destination, [items[i][0] for i in remaining], wait):
                        return
                    waited = True

    async def _wait_out(self, settlement: Settlement[M], destination: str, messages: list[M], wait: float) -> bool:
        """Sleep out a back-off in place (True); or, when it is longer than the retry hold or the
        pump is halted, leave the messages locked for redelivery (False: the delivery ends)."""
        if wait > self._retry_hold or self._halted():
            await settlement.leave_locked(destination, messages)
            return False
        self._stats.retries += 1
        await asyncio.sleep(wait)
        return True

    async def _round(
        self,
        settlement: Settlement[M],
        health: DestinationHealth,
        key: BatchKey,
        items: Items[M],
        remaining: list[int],
    ) -> tuple[list[int], float]:
        """One round over `remaining`: what is left after it, and how long its keys back off
        (0: try again once the destination allows)."""
        end = await Round(self.sends, health, settlement, items, key=key).run(remaining)
        match end.stop:
            case DeadLetter(reason, description, everything=True):
                for index in remaining:
                    if index not in end.finished:
                        settlement.dead_letter(items[index][0], reason, description)
                return [], 0.0
            case KeysBackingOff(wait):
                return remaining, wait
        return [i for i in remaining if i not in end.finished], 0.0


class Round(Generic[M]):
    """One pass over a delivery's remaining items: pack, send unit by unit, start settling what was
    sent. A unit holds one partition key. A failed fragment fails only the keys it holds, so a
    keyed unit's failure backs off that key alone and the other units are still tried; a few keyed
    failures in a row to the destination, whichever their keys and deliveries, mean the destination
    itself is down (it backs off as a whole). The destination's health (`health.DestinationHealth`)
    is what it asks and tells; it knows nothing of the delivery that runs it."""

    def __init__(
        self,
        sends: PrimarySends,
        health: DestinationHealth,
        settlement: Settlement[M],
        items: Items[M],
        *,
        key: MaybeKey = KEYS_UNKNOWN,
    ) -> None:
        self._sends = sends
        self._health = health
        #: The batch key the delivery's messages were grouped by (`dispatch`), so packing need not read it again.
        self._key = key
        self._settlement = settlement
        self._destination = health.destination
        self._items = items
        self._finished: set[int] = set()
        #: Units still to send, the next on top: a refused batch is replaced by its messages, in order.
        self._stack: list[Unit] = []
        #: How long each partition key skipped or failed this round backs off.
        self._waits: list[float] = []

    async def run(self, remaining: list[int]) -> RoundEnd:
        packed = await self._sends.pack(self._destination, [self._items[i][1] for i in remaining], key=self._key)
        if not isinstance(packed, list):
            return RoundEnd(frozenset(), packed)
        stop = await self._send([Unit(u.batch, [remaining[i] for i in u.members], u.key) for u in packed])
        if stop is None and self._waits and not self._finished:
            return RoundEnd(frozenset(), KeysBackingOff(min(self._waits)))
        return RoundEnd(frozenset(self._finished), stop)

    async def _send(self, units: list[Unit]) -> SendOutcome | None:
        if len(units) > 1 and all(unit.key is None for unit in units):
            stop = await self._side_by_side(units)
            if stop is not None:
                return stop
        else:
            self._stack = units[::-1]
        return await self._one_by_one()

    async def _side_by_side(self, units: list[Unit]) -> SendOutcome | None:
        """Unkeyed units: sent all at once (pipelined on the link), their outcomes taken after.
        What a failure stops (a split batch's messages) waits for the next round, after the
        back-off; a missing destination stops it before a back-off does."""
        outcomes = await self._sends.send_all(self._destination, units)
        # Taken last to first: a refused batch's messages go on the stack, the first unit's on top.
        # What every acknowledged send carried is completed in one settlement (its sends were all
        # answered by now): one per send cost a task, a timer and a gather per 200 KB message.
        acknowledged: list[M] = []
        stops = [
            self._take(unit, outcome, acknowledged)
            for unit, outcome in reversed(list(zip(units, outcomes, strict=True)))
        ]
        if acknowledged:
            self._settlement.complete(acknowledged)
        return next((s for s in stops if isinstance(s, DeadLetter)), None) or next((s for s in stops if s), None)

    async def _one_by_one(self) -> SendOutcome | None:
        """The stacked units, one at a time: a keyed unit whose key backs off waits for the next
        round; one that fails backs off its key, unless the destination is down."""
        destination, health = self._destination, self._health
        while self._stack:
            unit = self._stack.pop()
            # Only a keyed unit reads its own back-off: the destination's was waited out before the round.
            wait = health.wait(unit.key) if unit.key is not None else 0.0
            if wait:
                self._waits.append(wait)
                continue
            outcome = await self._sends.send(destination, unit)
            failed = isinstance(outcome, Retry)
            health.count(failed=failed)
            if failed and unit.key is not None:
                if not health.down_by_its_keys:
                    self._waits.append(health.wait(unit.key))
                    continue
                health.went_down()
            stop = self._take(unit, outcome)
            if stop is not None:
                return stop
        return None

    def _take(self, unit: Unit, outcome: SendOutcome, acknowledged: list[M] | None = None) -> SendOutcome | None:
        """The one handler of a send's outcome: settle what it finished, stack what it split.
        Returns what stops the round (a Retry, or a DeadLetter of everything), else None. With
        `acknowledged`, what the send finished is added there, for the caller to complete."""
        match outcome:
            case Sent():
                self._finished.update(unit.members)
                finished = [self._items[m][0] for m in unit.members]
                if acknowledged is None:
                    self._settlement.complete(finished)
                else:
                    acknowledged.extend(finished)
            case Split():
                self._stack.extend(Unit(self._items[m][1], [m], unit.key) for m in reversed(unit.members))
            case DeadLetter(reason, description, everything=False):
                (member,) = unit.members
                self._finished.add(member)
                self._settlement.dead_letter(self._items[member][0], reason, description)
            case _:
                return outcome
        return None
