"""One backlog queue's pump: receive a batch, restore, send to the primary, settle after the ack.

The hot path is `BacklogPump._handle`: pings are completed (never forwarded), unrestorable
messages dead-lettered, the rest grouped by destination and partition key and sent batch by batch;
a backlog message is completed only after the send that carried it returned. A key's messages
keep their order by taking turns (`KeyOrder`), so a key backing off holds up only its own later
messages. How each message ends (complete, dead-letter, leave locked) is the batch's `Settlement`,
whose tasks the batch awaits or cancels. Each step ends with a small result
(`ReceiveEnd`; `Sent` / `Retry` / `Split` / `DeadLetter` for a send; `KeysBackingOff` for a round)
read by one `match`; no exception steers the hot path. Every call to Service Bus is bounded by
the operation timeout. Receives are pipelined: the next batch is received while earlier ones are
still being sent, within the syphon-wide in-flight budget, and a busy queue is served by up to
`receivers_per_queue` receivers at once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any

from azure.servicebus.amqp import AmqpMessageBodyType
from azure.servicebus.exceptions import (
    MessageSizeExceededError,
    MessagingEntityNotFoundError,
    ServiceBusError,
    ServiceBusQuotaExceededError,
)

from pairedbus import contract
from pairedbus.errors import is_retryable
from pairedbus.pairing.aliasing import UnrestorableMessage, restore_message
from pairedbus.pairing.connections import PRIMARY, SECONDARY, ConnectionPair
from pairedbus.syphon.backoff import Backoff
from pairedbus.syphon.destinations import Destinations, batch_key
from pairedbus.syphon.in_flight import Hold, InFlightBudget
from pairedbus.syphon.key_order import KeyOrder
from pairedbus.syphon.lock_keeper import LockKeeper
from pairedbus.syphon.options import SyphonOptions
from pairedbus.syphon.receive_plan import ReceivePlan
from pairedbus.syphon.stats import SyphonStats

log = logging.getLogger("pairedbus.syphon")

#: Dead-letter reasons for sends the primary refuses for good.
DEAD_LETTER_DESTINATION_NOT_FOUND = "DestinationNotFound"
DEAD_LETTER_MESSAGE_SIZE_EXCEEDED = "MessageSizeExceeded"
DEAD_LETTER_SEND_REJECTED = "SendRejected"
#: Keyed sends to one destination failed in a row, across its keys, after which the destination
#: itself backs off (it, not one fragment, is down).
_MAX_FAILED_UNITS_PER_ROUND = 3
#: Longest wait of an extra receiver's receive (seconds): it exists only while its queue is busy.
_EXTRA_WAIT = 1.0
#: Tries of one settlement while its failures are ones a retry can help.
_SETTLE_TRIES = 3
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


# --- what one step of the hot path ends with (read by one `match` each) ----------------------


class ReceiveEnd(Enum):
    """A receive that brought no messages: nothing came (or stopping), a retryable failure (the
    next receive waits out the queue's back-off), or the queue or its client is gone."""

    EMPTY = "empty"
    FAILED = "failed"
    GONE = "gone"


@dataclass(frozen=True, slots=True)
class Sent:
    """The primary acknowledged the send: its backlog messages can be completed."""


@dataclass(frozen=True, slots=True)
class Retry:
    """The destination failed in a way a later attempt can fix (its back-off was advanced)."""


@dataclass(frozen=True, slots=True)
class Split:
    """The primary refused a batch: send its messages one at a time."""


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """The primary refuses for good: dead-letter the message (or, with `everything`, every message
    still bound for the destination, which does not exist)."""

    reason: str
    description: str
    everything: bool = False


SendOutcome = Sent | Retry | Split | DeadLetter


@dataclass(frozen=True, slots=True)
class KeysBackingOff:
    """Nothing was tried: every partition key left is backing off (a failed fragment) for at
    least `wait` seconds."""

    wait: float


class BacklogPump:
    def __init__(self, ctx: SyphonContext, queue: str, *, depth: int = 0, size_in_bytes: int = 0) -> None:
        """`depth` and `size_in_bytes`: what the listing reported for the queue (0: unknown), so
        a queue with work starts at full size (`ReceivePlan`) and its first receives already keep
        the byte bound."""
        self._ctx = ctx
        self.queue = queue
        self._plan = ReceivePlan(depth)
        if depth > 0 and size_in_bytes > 0:
            ctx.budget.expect_message_size(size_in_bytes / depth)
        self._order = KeyOrder()
        #: Keyed sends failed in a row per destination, whichever their keys (reset by a success).
        self._failed_in_a_row: dict[str, int] = {}
        self._receive_backoff = Backoff(
            ctx.options.backoff_initial.total_seconds(), ctx.options.backoff_max.total_seconds()
        )
        self._timeout = ctx.options.operation_timeout.total_seconds()
        self._halt: asyncio.Event | None = None
        self._open_receivers = 0
        ctx.budget.join()  # left when run() ends

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
            self._ctx.budget.leave()

    def _batch_size(self) -> int:
        """The most one receive brings: the receive size, or fewer large messages (the byte bound)."""
        return min(self._ctx.options.receive_batch_size, self._ctx.budget.receive_limit)

    def _warranted(self) -> int:
        """Receivers the queue warrants now (`ReceivePlan.receivers`)."""
        return self._plan.receivers(batch_size=self._batch_size(), most=self._ctx.options.receivers_per_queue)

    def _add_receivers(self, receivers: asyncio.TaskGroup, upto: int, **loop: Any) -> None:
        """Open extra receivers until `upto` are open."""
        while self._open_receivers < upto:
            self._open_receivers += 1
            receivers.create_task(self._receive_loop(receivers, **loop, extra=True))

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
        busy = extra or plan.starts_busy
        try:
            async with asyncio.TaskGroup() as batches:
                while not halt.is_set():
                    limit = plan.receive_size(batch_size=self._batch_size(), receivers=self._open_receivers)
                    granted = await budget.acquire(budget.ask(busy=busy, limit=limit))
                    try:
                        # An extra receiver exists while the queue is busy: it never long-polls.
                        received = await self._receive(
                            receiver, granted, min(wait, _EXTRA_WAIT) if extra else wait, halt
                        )
                    except BaseException:
                        await budget.release(granted)
                        raise
                    count = 0 if isinstance(received, ReceiveEnd) else len(received)
                    nbytes = _body_bytes(received) if count else 0
                    await budget.received(granted, count, nbytes)
                    if not isinstance(received, ReceiveEnd) or received is ReceiveEnd.EMPTY:
                        busy = plan.received(count, granted)
                    else:
                        busy = False
                    match received:
                        case ReceiveEnd.GONE:
                            return
                        case ReceiveEnd.FAILED:
                            if extra:
                                return
                            continue  # backing off; an error is not an empty queue
                        case ReceiveEnd.EMPTY:
                            if until_empty or extra:
                                return
                        case messages:
                            batches.create_task(self._handle(receiver, messages, nbytes))
                            if extra and not busy:
                                return
                            if busy:  # one more receiver per full receive, up to what the queue warrants
                                upto = min(self._open_receivers + 1, self._warranted())
                                self._add_receivers(receivers, upto, wait=wait, halt=halt, until_empty=until_empty)
        finally:
            self._open_receivers -= 1
            try:
                await receiver.close()
            except (ServiceBusError, ValueError) as exc:
                log.debug("closing a backlog receiver failed", extra={"backlog_queue": self.queue, "error": repr(exc)})

    async def _receive(self, receiver: Any, count: int, wait: float, halt: asyncio.Event) -> list[Any] | ReceiveEnd:
        """One receive raced against `halt` and bounded by its wait plus the operation timeout."""
        delay = self._receive_backoff.remaining(self.queue)
        if delay:
            try:
                await asyncio.wait_for(halt.wait(), delay)
                return ReceiveEnd.EMPTY
            except TimeoutError:
                pass
        receive = asyncio.ensure_future(receiver.receive_messages(max_message_count=count, max_wait_time=wait))
        halted = asyncio.ensure_future(halt.wait())
        try:
            await asyncio.wait((receive, halted), timeout=wait + self._timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            halted.cancel()
            overran = not receive.done() and not halted.done()
            if not receive.done():
                # Stopping (or overran): a message the broker hands over meanwhile stays locked
                # and comes back.
                receive.cancel()
            await asyncio.gather(halted, receive, return_exceptions=True)
        if overran:
            return self._receive_failed(TimeoutError(f"receive took over {wait + self._timeout:g} s"))
        if receive.cancelled():
            return ReceiveEnd.EMPTY
        exc = receive.exception()
        if exc is None:
            self._receive_backoff.succeeded(self.queue)
            self._ctx.stats.note_progress()
            return receive.result() or ReceiveEnd.EMPTY
        return self._receive_failed(exc)

    def _receive_failed(self, exc: BaseException) -> ReceiveEnd:
        self._ctx.stats.count_error(exc)
        if self._ctx.pair.note_error(SECONDARY, exc):
            return ReceiveEnd.GONE  # the close/fault rule takes over
        if isinstance(exc, MessagingEntityNotFoundError):
            log.warning("backlog queue vanished; its pump stops", extra={"backlog_queue": self.queue})
            return ReceiveEnd.GONE
        if isinstance(exc, ValueError) and not self._ctx.pair.both_up:
            return ReceiveEnd.GONE  # the secondary's client was closed; the close/fault rule takes over
        if isinstance(exc, TimeoutError) or (isinstance(exc, ServiceBusError) and is_retryable(exc)):
            delay = self._receive_backoff.failed(self.queue)
            log.warning(
                "backlog receive failed; backing off",
                extra={"backlog_queue": self.queue, "error": repr(exc), "delay_seconds": delay},
            )
            return ReceiveEnd.FAILED
        raise exc

    # --- one received batch --------------------------------------------------------------

    async def _handle(self, receiver: Any, messages: list[Any], nbytes: int) -> None:
        ctx = self._ctx
        hold = Hold(ctx.budget, len(messages), nbytes)
        keeper = LockKeeper(receiver, (), ctx.options.lock_renewal_interval, ctx.stats, ctx.pair, timeout=self._timeout)
        try:
            async with asyncio.TaskGroup() as batch:
                settlement = Settlement(ctx, self.queue, receiver, keeper, hold, batch)
                renewing = batch.create_task(keeper.run())
                try:
                    async with asyncio.TaskGroup() as deliveries:
                        self._dispatch(settlement, deliveries, messages)
                finally:
                    renewing.cancel()
        finally:
            await hold.give_back_rest()

    def _dispatch(self, settlement: Settlement, deliveries: asyncio.TaskGroup, messages: list[Any]) -> None:
        """Pings are dropped, unrestorable messages dead-lettered, the rest delivered by
        destination and partition key (tasks started in the order received: a key's turns follow it)."""
        now = self._ctx.now()
        groups: dict[tuple[str, Any], list[tuple[Any, Any]]] = {}
        pings: list[Any] = []
        for message in messages:
            if message.content_type == contract.PING_CONTENT_TYPE:
                pings.append(message)
                continue
            try:
                restored = restore_message(message, now=now)
            except UnrestorableMessage as exc:
                settlement.dead_letter(message, exc.reason, exc.description)
                continue
            key = (restored.destination, batch_key(restored.message))
            groups.setdefault(key, []).append((message, restored.message))
        if pings:
            settlement.drop_pings(pings)
        for (destination, key), items in groups.items():
            deliveries.create_task(self._deliver(settlement, destination, key, items))

    async def _deliver(self, settlement: Settlement, destination: str, key: Any, items: list[tuple[Any, Any]]) -> None:
        """Send one destination's messages of one partition key in order, unit by unit; each
        unit's backlog messages are settled once its send returned. Retryable failures back off
        this key or this destination only.

        Keyed messages (session id or partition key: the ones whose order the service keeps) wait
        for the turn of their key, so they reach the destination in the order this queue received
        them; a key backing off holds up only its own later messages. Unkeyed messages have no
        order to keep (the service spreads them over fragments): their sends overlap."""
        ctx = self._ctx
        hold_limit = ctx.options.retry_hold.total_seconds()
        turn = self._order.turn((destination, key)) if key is not None else contextlib.nullcontext()
        async with turn:
            await settlement.keep([message for message, _ in items])  # renewed while worked on
            remaining = list(range(len(items)))
            waited = False
            while remaining:
                # A delivery that waited out a back-off tries once: the back-off it reads now may
                # have been pushed on by another delivery's failure meanwhile, and deliveries that
                # re-slept on it would leave one try per back-off for a whole destination.
                wait = 0.0 if waited else ctx.backoff.remaining(destination)
                waited = False
                if not wait:
                    done: set[int] = set()
                    match await self._send_round(settlement, destination, items, remaining, done):
                        case DeadLetter(reason, description, everything=True):
                            for index in remaining:
                                if index not in done:
                                    settlement.dead_letter(items[index][0], reason, description)
                            return
                        case KeysBackingOff(wait):
                            pass
                    remaining = [i for i in remaining if i not in done]
                if remaining and wait:
                    if wait > hold_limit or self._halted:
                        await settlement.leave_locked(destination, [items[i][0] for i in remaining])
                        return
                    ctx.stats.retries += 1
                    await asyncio.sleep(wait)
                    waited = True

    async def _send_round(
        self,
        settlement: Settlement,
        destination: str,
        items: list[tuple[Any, Any]],
        remaining: list[int],
        done: set[int],
    ) -> SendOutcome | KeysBackingOff:
        """One pass over `remaining`: pack, send unit by unit, start settling what was sent (added
        to `done`). Ends with Sent when every unit was handled; with the Retry or the
        destination-wide DeadLetter that stopped it; or, when nothing could be tried because the
        partition keys left are backing off, with KeysBackingOff.

        A unit holds one partition key. A failed fragment fails only the keys it holds, so a
        keyed unit's failure backs off that key alone and the other units are still tried; a
        few keyed failures in a row to the destination, whichever their keys and deliveries, mean
        the destination itself is down (it backs off as a whole)."""
        ctx = self._ctx
        try:
            packed = await ctx.destinations.batches(destination, [items[i][1] for i in remaining])
        except Exception as exc:
            return self._opening_outcome(exc, destination)
        # A stack of (unit, item indexes, key): a refused batch is replaced by its messages, in order.
        stack = [(unit, [remaining[i] for i in indexes], key) for unit, indexes, key in reversed(packed)]
        waits: list[float] = []
        retried: Retry | None = None
        if len(stack) > 1 and all(key is None for _, _, key in stack):
            # Unkeyed units: sent all at once (pipelined on the link), read in order after.
            units = stack[::-1]
            stack = []
            outcomes = await asyncio.gather(
                *(self._send_unit(destination, unit, len(members), destination) for unit, members, _ in units)
            )
            for (_, members, key), outcome in zip(units, outcomes, strict=True):
                match outcome:
                    case Sent():
                        done.update(members)
                        settlement.complete([items[m][0] for m in members])
                    case Split():
                        stack.extend((items[m][1], [m], key) for m in members)
                    case DeadLetter(reason, description, everything=False):
                        (member,) = members
                        done.add(member)
                        settlement.dead_letter(items[member][0], reason, description)
                    case DeadLetter():
                        return outcome
                    case Retry():
                        retried = outcome
            stack.reverse()
            if retried is not None:
                return retried  # what was split waits for the next round, after the back-off
        while stack:
            unit, members, key = stack.pop()
            backoff_key = destination if key is None else (destination, key)
            wait = ctx.backoff.remaining(backoff_key) if key is not None else 0.0
            if wait:
                waits.append(wait)
                continue
            outcome = await self._send_unit(destination, unit, len(members), backoff_key)
            failures_in_a_row = self._failed_in_a_row.get(destination, 0) + 1 if isinstance(outcome, Retry) else 0
            self._failed_in_a_row[destination] = failures_in_a_row
            match outcome:
                case Retry() if key is not None and failures_in_a_row < _MAX_FAILED_UNITS_PER_ROUND:
                    waits.append(ctx.backoff.remaining(backoff_key))
                case Retry():
                    if key is not None:
                        ctx.backoff.failed(destination)  # not one fragment: the destination
                        self._failed_in_a_row[destination] = 0
                    return outcome
                case Sent():
                    done.update(members)
                    settlement.complete([items[m][0] for m in members])
                case Split():
                    stack.extend((items[m][1], [m], key) for m in reversed(members))
                case DeadLetter(reason, description, everything=False):
                    (member,) = members
                    done.add(member)
                    settlement.dead_letter(items[member][0], reason, description)
                case DeadLetter():
                    return outcome
        if waits and not done:
            return KeysBackingOff(min(waits))
        return Sent()

    async def _send_unit(self, destination: str, unit: Any, count: int, backoff_key: Any) -> SendOutcome:
        """Send one batch (or lone message) to the primary; what its answer means. A retryable
        failure backs off `backoff_key`: the destination, or one of its partition keys."""
        ctx = self._ctx
        try:
            await ctx.destinations.send(destination, unit)
        except Exception as exc:
            return self._send_outcome(exc, destination, count, backoff_key)
        ctx.backoff.succeeded(backoff_key)
        if backoff_key != destination:
            ctx.backoff.succeeded(destination)
        ctx.stats.note_progress()
        return Sent()

    def _opening_outcome(self, exc: Exception, destination: str) -> SendOutcome:
        """Opening the sender or sizing a batch failed: only a missing entity is final."""
        if isinstance(exc, MessagingEntityNotFoundError):
            return self._send_outcome(exc, destination, 1)
        if not isinstance(exc, (ServiceBusError, ValueError, TimeoutError)):
            raise exc
        self._ctx.stats.count_error(exc)
        self._ctx.pair.note_error(PRIMARY, exc)
        delay = self._ctx.backoff.failed(destination)
        log.warning(
            "opening a sender to the primary failed; backing off",
            extra={"destination": destination, "backlog_queue": self.queue, "error": repr(exc), "delay_seconds": delay},
        )
        return Retry()

    def _send_outcome(self, exc: Exception, destination: str, count: int, backoff_key: Any = None) -> SendOutcome:
        ctx = self._ctx
        ctx.stats.count_error(exc)
        ctx.pair.note_error(PRIMARY, exc)
        fields = {"destination": destination, "backlog_queue": self.queue, "error": repr(exc), "messages": count}
        if isinstance(exc, MessagingEntityNotFoundError):
            log.error("destination not found in the primary; dead-lettering", extra=fields)
            return DeadLetter(
                DEAD_LETTER_DESTINATION_NOT_FOUND,
                f"{destination!r} does not exist in the primary namespace",
                everything=True,
            )
        if isinstance(exc, MessageSizeExceededError):
            return Split() if count > 1 else DeadLetter(DEAD_LETTER_MESSAGE_SIZE_EXCEEDED, _describe(exc))
        if isinstance(exc, TimeoutError) or (
            isinstance(exc, ServiceBusError) and (is_retryable(exc) or isinstance(exc, ServiceBusQuotaExceededError))
        ):
            # Quota exceeded is not retryable for the SDK, but a full destination drains; waiting
            # beats dead-lettering everything bound for it.
            delay = ctx.backoff.failed(destination if backoff_key is None else backoff_key)
            log.warning("send to the primary failed; backing off", extra={**fields, "delay_seconds": delay})
            return Retry()
        if isinstance(exc, ServiceBusError):
            if count > 1:
                # e.g. a partitioned entity refusing a batch of distinct keys: from now on its
                # batches are keyed by message id (partitioning.md, "Partition keys").
                ctx.destinations.learn_keyed_by_message_id(destination)
                return Split()
            log.error("the primary refused a message; dead-lettering", extra=fields)
            return DeadLetter(DEAD_LETTER_SEND_REJECTED, _describe(exc))
        if isinstance(exc, ValueError):
            # The SDK's "handler has been shut down": the sender (or the whole client) was
            # closed. Destinations made a fresh sender for next time; a closed client has
            # tripped the close/fault rule.
            ctx.backoff.failed(destination)
            return Retry()
        raise exc

    @property
    def _halted(self) -> bool:
        return self._halt is not None and self._halt.is_set()


class Settlement:
    """How one received batch's backlog messages end: completed once the send that carried them
    was acknowledged, dead-lettered when the primary refuses them for good, or left locked while
    their destination backs off (the broker redelivers them when the lock expires). Each ending
    gives its messages' in-flight slots back at once. Completes and dead-letters run as tasks of
    the batch, overlapping the sends that follow; the batch awaits them, or they are cancelled
    with it. A settlement that fails leaves its message to be redelivered, and a redelivered moved
    message is dropped by duplicate detection."""

    def __init__(
        self,
        ctx: SyphonContext,
        queue: str,
        receiver: Any,
        keeper: LockKeeper,
        hold: Hold,
        tasks: asyncio.TaskGroup,
    ) -> None:
        self._ctx = ctx
        self._queue = queue
        self._receiver = receiver
        self._keeper = keeper
        self._hold = hold
        self._tasks = tasks
        self._timeout = ctx.options.operation_timeout.total_seconds()

    async def keep(self, messages: list[Any]) -> None:
        """The messages are being worked on: renew their locks until they are settled or left."""
        await self._keeper.keep(messages)

    def complete(self, messages: list[Any]) -> None:
        """Complete the backlog messages of one acknowledged send, all at once."""
        self._start(messages, self._complete(messages))

    def drop_pings(self, pings: list[Any]) -> None:
        """Complete pings in the backlog; they are never forwarded."""
        self._start(pings, self._drop_pings(pings))

    def dead_letter(self, message: Any, reason: str, description: str) -> None:
        self._start([message], self._dead_letter(message, reason, description))

    async def leave_locked(self, destination: str, messages: list[Any]) -> None:
        for message in messages:
            self._keeper.release(message)
        self._ctx.stats.left_locked += len(messages)
        log.info(
            "destination backing off; messages left locked for redelivery",
            extra={"destination": destination, "backlog_queue": self._queue, "messages": len(messages)},
        )
        await self._hold.give_back(len(messages))

    def _start(self, messages: list[Any], settling: Any) -> None:
        for message in messages:
            self._keeper.release(message)
        self._tasks.create_task(settling)

    async def _complete(self, messages: list[Any]) -> None:
        moved = 0
        for message, error in zip(messages, await self._each(self._receiver.complete_message, messages), strict=True):
            if error is None:
                moved += 1
            else:
                self._failed(error, message, "complete")
        self._ctx.stats.moved += moved
        await self._hold.give_back(len(messages))

    async def _drop_pings(self, pings: list[Any]) -> None:
        for message, error in zip(pings, await self._each(self._receiver.complete_message, pings), strict=True):
            if error is None:
                self._ctx.stats.dropped_pings += 1
            else:
                self._failed(error, message, "complete ping")
        await self._hold.give_back(len(pings))

    async def _dead_letter(self, message: Any, reason: str, description: str) -> None:
        def settle(message: Any) -> Any:
            return self._receiver.dead_letter_message(
                message, reason=reason, error_description=description[:_DESCRIPTION_MAX]
            )

        (error,) = await self._each(settle, [message])
        if error is None:
            self._ctx.stats.count_dead_letter(reason)
            log.warning(
                "backlog message dead-lettered",
                extra={
                    "backlog_queue": self._queue,
                    "message_id": message.message_id,
                    "reason": reason,
                    "description": description,
                },
            )
        else:
            self._failed(error, message, "dead-letter")
        await self._hold.give_back(1)

    async def _each(self, settle: Any, messages: list[Any]) -> list[BaseException | None]:
        """One settlement per message, all at once, together bounded by the operation timeout;
        those that failed in a way a retry can help (a busy or timed-out broker: the lock is still
        held, and letting it lapse costs a redelivery a lock duration later) tried again at once.
        The error of each (None: settled; TimeoutError: unsettled at the bound). Every settlement
        has ended, or was cancelled, when this returns (gather awaits or cancels them all)."""
        results: list[BaseException | None] = [TimeoutError(f"settlement took over {self._timeout:g} s")] * len(
            messages
        )
        pending = list(range(len(messages)))
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self._timeout):
                for attempt in range(1, _SETTLE_TRIES + 1):
                    outcomes = await asyncio.gather(*(settle(messages[i]) for i in pending), return_exceptions=True)
                    again: list[int] = []
                    for index, outcome in zip(pending, outcomes, strict=True):
                        if outcome is not None and not isinstance(outcome, (ServiceBusError, ValueError)):
                            raise outcome
                        if attempt < _SETTLE_TRIES and isinstance(outcome, ServiceBusError) and is_retryable(outcome):
                            self._ctx.stats.count_error(outcome)
                            self._ctx.pair.note_error(SECONDARY, outcome)
                            again.append(index)
                        else:
                            results[index] = outcome
                    pending = again
                    if not pending:
                        break
        return results

    def _failed(self, exc: BaseException, message: Any, what: str) -> None:
        self._ctx.stats.count_error(exc)
        self._ctx.pair.note_error(SECONDARY, exc)
        log.warning(
            f"backlog {what} failed; the message will be redelivered",
            extra={"backlog_queue": self._queue, "message_id": message.message_id, "error": repr(exc)},
        )


def _body_bytes(messages: list[Any]) -> int:
    """The body bytes of received messages (what the byte bound counts): data sections only."""
    total = 0
    for message in messages:
        if message.body_type == AmqpMessageBodyType.DATA:
            total += sum(map(len, message.body))
    return total


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:_DESCRIPTION_MAX]
