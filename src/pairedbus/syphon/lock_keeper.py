"""Lock renewal for the backlog messages the syphon holds: received, not yet settled or left."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import Generic

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
    ) -> None:
        self._timeout = timeout
        self._pair = pair
        self._receiver = receiver
        self._held: dict[int, M] = {id(m): m for m in messages}
        #: The messages whose renewal the broker answered with lock-lost (by id: alive with the batch).
        self._lost: set[int] = set()
        self._interval = interval
        self._stats = stats

    def lost(self, message: M) -> bool:
        """Whether the broker said this message's lock is lost (a renewal answered lock-lost)."""
        return id(message) in self._lost

    def release(self, message: M) -> None:
        """The message is settled or left to the broker: stop renewing it."""
        self._held.pop(id(message), None)

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
