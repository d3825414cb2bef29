"""One backlog queue's pump: receive a batch, restore, send to the primary, settle after the ack.

The hot path is `BacklogPump._handle`: pings are completed (never forwarded), unrestorable
messages dead-lettered, the rest grouped by destination and sent batch by batch; a backlog message
is completed only after the send that carried it returned. Receives are pipelined: the next batch
is received while earlier ones are still being sent, within the syphon-wide in-flight budget.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from azure.servicebus.exceptions import (
    MessageSizeExceededError,
    MessagingEntityNotFoundError,
    ServiceBusError,
    ServiceBusQuotaExceededError,
)

from pairedbus import contract
from pairedbus.aliasing import UnrestorableMessage, restore_message
from pairedbus.errors import is_retryable
from pairedbus.syphon.backoff import Backoff
from pairedbus.syphon.close_fault import PRIMARY, SECONDARY, ConnectionPair
from pairedbus.syphon.destinations import Destinations
from pairedbus.syphon.in_flight import InFlightBudget
from pairedbus.syphon.lock_keeper import LockKeeper
from pairedbus.syphon.options import SyphonOptions
from pairedbus.syphon.stats import SyphonStats

log = logging.getLogger("pairedbus.syphon")

#: Dead-letter reasons for sends the primary refuses for good.
DEAD_LETTER_DESTINATION_NOT_FOUND = "DestinationNotFound"
DEAD_LETTER_MESSAGE_SIZE_EXCEEDED = "MessageSizeExceeded"
DEAD_LETTER_SEND_REJECTED = "SendRejected"
#: Dead-letter descriptions are application properties on the broker; keep them short.
_DESCRIPTION_MAX = 1024


@dataclass
class SyphonContext:
    """What every pump shares."""

    options: SyphonOptions
    stats: SyphonStats
    budget: InFlightBudget
    backoff: Backoff
    destinations: Destinations
    secondary: Any  # aio ServiceBusClient of the secondary namespace
    pair: ConnectionPair
    now: Callable[[], datetime]


class _Retry(Exception):
    """The destination failed in a way a later attempt can fix."""


class BacklogPump:
    def __init__(self, ctx: SyphonContext, queue: str) -> None:
        self._ctx = ctx
        self.queue = queue
        self._order: dict[str, asyncio.Lock] = {}
        self._receive_backoff = Backoff(
            ctx.options.backoff_initial.total_seconds(), ctx.options.backoff_max.total_seconds()
        )
        self._halt: asyncio.Event | None = None
        ctx.budget.join()  # left when run() ends

    async def run(self, *, wait: float, halt: asyncio.Event, until_empty: bool) -> None:
        """Serve the queue until `halt` is set (or, with `until_empty`, until a receive waited
        `wait` seconds for nothing); returns once every batch received is settled or left."""
        self._halt = halt
        ctx = self._ctx
        receiver = ctx.secondary.get_queue_receiver(self.queue, prefetch_count=0)
        try:
            async with asyncio.TaskGroup() as batches:
                while not halt.is_set():
                    granted = await ctx.budget.acquire(min(ctx.options.receive_batch_size, ctx.budget.share))
                    try:
                        messages = await self._receive(receiver, granted, wait, halt)
                    except BaseException:
                        await ctx.budget.release(granted)
                        raise
                    await ctx.budget.received(granted, len(messages or ()))
                    if messages is None:  # the queue or its client is gone
                        return
                    if messages is _RECEIVE_FAILED:
                        continue  # backing off; an error is not an empty queue
                    if messages:
                        batches.create_task(self._handle(receiver, messages))
                    elif until_empty:
                        return
        finally:
            ctx.budget.leave()
            try:
                await receiver.close()
            except (ServiceBusError, ValueError) as exc:
                log.debug("closing a backlog receiver failed", extra={"backlog_queue": self.queue, "error": repr(exc)})

    async def _receive(self, receiver: Any, count: int, wait: float, halt: asyncio.Event) -> list[Any] | None:
        """One receive raced against `halt`; [] when nothing came or the syphon is stopping,
        None when the queue no longer exists or its client was closed, _RECEIVE_FAILED after a
        retryable failure (the next receive waits out this queue's back-off first)."""
        delay = self._receive_backoff.remaining(self.queue)
        if delay:
            try:
                await asyncio.wait_for(halt.wait(), delay)
                return []
            except TimeoutError:
                pass
        receive = asyncio.ensure_future(receiver.receive_messages(max_message_count=count, max_wait_time=wait))
        halted = asyncio.ensure_future(halt.wait())
        try:
            await asyncio.wait((receive, halted), return_when=asyncio.FIRST_COMPLETED)
        finally:
            halted.cancel()
            if not receive.done():
                # Stopping: a message the broker hands over meanwhile stays locked and comes back.
                receive.cancel()
            await asyncio.gather(halted, receive, return_exceptions=True)
        if receive.cancelled():
            return []
        exc = receive.exception()
        if exc is None:
            self._receive_backoff.succeeded(self.queue)
            return receive.result()
        self._ctx.stats.count_error(exc)
        if self._ctx.pair.note_error(SECONDARY, exc):
            return None  # the close/fault rule takes over
        if isinstance(exc, MessagingEntityNotFoundError):
            log.warning("backlog queue vanished; its pump stops", extra={"backlog_queue": self.queue})
            return None
        if isinstance(exc, ValueError) and not self._ctx.pair.both_up:
            return None  # the secondary's client was closed; the close/fault rule takes over
        if isinstance(exc, ServiceBusError) and is_retryable(exc):
            delay = self._receive_backoff.failed(self.queue)
            log.warning(
                "backlog receive failed; backing off",
                extra={"backlog_queue": self.queue, "error": repr(exc), "delay_seconds": delay},
            )
            return _RECEIVE_FAILED
        raise exc

    # --- one received batch --------------------------------------------------------------

    async def _handle(self, receiver: Any, messages: list[Any]) -> None:
        ctx = self._ctx
        keeper = LockKeeper(receiver, messages, ctx.options.lock_renewal_interval, ctx.stats, ctx.pair)
        try:
            async with asyncio.TaskGroup() as renewal:
                renewing = renewal.create_task(keeper.run())
                try:
                    await self._dispatch(receiver, keeper, messages)
                finally:
                    renewing.cancel()
        finally:
            await ctx.budget.settled(len(messages))

    async def _dispatch(self, receiver: Any, keeper: LockKeeper, messages: list[Any]) -> None:
        now = self._ctx.now()
        groups: dict[str, list[tuple[Any, Any]]] = {}
        async with asyncio.TaskGroup() as work:
            for message in messages:
                if message.content_type == contract.PING_CONTENT_TYPE:
                    work.create_task(self._drop_ping(receiver, keeper, message))
                    continue
                try:
                    restored = restore_message(message, now=now)
                except UnrestorableMessage as exc:
                    work.create_task(self._dead_letter(receiver, keeper, message, exc.reason, exc.description))
                    continue
                groups.setdefault(restored.destination, []).append((message, restored.message))
            for destination, items in groups.items():
                work.create_task(self._deliver(receiver, keeper, destination, items))

    async def _deliver(self, receiver: Any, keeper: LockKeeper, destination: str, items: list[tuple[Any, Any]]) -> None:
        """Send one destination's messages in order, batch by batch; settle each batch's backlog
        messages after its send returned. Retryable failures back off this destination only."""
        ctx = self._ctx
        lock = self._order.setdefault(destination, asyncio.Lock())
        async with lock, asyncio.TaskGroup() as settling:
            remaining = list(range(len(items)))
            while remaining:
                delay = ctx.backoff.remaining(destination)
                if delay > ctx.options.retry_hold.total_seconds() or (delay and self._halted):
                    self._leave_locked(keeper, destination, [items[i][0] for i in remaining])
                    return
                if delay:
                    ctx.stats.retries += 1
                    await asyncio.sleep(delay)
                done: set[int] = set()
                try:
                    try:
                        units = await ctx.destinations.batches(destination, [items[i][1] for i in remaining])
                    except Exception as exc:
                        raise self._opening_verdict(exc, destination) from exc
                    for unit, indexes in units:
                        members = [remaining[i] for i in indexes]
                        await self._send_unit(receiver, keeper, destination, unit, members, items, settling, done)
                except _Retry:
                    pass
                except _Gone as gone:
                    for index in remaining:
                        if index not in done:
                            message = items[index][0]
                            settling.create_task(
                                self._dead_letter(receiver, keeper, message, gone.reason, gone.description)
                            )
                    return
                remaining = [i for i in remaining if i not in done]

    async def _send_unit(
        self,
        receiver: Any,
        keeper: LockKeeper,
        destination: str,
        unit: Any,
        members: list[int],
        items: list[tuple[Any, Any]],
        settling: asyncio.TaskGroup,
        done: set[int],
    ) -> None:
        """Send one batch (or lone message) and start settling its backlog messages once the send
        returned, adding them to `done`. Raises _Retry (back off) or _Gone (dead-letter the rest);
        dead-letters a lone message the primary refuses for good; a batch the primary refuses is
        sent again one message at a time."""
        ctx = self._ctx
        try:
            await ctx.destinations.send(destination, unit)
        except Exception as exc:
            verdict = self._verdict(exc, destination, len(members))
            if verdict is _SPLIT:
                for member in members:
                    await self._send_unit(
                        receiver, keeper, destination, items[member][1], [member], items, settling, done
                    )
                return
            if isinstance(verdict, _Gone) and not isinstance(exc, MessagingEntityNotFoundError):
                (member,) = members
                original = items[member][0]
                settling.create_task(self._dead_letter(receiver, keeper, original, verdict.reason, verdict.description))
                done.add(member)
                return
            raise verdict from exc  # type: ignore[misc]
        ctx.backoff.succeeded(destination)
        done.update(members)
        settling.create_task(self._complete(receiver, keeper, [items[member][0] for member in members]))

    def _opening_verdict(self, exc: Exception, destination: str) -> Exception:
        """Opening the sender or sizing a batch failed: only a missing entity is final."""
        if isinstance(exc, MessagingEntityNotFoundError):
            verdict = self._verdict(exc, destination, 1)
            assert isinstance(verdict, _Gone)
            return verdict
        if not isinstance(exc, (ServiceBusError, ValueError)):
            raise exc
        self._ctx.stats.count_error(exc)
        self._ctx.pair.note_error(PRIMARY, exc)
        delay = self._ctx.backoff.failed(destination)
        log.warning(
            "opening a sender to the primary failed; backing off",
            extra={"destination": destination, "backlog_queue": self.queue, "error": repr(exc), "delay_seconds": delay},
        )
        return _Retry()

    def _verdict(self, exc: Exception, destination: str, count: int) -> Exception | object:
        ctx = self._ctx
        ctx.stats.count_error(exc)
        ctx.pair.note_error(PRIMARY, exc)
        fields = {"destination": destination, "backlog_queue": self.queue, "error": repr(exc), "messages": count}
        if isinstance(exc, MessagingEntityNotFoundError):
            log.error("destination not found in the primary; dead-lettering", extra=fields)
            return _Gone(DEAD_LETTER_DESTINATION_NOT_FOUND, f"{destination!r} does not exist in the primary namespace")
        if isinstance(exc, MessageSizeExceededError):
            if count > 1:
                return _SPLIT
            return _Gone(DEAD_LETTER_MESSAGE_SIZE_EXCEEDED, _describe(exc))
        if isinstance(exc, ServiceBusError) and (is_retryable(exc) or isinstance(exc, ServiceBusQuotaExceededError)):
            # Quota exceeded is not retryable for the SDK, but a full destination drains; waiting
            # beats dead-lettering everything bound for it.
            delay = ctx.backoff.failed(destination)
            log.warning("send to the primary failed; backing off", extra={**fields, "delay_seconds": delay})
            return _Retry()
        if isinstance(exc, ServiceBusError):
            if count > 1:
                return _SPLIT  # e.g. a partitioned entity refusing a batch of distinct keys
            log.error("the primary refused a message; dead-lettering", extra=fields)
            return _Gone(DEAD_LETTER_SEND_REJECTED, _describe(exc))
        if isinstance(exc, ValueError):
            # The SDK's "handler has been shut down": the sender (or the whole client) was
            # closed. Destinations made a fresh sender for next time; a closed client has
            # tripped the close/fault rule.
            ctx.backoff.failed(destination)
            return _Retry()
        raise exc

    # --- settlement ---------------------------------------------------------------------

    @property
    def _halted(self) -> bool:
        return self._halt is not None and self._halt.is_set()

    def _leave_locked(self, keeper: LockKeeper, destination: str, messages: list[Any]) -> None:
        for message in messages:
            keeper.release(message)
        self._ctx.stats.left_locked += len(messages)
        log.info(
            "destination backing off; messages left locked for redelivery",
            extra={"destination": destination, "backlog_queue": self.queue, "messages": len(messages)},
        )

    async def _complete(self, receiver: Any, keeper: LockKeeper, messages: list[Any]) -> None:
        """Complete the backlog messages of one acknowledged send, all at once."""
        for message in messages:
            keeper.release(message)
        results = await asyncio.gather(*map(receiver.complete_message, messages), return_exceptions=True)
        moved = 0
        for message, result in zip(messages, results, strict=True):
            if result is None:
                moved += 1
            elif isinstance(result, (ServiceBusError, ValueError)):
                self._settle_failed(result, message, "complete")
            else:
                raise result
        self._ctx.stats.moved += moved

    async def _drop_ping(self, receiver: Any, keeper: LockKeeper, message: Any) -> None:
        keeper.release(message)
        if await self._settle(receiver.complete_message(message), message, "complete ping"):
            self._ctx.stats.dropped_pings += 1

    async def _dead_letter(
        self, receiver: Any, keeper: LockKeeper, message: Any, reason: str, description: str
    ) -> None:
        keeper.release(message)
        settled = await self._settle(
            receiver.dead_letter_message(message, reason=reason, error_description=description[:_DESCRIPTION_MAX]),
            message,
            "dead-letter",
        )
        if settled:
            self._ctx.stats.count_dead_letter(reason)
            log.warning(
                "backlog message dead-lettered",
                extra={
                    "backlog_queue": self.queue,
                    "message_id": message.message_id,
                    "reason": reason,
                    "description": description,
                },
            )

    async def _settle(self, operation: Any, message: Any, what: str) -> bool:
        """Run a settlement; a failure (lost lock, closed link) leaves the message to be
        redelivered, and a redelivered moved message is dropped by duplicate detection."""
        try:
            await operation
            return True
        except (ServiceBusError, ValueError) as exc:
            self._settle_failed(exc, message, what)
            return False

    def _settle_failed(self, exc: BaseException, message: Any, what: str) -> None:
        self._ctx.stats.count_error(exc)
        self._ctx.pair.note_error(SECONDARY, exc)
        log.warning(
            f"backlog {what} failed; the message will be redelivered",
            extra={"backlog_queue": self.queue, "message_id": message.message_id, "error": repr(exc)},
        )


class _Gone(Exception):
    """The primary refuses these messages for good: dead-letter them with this reason."""

    def __init__(self, reason: str, description: str) -> None:
        super().__init__(f"{reason}: {description}")
        self.reason = reason
        self.description = description


_SPLIT = object()
#: A receive that failed and will be retried after the queue's back-off (an empty list, by identity).
_RECEIVE_FAILED: list[Any] = []


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:_DESCRIPTION_MAX]
