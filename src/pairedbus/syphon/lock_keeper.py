"""Lock renewal for the backlog messages the syphon holds: received, not yet settled or left."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import Generic

from pairedbus import sdk
from pairedbus.pairing.connections import SECONDARY, ConnectionPair
from pairedbus.pairing.failures import SERVICE_BUS, Failure, failure_of
from pairedbus.pairing.ports import M, Receiver
from pairedbus.syphon.stats import SyphonStats

log = logging.getLogger("pairedbus.syphon")


class LockKeeper(Generic[M]):
    """Renews the locks of the messages it keeps every `interval` seconds until they are released.

    Started per received batch, holding every message of it from the receive, and cancelled (then
    awaited) with it: a message whose send takes longer than the lock duration, or that waits that
    long for its turn behind earlier messages of its partition key (`KeyOrder`), keeps its lock.
    Renewing only what was being worked on let a key's waiting messages lapse: the broker
    redelivered them, they queued up behind the same key again and their first copies could no
    longer be completed (tests/drill/test_syphon_key_turn_locks.py). A renewal that fails is
    counted; the message may then be redelivered, and the destination's duplicate detection drops
    the second copy. One the broker answered with lock-lost is `lost`: it is not settled (the
    broker has made it available again, so a settlement would only be refused), and its
    redelivery is moved instead.
    """

    def __init__(
        self,
        receiver: Receiver[M],
        messages: Iterable[M],
        interval: float,
        stats: SyphonStats,
        pair: ConnectionPair,
        *,
        timeout: float | None = None,
        holders: set[LockKeeper[M]] | None = None,
    ) -> None:
        """`holders`: the syphon's keepers holding messages (`SyphonContext.holders`): this one is in it
        while it holds any, so a stop under the close/fault rule can give them back (`give_back`)."""
        self._timeout = timeout
        self._pair = pair
        self._receiver = receiver
        self._held: dict[int, M] = {id(m): m for m in messages}
        #: Messages left locked while a side of the pair was down: the syphon is stopping, so they are
        #: given back with the held ones rather than left to their lock (`leave`).
        self._left: dict[int, M] = {}
        #: The messages whose renewal the broker answered with lock-lost (by id: alive with the batch).
        self._lost: set[int] = set()
        self._interval = interval
        self._stats = stats
        self._holders = holders
        if holders is not None and self._held:
            holders.add(self)

    def lost(self, message: M) -> bool:
        """Whether this message's lock is lost: a renewal answered lock-lost, or a stop gave it back."""
        return id(message) in self._lost

    def release(self, message: M) -> None:
        """The message is being settled: stop renewing it."""
        self._held.pop(id(message), None)
        self._forget_if_empty()

    def leave(self, message: M) -> None:
        """The message is left locked for the broker to redeliver: stop renewing it. While a side of
        the pair is down (the close/fault rule will stop the syphon), keep it to be given back."""
        left = self._held.pop(id(message), None)
        if left is not None and not self._pair.both_up:
            self._left[id(left)] = left
        self._forget_if_empty()

    @property
    def holding(self) -> int:
        """Messages held or left that a stop would give back."""
        return len(self._held) + len(self._left)

    async def give_back(self, timeout: float) -> int:  # noqa: ASYNC109 (the outcome wait of `sdk.settle_together`)
        """Abandon every message held or left, so the broker redelivers it now rather than when its
        lock runs out; how many the broker took back. A held message is not settled after this
        (`lost`: its lock is gone), though its send may still be on its way: if that send was
        stored, the redelivered copy is dropped by the destination's duplicate detection. A failed
        abandon leaves the message to its lock, as before. Where the receiver is the SDK's, all at once
        with one wait for their outcomes (`sdk.settle_together`, within `timeout`): on a receive link the
        broker detached it abandons by lock token, where the SDK's `abandon_message` raised inside the SDK
        and shut the receiver's handler down (7 records in one harsh wire run, docs/drill.md)."""
        held = [*self._held.values(), *self._left.values()]
        self._lost.update(self._held)
        self._held.clear()
        self._left.clear()
        self._forget_if_empty()
        if not held:
            return 0
        together = await sdk.settle_together(self._receiver, held, timeout, sdk.ABANDON)
        if together is not None:
            results: list[BaseException | None] = list(together)
            self._stats.given_back += results.count(None)
        else:
            results = await asyncio.gather(*map(self._abandon, held), return_exceptions=True)
        for result in results:
            if result is not None and failure_of(result) not in SERVICE_BUS:
                raise result
        return results.count(None)

    async def _abandon(self, message: M) -> None:
        await self._receiver.abandon_message(message)
        self._stats.given_back += 1  # counted as each lands: a stop's bound may cut the rest short

    def _forget_if_empty(self) -> None:
        if self._holders is not None and not self._held and not self._left:
            self._holders.discard(self)

    async def run(self) -> None:
        """Renew what is held every interval from the receive, until cancelled (a slow round of
        renewals does not push the next one later: the locks it renewed date from its start)."""
        due = time.monotonic() + self._interval
        while True:
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            due = time.monotonic() + self._interval
            if self._held:
                await self._renew(list(self._held.values()))

    async def _renew(self, held: list[M]) -> None:
        results = await asyncio.gather(
            *(self._receiver.renew_message_lock(m, timeout=self._timeout) for m in held), return_exceptions=True
        )
        for message, result in zip(held, results, strict=True):
            if id(message) not in self._held:
                continue  # settled while its renewal was on the wire: nothing to report
            if isinstance(result, BaseException):
                failure = failure_of(result)
                if failure not in SERVICE_BUS:
                    raise result
                self._stats.count_error(result)
                self._pair.note_error(SECONDARY, result)
                self.release(message)
                if failure is Failure.LOCK_LOST:
                    self._lost.add(id(message))
                log.warning(
                    "backlog message lock renewal failed",
                    extra={"message_id": message.message_id, "error": repr(result)},
                )
            else:
                self._stats.lock_renewals += 1
