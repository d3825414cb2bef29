"""Lock renewal for backlog messages whose hop to the primary is slow."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import Any

from azure.servicebus.exceptions import MessageLockLostError, ServiceBusError

from pairedbus.pairing.connections import SECONDARY, ConnectionPair
from pairedbus.syphon.stats import SyphonStats

log = logging.getLogger("pairedbus.syphon")


class LockKeeper:
    """Renews the locks of the messages it keeps every `interval` seconds until they are released.

    Started per received batch and cancelled (then awaited) with it, so a send that takes longer
    than the lock duration does not let the broker redeliver the message. Only messages being
    worked on are kept (`keep`): one waiting for its turn behind an earlier message of its
    partition key costs no renewals. A renewal that fails is counted; the message may then be
    redelivered, and the destination's duplicate detection drops the second copy. One the broker
    answered with lock-lost is `lost`: it is not settled (the broker has made it available again,
    so a settlement would only be refused), and its redelivery is moved instead.
    """

    def __init__(
        self,
        receiver: Any,
        messages: Iterable[Any],
        interval: float,
        stats: SyphonStats,
        pair: ConnectionPair,
        *,
        timeout: float | None = None,
    ) -> None:
        self._timeout = timeout
        self._pair = pair
        self._receiver = receiver
        self._held: dict[int, Any] = {id(m): m for m in messages}
        #: The messages whose renewal the broker answered with lock-lost (by id: alive with the batch).
        self._lost: set[int] = set()
        self._interval = interval
        self._stats = stats
        #: The locks of the batch's messages date from its receive (a monotonic clock, as the sleeps).
        self._received_at = time.monotonic()

    async def keep(self, messages: list[Any]) -> None:
        """Renew `messages` from now on. Their locks date from the receive: when they waited past
        a renewal interval for their turn, the renewal they missed is made now."""
        for message in messages:
            self._held[id(message)] = message
        if messages and time.monotonic() - self._received_at >= self._interval:
            await self._renew(messages)

    def lost(self, message: Any) -> bool:
        """Whether the broker said this message's lock is lost (a renewal answered lock-lost)."""
        return id(message) in self._lost

    def release(self, message: Any) -> None:
        """The message is settled or left to the broker: stop renewing it."""
        self._held.pop(id(message), None)

    async def run(self) -> None:
        """Renew what is kept every interval, until cancelled."""
        while True:
            await asyncio.sleep(self._interval)
            if self._held:
                await self._renew(list(self._held.values()))

    async def _renew(self, held: list[Any]) -> None:
        results = await asyncio.gather(
            *(self._receiver.renew_message_lock(m, timeout=self._timeout) for m in held), return_exceptions=True
        )
        for message, result in zip(held, results, strict=True):
            if id(message) not in self._held:
                continue  # settled while its renewal was on the wire: nothing to report
            if isinstance(result, BaseException):
                if not isinstance(result, (ServiceBusError, ValueError, TimeoutError)):
                    raise result
                self._stats.count_error(result)
                self._pair.note_error(SECONDARY, result)
                self.release(message)
                if isinstance(result, MessageLockLostError):
                    self._lost.add(id(message))
                log.warning(
                    "backlog message lock renewal failed",
                    extra={"message_id": message.message_id, "error": repr(result)},
                )
            else:
                self._stats.lock_renewals += 1
