"""Consumers on the primary: receive and record, complete, and record the complete's outcome (see
ledger.py: a complete that raised may have been applied all the same, its answer lost).

They read through `pairedbus.pairing.receive.ping_filtered`, so pings are completed and never reach the
ledger. Every error is retried: random faults hit receives and completes like everything else.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from azure.servicebus import NEXT_AVAILABLE_SESSION
from azure.servicebus.exceptions import ServiceBusError

from pairedbus.drill.ledger import Ledger
from pairedbus.drill.scenario import DrillEntity, DrillEntityKind
from pairedbus.errors import is_retryable
from pairedbus.pairing.receive import PingSkippingReceiver

RECEIVE_BATCH = 100
MAX_WAIT = 0.05
RETRY_PAUSE = 0.005
#: Tries of one complete while its failures are ones a retry can help.
COMPLETE_TRIES = 3


class Sabotage:
    """Test hook: every n-th delivery is completed but not recorded (neither received nor settled)."""

    def __init__(self, every: int) -> None:
        self.every = every
        self.count = 0

    def drops(self) -> bool:
        if not self.every:
            return False
        self.count += 1
        return self.count % self.every == 0


class _CountingReceiver(PingSkippingReceiver):
    """Remembers how many messages (pings included) the last receive returned."""

    last_batch_size = 0

    async def receive_messages(
        self, max_message_count: int | None = 1, max_wait_time: float | None = None
    ) -> list[Any]:
        before = self.pings_skipped
        kept = await super().receive_messages(max_message_count=max_message_count, max_wait_time=max_wait_time)
        self.last_batch_size = len(kept) + self.pings_skipped - before
        return kept


async def _drain(
    receiver: _CountingReceiver,
    destination: str,
    ledger: Ledger,
    sabotage: Sabotage,
    stop: asyncio.Event,
    *,
    until_empty: bool,
) -> None:
    """Receive and settle until stop is set (or, for a session, until it comes back empty)."""
    while not stop.is_set():
        messages = await receiver.receive_messages(max_message_count=RECEIVE_BATCH, max_wait_time=MAX_WAIT)
        if until_empty and not messages and receiver.last_batch_size == 0:
            return
        for message in messages:
            recorded = not sabotage.drops()
            if recorded:
                ledger.received(destination, message)
            completed = await _complete(receiver, message)
            if recorded:
                ledger.settled(destination, message, confirmed=completed)
            if not completed:
                # Perhaps not settled: then it comes back (a redelivery of this copy). Abandon so that
                # it comes back now (if the abandon fails too, when its lock expires).
                with contextlib.suppress(Exception):
                    await receiver.abandon_message(message)


async def _complete(receiver: Any, message: Any) -> bool:
    """Complete, again at once after a failure a retry can help (the lock is still held), as a
    careful application does; False when the message was not settled."""
    for attempt in range(1, COMPLETE_TRIES + 1):
        try:
            await receiver.complete_message(message)
            return True
        except ServiceBusError as exc:
            if attempt == COMPLETE_TRIES or not is_retryable(exc):
                return False
        except Exception:
            return False
    return False


async def consume(
    client: Any, entity: DrillEntity, subscription: str | None, ledger: Ledger, sabotage: Sabotage, stop: asyncio.Event
) -> None:
    """One consumer loop for a queue, a session queue or a subscription, until `stop`."""
    destination = entity.destinations[0] if subscription is None else f"{entity.name}/subscriptions/{subscription}"
    sessions = entity.kind is DrillEntityKind.SESSION_QUEUE
    while not stop.is_set():
        try:
            if subscription is not None:
                raw = client.get_subscription_receiver(entity.name, subscription, max_wait_time=MAX_WAIT)
            elif sessions:
                raw = client.get_queue_receiver(entity.name, session_id=NEXT_AVAILABLE_SESSION, max_wait_time=MAX_WAIT)
            else:
                raw = client.get_queue_receiver(entity.name, max_wait_time=MAX_WAIT)
            receiver = _CountingReceiver(raw)
            try:
                async with receiver:
                    await _drain(receiver, destination, ledger, sabotage, stop, until_empty=sessions)
            finally:
                ledger.pings_skipped += receiver.pings_skipped
        except asyncio.CancelledError:
            raise
        except Exception:
            # A fault, or no session available right now: try again shortly.
            pass
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), RETRY_PAUSE if not sessions else MAX_WAIT)
