"""Lock renewal for backlog messages whose hop to the primary is slow."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from azure.servicebus.exceptions import ServiceBusError

from pairedbus.syphon.close_fault import SECONDARY, ConnectionPair
from pairedbus.syphon.stats import SyphonStats

log = logging.getLogger("pairedbus.syphon")


class LockKeeper:
    """Renews the locks of the messages it holds every `interval` seconds until they are released.

    Started per received batch and cancelled (then awaited) once the batch is settled, so a send
    that takes longer than the lock duration does not let the broker redeliver the message. A
    renewal that fails is counted; the message may then be redelivered, and the destination's
    duplicate detection drops the second copy.
    """

    def __init__(
        self,
        receiver: Any,
        messages: list[Any],
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
        self._interval = interval
        self._stats = stats

    def release(self, message: Any) -> None:
        """The message is settled or left to the broker: stop renewing it."""
        self._held.pop(id(message), None)

    async def run(self) -> None:
        while self._held:
            await asyncio.sleep(self._interval)
            held = list(self._held.values())
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
                    log.warning(
                        "backlog message lock renewal failed",
                        extra={"message_id": message.message_id, "error": repr(result)},
                    )
                else:
                    self._stats.lock_renewals += 1
