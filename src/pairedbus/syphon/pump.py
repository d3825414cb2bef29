"""One backlog queue's pump: receive a batch, restore, send to the primary, settle after the ack.

The receive side is here: `BacklogPump.run` receives batch after batch, pipelined within the
syphon-wide in-flight budget, with up to `receivers_per_queue` receivers on a busy queue, and hands
each batch to `_handle`. What follows reads like the settlement spec, a module per concept:
`delivery` (pings completed, never forwarded; unrestorable messages dead-lettered; the rest
grouped by destination and partition key, each group sent round by round, a key's messages
taking turns so a key backing off holds up only its own later messages), `sending` (a send to
the primary and what its failure means), `outcomes` (the small results each step ends with, read
by one `match`: no exception steers the hot path) and `settlement` (complete, dead-letter or
leave locked, once the send that carried a message returned). Every call to Service Bus is
bounded by the operation timeout."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Sequence
from enum import Enum
from typing import Generic, TypeVar

from azure.servicebus.amqp import AmqpMessageBodyType

from pairedbus import sdk
from pairedbus.pairing.connections import SECONDARY
from pairedbus.pairing.failures import RETRYABLE, Failure, failure_of
from pairedbus.pairing.ports import M, MessageBody, Receiver
from pairedbus.syphon.backoff import Backoff
from pairedbus.syphon.context import SyphonContext
from pairedbus.syphon.delivery import Deliveries
from pairedbus.syphon.in_flight import Hold
from pairedbus.syphon.lock_keeper import LockKeeper
from pairedbus.syphon.outcomes import (  # noqa: F401  (the dead-letter reasons, where callers look for them)
    DEAD_LETTER_DESTINATION_NOT_FOUND,
    DEAD_LETTER_MESSAGE_SIZE_EXCEEDED,
    DEAD_LETTER_SEND_REJECTED,
)
from pairedbus.syphon.receive_plan import ReceivePlan, RestOfReceive
from pairedbus.syphon.sending import PrimarySends
from pairedbus.syphon.settlement import Settlement
from pairedbus.syphon.warm_receivers import close_quietly

log = logging.getLogger("pairedbus.syphon")
T = TypeVar("T")

#: Longest wait of an extra receiver's receive (seconds): it exists only while its queue is busy.
_EXTRA_WAIT = 1.0
#: Shortest wait of a receive while the queue's listed messages are not all received (seconds): such a receive
#: tests no queue for emptiness (`drain_wait`), it collects messages known to be there. A receive that returns
#: before its transfers arrived takes back its credit, and what arrives after it is released, to be locked and
#: sent again: over the wire with the benchmark's 100 ms drain wait, 18,800 transfers came for 10,000 messages
#: moved (the SDK's receive also goes on 0.2 s after its first message; docs/benchmarks.md, round 4).
_LISTED_WAIT = 0.5


class ReceiveEnd(Enum):
    """A receive that brought no messages: nothing came (or stopping), a retryable failure (the
    next receive waits out the queue's back-off), or the queue or its client is gone."""

    EMPTY = "empty"
    FAILED = "failed"
    GONE = "gone"


class BacklogPump(Generic[M]):
    def __init__(self, ctx: SyphonContext[M], queue: str, *, depth: int = 0, size_in_bytes: int = 0) -> None:
        """`depth` and `size_in_bytes`: what the listing reported for the queue (0: unknown), so
        a queue with work starts at full size (`ReceivePlan`) and its first receives already keep
        the byte bound."""
        self._ctx = ctx
        self.queue = queue
        self._plan = ReceivePlan(depth)
        if depth > 0 and size_in_bytes > 0:
            ctx.budget.expect_message_size(size_in_bytes / depth)
        self._deliveries: Deliveries[M] = Deliveries(
            PrimarySends(ctx.destinations, ctx.health, ctx.stats, ctx.pair, queue=queue),
            ctx.health,
            ctx.stats,
            retry_hold=ctx.options.retry_hold.total_seconds(),
            halted=lambda: self._halted,
        )
        self._receive_backoff = Backoff(
            ctx.options.backoff_initial.total_seconds(), ctx.options.backoff_max.total_seconds(), rng=ctx.rng
        )
        self._timeout = ctx.options.operation_timeout.total_seconds()
        self._halt: asyncio.Event | None = None
        self._open_receivers = 0
        self._listed_busy = self._plan.starts_busy
        ctx.budget.join(busy=self._listed_busy)  # left when run() ends

    @property
    def plan(self) -> ReceivePlan:
        """What the pump expected of its queue and what its receives found (read by `drain()`)."""
        return self._plan

    async def run(self, *, wait: float, halt: asyncio.Event, until_empty: bool) -> None:
        """Serve the queue until `halt` is set (or, with `until_empty`, until a receive waited
        `wait` seconds for nothing); returns once every batch received is settled or left.

        A queue listed with work starts with the receivers its depth warrants (`ReceivePlan`), up
        to `receivers_per_queue`, each receive sized to its share of the depth: a receive holds its
        grant for a round trip, so with one receiver the slots freed meanwhile sit idle until it
        returns. Without a listed depth the pump starts with a probe and opens more receivers while
        its receives come back full. An extra receiver stops as soon as the queue is no longer busy
        (a short receive, or the listed depth received)."""
        self._halt = halt
        try:
            async with asyncio.TaskGroup() as receivers:
                self._open_receivers += 1
                if self._plan.starts_busy:  # a queue listed with work: its receivers start together
                    self._add_receivers(receivers, self._warranted(), wait=wait, halt=halt, until_empty=until_empty)
                await self._receive_loop(receivers, wait=wait, halt=halt, until_empty=until_empty, extra=False)
        finally:
            self._ctx.budget.leave(busy=self._listed_busy)

    def _batch_size(self) -> int:
        """The most one receive brings: the receive size, or fewer large messages (the byte bound),
        or fewer while several busy queues share the budget (`InFlightBudget.receive_share`)."""
        options, budget = self._ctx.options, self._ctx.budget
        return min(options.receive_batch_size, budget.receive_limit, budget.receive_share(options.receivers_per_queue))

    def _warranted(self) -> int:
        """Receivers the queue warrants now (`ReceivePlan.receivers`), at most its share of the
        budget among the queues listed with work (`InFlightBudget.receivers_share`)."""
        batch_size = self._batch_size()
        most = min(self._ctx.options.receivers_per_queue, self._ctx.budget.receivers_share(batch_size))
        return self._plan.receivers(batch_size=batch_size, most=most)

    def _add_receivers(
        self, receivers: asyncio.TaskGroup, upto: int, *, wait: float, halt: asyncio.Event, until_empty: bool
    ) -> None:
        """Open extra receivers until `upto` are open."""
        while self._open_receivers < upto:
            self._open_receivers += 1
            receivers.create_task(
                self._receive_loop(receivers, wait=wait, halt=halt, until_empty=until_empty, extra=True)
            )

    async def _receive_loop(
        self, receivers: asyncio.TaskGroup, *, wait: float, halt: asyncio.Event, until_empty: bool, extra: bool
    ) -> None:
        """One receiver's loop: acquire slots, receive, hand the batch to a task, receive again.
        The receiver is closed only after its batches are settled (settlement needs its link).
        Counted in `_open_receivers` by whoever starts it, so two cannot start for one slot."""
        ctx = self._ctx
        budget = ctx.budget
        plan = self._plan
        receiver = ctx.secondary.get_queue_receiver(self.queue, prefetch_count=0)
        settling = self._settling()
        #: The batches the current receiver handed over: a retired receiver is closed after them.
        handed: set[asyncio.Task[None]] = set()
        busy = extra or plan.starts_busy
        opened = False  # opened before its first receive
        #: Slots of a short receive of listed messages, kept for its rest (`RestOfReceive`): received at once.
        carried = 0
        try:
            async with asyncio.TaskGroup() as batches:
                while not halt.is_set():
                    rest = RestOfReceive(plan, is_rest=carried > 0)
                    granted, carried = (self._with_free(carried) if carried else await self._acquire(busy)), 0
                    # Messages still listed: they are there, so a receive waits for them (`_LISTED_WAIT`).
                    receive_wait = max(wait, _LISTED_WAIT) if plan.expected else wait
                    try:
                        # An extra receiver exists while the queue is busy: it never long-polls.
                        received = await self._receive(
                            receiver,
                            granted,
                            min(receive_wait, _EXTRA_WAIT) if extra else receive_wait,
                            halt,
                            opened=opened,
                            rest=rest,
                        )
                    except BaseException:
                        await budget.release(granted)
                        raise
                    opened = True
                    nbytes, carried, busy = await self._record(received, granted, rest, busy=busy)
                    match received:
                        case ReceiveEnd.GONE:
                            return
                        case ReceiveEnd.FAILED:
                            if extra:
                                return
                            # Backing off (an error is not an empty queue), then on a fresh receiver: over
                            # the wire the SDK keeps a detached link's error on its receiver, and with its
                            # retries off every later receive on it raised that error again, the fault
                            # long healed, and the queue was never served (issue 34).
                            batches.create_task(self._retire(receiver, handed))
                            receiver, handed, opened, settling = (
                                ctx.secondary.get_queue_receiver(self.queue, prefetch_count=0),
                                set(),
                                False,
                                self._settling(),
                            )
                            continue
                        case ReceiveEnd.EMPTY:
                            if carried:
                                continue
                            if until_empty or extra:
                                return
                        case messages:
                            handling = batches.create_task(self._handle(receiver, messages, nbytes, settling))
                            handed.add(handling)
                            handling.add_done_callback(handed.discard)
                            if carried:
                                continue
                            if extra and not busy:
                                return
                            if busy:  # one more receiver per full receive, up to what the queue warrants
                                upto = min(self._open_receivers + 1, self._warranted())
                                self._add_receivers(receivers, upto, wait=wait, halt=halt, until_empty=until_empty)
        finally:
            await budget.release(carried)  # stopped before the rest was received
            self._open_receivers -= 1
            await self._close(receiver)

    async def _acquire(self, busy: bool) -> int:
        """Slots for the next receive: its share of what is expected, cut to what the budget grants."""
        limit = self._plan.receive_size(batch_size=self._batch_size(), receivers=self._open_receivers)
        return await self._ctx.budget.acquire(self._ctx.budget.ask(busy=busy, limit=limit))

    def _with_free(self, carried: int) -> int:
        """The slots of a receive's rest: those it carried, and what the budget has free now up to a receive's
        size (a rest of the few transfers a receive missed would otherwise be a receive, a batch and its sends
        of a few messages)."""
        limit = self._plan.receive_size(batch_size=self._batch_size(), receivers=self._open_receivers)
        return carried + self._ctx.budget.take_free(limit - carried)

    async def _record(
        self, received: list[M] | ReceiveEnd, granted: int, rest: RestOfReceive, *, busy: bool
    ) -> tuple[int, int, bool]:
        """Account a receive on `granted` slots: the budget keeps its messages and the slots its rest is
        received on (`RestOfReceive`) and frees the others; the plan counts its messages. Returns its body
        bytes, the slots carried to its rest (0: none follows) and whether the queue is still busy."""
        count, nbytes = (0, 0) if isinstance(received, ReceiveEnd) else (len(received), _body_bytes(received))
        failed = received is ReceiveEnd.FAILED or received is ReceiveEnd.GONE
        carried = granted - count if not failed and rest.follows(asked=granted, received=count) else 0
        await self._ctx.budget.received(granted - carried, count, nbytes)
        if failed:
            return nbytes, carried, False
        if count or not carried:  # nothing yet, its rest following: still expected, still busy
            busy = self._plan.received(count, granted)
        return nbytes, carried, busy

    def _settling(self) -> asyncio.Semaphore | None:
        """A new receiver's bound on its outstanding settlements, shared by its batches (None: unbounded)."""
        most = self._ctx.options.settles_per_receiver
        return None if most is None else asyncio.Semaphore(most)

    async def _retire(self, receiver: Receiver[M], handed: set[asyncio.Task[None]]) -> None:
        """Close a receiver no longer received from once the batches it handed over are settled
        (settlement needs its link)."""
        if handed:
            await asyncio.wait(handed)
        await self._close(receiver)

    async def _close(self, receiver: Receiver[M]) -> None:
        await close_receiver(receiver, self.queue)

    async def _receive(
        self,
        receiver: Receiver[M],
        count: int,
        wait: float,
        halt: asyncio.Event,
        *,
        opened: bool = True,
        rest: RestOfReceive | None = None,
    ) -> list[M] | ReceiveEnd:
        """One receive raced against `halt` and bounded by its wait plus the operation timeout;
        unless `opened`, the receiver's link is opened first, bounded by the operation timeout.

        The SDK bounds a receiver's link open by its first receive's wait (azure-servicebus 7.15.0,
        `ServiceBusReceiver._receive`: `_open(get_attempt_timeout(wait_time, ...))`, and a receive
        whose open used up the wait returns no messages): with a drain's short wait, over the wire,
        opens under load timed out again and again while the queue backed off, or came back empty
        from a queue with messages, and a 10-queue drain stalled with messages available."""
        delay = self._receive_backoff.remaining(self.queue)
        if delay:
            try:
                await asyncio.wait_for(halt.wait(), delay)
                return ReceiveEnd.EMPTY
            except TimeoutError:
                pass
        if not opened:
            opening = await self._raced(receiver.__aenter__(), self._timeout, halt, "opening the receiver")
            if isinstance(opening, ReceiveEnd):
                return opening
        received = await self._raced(
            receive_leaving_no_credit(receiver, count, wait, rest=rest),
            wait + self._timeout,
            halt,
            "receive",
        )
        if isinstance(received, ReceiveEnd):
            return received
        self._receive_backoff.succeeded(self.queue)
        self._ctx.stats.note_progress()
        return received or ReceiveEnd.EMPTY

    async def _raced(self, call: Awaitable[T], bound: float, halt: asyncio.Event, what: str) -> T | ReceiveEnd:
        """`call`'s result, raced against `halt` (EMPTY) and bounded by `bound` seconds; a failure
        or an overrun is `_receive_failed`'s to judge."""
        task = asyncio.ensure_future(call)
        halted = asyncio.ensure_future(halt.wait())
        try:
            await asyncio.wait((task, halted), timeout=bound, return_when=asyncio.FIRST_COMPLETED)
        finally:
            halted.cancel()
            overran = not task.done() and not halted.done()
            # Stopping (or overran): a message the broker hands over meanwhile stays locked and
            # comes back.
            await cancel_until_done(task)
            await asyncio.gather(halted, return_exceptions=True)
        if overran:
            return self._receive_failed(TimeoutError(f"{what} took over {bound:g} s"))
        if task.cancelled():
            return ReceiveEnd.EMPTY
        exc = task.exception()
        if exc is not None:
            return self._receive_failed(exc)
        return task.result()

    def _receive_failed(self, exc: BaseException) -> ReceiveEnd:
        self._ctx.stats.count_error(exc)
        failure = failure_of(exc)
        if self._ctx.pair.note_error(SECONDARY, exc):
            return ReceiveEnd.GONE  # the close/fault rule takes over
        if failure is Failure.ENTITY_NOT_FOUND:
            log.warning("backlog queue vanished; its pump stops", extra={"backlog_queue": self.queue})
            return ReceiveEnd.GONE
        if not self._ctx.pair.both_up:
            # A side is down and the close/fault rule takes over: whatever a receive on a client
            # it closed raises (the SDK's ValueError, or over the wire its ServiceBusError
            # "Handler failed: 'NoneType' object has no attribute 'flow'") is that, not a new fault.
            return ReceiveEnd.GONE
        if failure in RETRYABLE:
            delay = self._receive_backoff.failed(self.queue)
            log.warning(
                "backlog receive failed; backing off",
                extra={"backlog_queue": self.queue, "error": repr(exc), "delay_seconds": delay},
            )
            return ReceiveEnd.FAILED
        raise exc

    # --- one received batch --------------------------------------------------------------

    async def _handle(
        self, receiver: Receiver[M], messages: list[M], nbytes: int, settling: asyncio.Semaphore | None = None
    ) -> None:
        """Deliver one received batch; returns once each of its messages is settled or left."""
        ctx = self._ctx
        hold = Hold(ctx.budget, len(messages), nbytes)
        keeper = LockKeeper(
            receiver,
            messages,
            ctx.options.lock_renewal_interval,
            ctx.stats,
            ctx.pair,
            timeout=self._timeout,
            holders=ctx.holders,
        )
        try:
            async with asyncio.TaskGroup() as batch:
                settlement = Settlement(ctx, self.queue, receiver, keeper, hold, batch, settling)
                renewing = batch.create_task(keeper.run())
                try:
                    async with asyncio.TaskGroup() as deliveries:
                        await self._deliveries.dispatch(settlement, deliveries, messages, now=ctx.now())
                finally:
                    renewing.cancel()
        finally:
            await hold.give_back_rest()

    @property
    def _halted(self) -> bool:
        return self._halt is not None and self._halt.is_set()


async def close_receiver(receiver: Receiver[M], queue: str) -> None:
    """Close a backlog receiver once the transfers still on their way to it are read and released: its receives
    took back the credit they left (`receive_leaving_no_credit`), so the SDK's close would not, and their
    messages stayed locked for the lock duration (`sdk.release_in_flight`). Closing is best effort."""
    await sdk.release_in_flight(receiver)
    await close_quietly(receiver, queue)


async def receive_leaving_no_credit(
    receiver: Receiver[M], count: int, wait: float, *, rest: RestOfReceive | None = None
) -> list[M]:
    """One receive of at most `count` messages; one that returned fewer takes back the link credit it left
    open (`sdk.close_link_credit`), so that the broker locks no message for a receiver that is not
    receiving (a pump waiting for its budget, a receiver retired after its batches): over the wire such
    messages stayed locked until the SDK's keep-alive released them, and were locked again on the same
    credit (issue 34). Unless its rest follows at once (`rest`, `RestOfReceive`): the next receive asks
    for it on the same credit."""
    received = await receiver.receive_messages(max_message_count=count, max_wait_time=wait)
    if len(received) < count and not (rest is not None and rest.follows(asked=count, received=len(received))):
        await sdk.close_link_credit(receiver)
    return received


#: How often `cancel_until_done` cancels again a task that swallowed its cancellation (seconds).
RECANCEL_INTERVAL = 0.05


async def cancel_until_done(task: asyncio.Future[T]) -> None:
    """Cancel `task` until it ends, then return (its result or error is the caller's to read).

    One cancel was not always enough for an SDK call: Python 3.11's `asyncio.wait_for`, around every
    frame read of the SDK, drops a cancellation that arrives as its read completes (CPython gh-86296;
    `sdk.keep_cancellations` mends the SDK's modules, this is the guard for any other frame that
    swallows one). A receive that lost its cancellation went on into its long poll while its pump
    waited for it. Cancelling again reaches the task at its next await. A cancellation of the caller
    meanwhile is kept and raised once `task` has ended (an SDK call must not outlive its pump: it uses
    the pump's receiver). Its error is marked read: a caller being cancelled never reads it, and asyncio
    then logged "Task exception was never retrieved" for a receive the SDK ended with its own error (busy,
    connection lost) as its pump stopped (twice in the 200-message harsh wire drill)."""
    cancelled = False
    while not task.done():
        task.cancel()
        try:
            await asyncio.wait({task}, timeout=RECANCEL_INTERVAL)
        except asyncio.CancelledError:
            cancelled = True
    if not task.cancelled():
        task.exception()
    if cancelled:
        raise asyncio.CancelledError


def _body_bytes(messages: Sequence[MessageBody]) -> int:
    """The body bytes of received messages (what the byte bound counts): data sections only."""
    total = 0
    for message in messages:
        if message.body_type == AmqpMessageBodyType.DATA:
            total += sum(map(len, message.body))
    return total
