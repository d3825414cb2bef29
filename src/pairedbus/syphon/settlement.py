"""How one received batch's backlog messages end (settlement.md, "Receiving"): completed once the
send that carried them was acknowledged, dead-lettered when the primary refuses them for good, or
left locked while their destination backs off."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Generic

from azure.servicebus.exceptions import MessageLockLostError

from pairedbus import sdk
from pairedbus.pairing.connections import SECONDARY
from pairedbus.pairing.failures import RETRYABLE, SERVICE_BUS, Failure, failure_of
from pairedbus.pairing.ports import M, Receiver
from pairedbus.syphon.in_flight import Hold
from pairedbus.syphon.lock_keeper import LockKeeper
from pairedbus.syphon.outcomes import DESCRIPTION_MAX

if TYPE_CHECKING:
    from pairedbus.syphon.context import SyphonContext

log = logging.getLogger("pairedbus.syphon")

#: Tries of one settlement while its failures are ones a retry can help.
_SETTLE_TRIES = 3
#: The result of a settlement not tried: a renewal found the message's lock lost.
_LOCK_LOST = MessageLockLostError(message="the lock was lost at a renewal; not settled")


class Settlement(Generic[M]):
    """How one received batch's backlog messages end: completed once the send that carried them
    was acknowledged, dead-lettered when the primary refuses them for good, or left locked while
    their destination backs off (the broker redelivers them when the lock expires). Each ending
    gives its messages' in-flight slots back at once. Completes and dead-letters run as tasks of
    the batch, overlapping the sends that follow; the batch awaits them, or they are cancelled
    with it. A settlement that fails leaves its message to be redelivered, and a redelivered moved
    message is dropped by duplicate detection."""

    def __init__(
        self,
        ctx: SyphonContext[M],
        queue: str,
        receiver: Receiver[M],
        keeper: LockKeeper[M],
        hold: Hold,
        tasks: asyncio.TaskGroup,
        settling: asyncio.Semaphore | None = None,
    ) -> None:
        """`settling`: the receiver's bound on its outstanding settlements (`SyphonOptions.settles_per_receiver`),
        shared by its batches; None: none."""
        self._ctx = ctx
        self._settling = settling
        self._queue = queue
        self._receiver = receiver
        self._keeper = keeper
        self._hold = hold
        self._tasks = tasks
        self._timeout = ctx.options.operation_timeout.total_seconds()

    def complete(self, messages: list[M]) -> None:
        """Complete the backlog messages of one acknowledged send, all at once."""
        self._start(messages, self._complete(messages))

    def drop_pings(self, pings: list[M]) -> None:
        """Complete pings in the backlog; they are never forwarded."""
        self._start(pings, self._drop_pings(pings))

    def dead_letter(self, message: M, reason: str, description: str) -> None:
        self._start([message], self._dead_letter(message, reason, description))

    async def leave_locked(self, destination: str, messages: list[M]) -> None:
        for message in messages:
            self._keeper.leave(message)  # given back if the close/fault rule is stopping the syphon
        self._ctx.stats.left_locked += len(messages)
        log.info(
            "destination backing off; messages left locked for redelivery",
            extra={"destination": destination, "backlog_queue": self._queue, "messages": len(messages)},
        )
        await self._hold.give_back(len(messages))

    def _start(self, messages: list[M], settling: Coroutine[object, None, None]) -> None:
        for message in messages:
            self._keeper.release(message)
        self._tasks.create_task(settling)

    async def _complete(self, messages: list[M]) -> None:
        settled = await self._settled(self._receiver.complete_message, messages, "complete", together=sdk.COMPLETE)
        self._ctx.stats.moved += sum(settled)
        await self._hold.give_back(len(messages))

    async def _drop_pings(self, pings: list[M]) -> None:
        settled = await self._settled(self._receiver.complete_message, pings, "complete ping", together=sdk.COMPLETE)
        self._ctx.stats.dropped_pings += sum(settled)
        await self._hold.give_back(len(pings))

    async def _dead_letter(self, message: M, reason: str, description: str) -> None:
        def settle(message: M) -> Awaitable[None]:
            return self._receiver.dead_letter_message(
                message, reason=reason, error_description=description[:DESCRIPTION_MAX]
            )

        # By the same route as completes: on a receive link the broker detached, the SDK's `dead_letter_message`
        # raised inside the SDK and shut the receiver's handler down (12 records in one harsh wire run).
        disposition = sdk.dead_letter(reason, description[:DESCRIPTION_MAX])
        if (await self._settled(settle, [message], "dead-letter", together=disposition))[0]:
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
        await self._hold.give_back(1)

    async def _settled(
        self,
        settle: Callable[[M], Awaitable[None]],
        messages: list[M],
        what: str,
        *,
        together: sdk.Disposition | None = None,
    ) -> list[bool]:
        """Settle each message (`_each`; `together`: as that disposition, with one wait for them all where the
        receiver is the SDK's, else by `settle`); whether each is settled. A settlement that failed after an
        attempt whose answer was lost (a timeout, a dropped connection: the broker may have applied
        it) is settled if the message is gone from the backlog queue (`_gone`): counted once, as
        what it was. Before, such a message was counted as nothing: it was never redelivered, so
        never moved again either. Every other failure is counted as an error and logged."""
        errors, unanswered = await self._each(settle, messages, together=together)
        confirming = self._ctx.confirming
        for message, error in zip(messages, errors, strict=True):
            if error is None and confirming:
                key = (self._queue, message.sequence_number)
                if key in confirming:  # a redelivered copy settled while its first copy is confirmed
                    confirming[key] = True
        if unanswered:
            unsure = [messages[i] for i in unanswered]
            keys = [(self._queue, m.sequence_number) for m in unsure]
            confirming.update(dict.fromkeys(keys, False))
            try:
                gone = await self._gone(unsure)
            finally:
                counted_meanwhile = [confirming.pop(key, False) for key in keys]
            for index, went, counted in zip(unanswered, gone, counted_meanwhile, strict=True):
                if went and not counted:
                    errors[index] = None
                    log.info(
                        f"backlog {what} applied although its answer was lost",
                        extra={"backlog_queue": self._queue, "message_id": messages[index].message_id},
                    )
        for message, error in zip(messages, errors, strict=True):
            if error is not None:
                self._failed(error, message, what)
        return [error is None for error in errors]

    async def _gone(self, messages: list[M]) -> list[bool]:
        """Whether each message is gone from the backlog queue (a peek from its sequence number finds
        another, or nothing), bounded by the operation timeout; False where the peek failed (not
        known: it may still be redelivered, and is moved then). Messages whose sequence numbers lie
        within `_PEEK_SPAN` of each other (a batch's, as a rule) share one peek of the whole span: over
        the wire the full harsh drill's one-peek-per-message gathers made 24 of its 48 "Handler failed"
        records (seed 1), the peeks racing each other's reopening of a handler the SDK had shut down."""
        numbers = [m.sequence_number for m in messages]
        known = [n for n in numbers if n is not None]  # the SDK types it Optional; a received one has one
        spans = _spans(sorted(set(known)))

        async def present(first: int, last: int) -> set[int]:
            # The service may return fewer messages than asked: past the last one returned nothing is known
            # gone, so the span is read on from there (one peek as a rule); an empty answer ends it, as it
            # ended a single message's peek.
            found: set[int] = set()
            while first <= last:
                peeked = await self._receiver.peek_messages(
                    max_message_count=last - first + 1, sequence_number=first, timeout=self._timeout
                )
                numbers = [p.sequence_number for p in peeked if p.sequence_number is not None]
                if not numbers:
                    break
                found.update(n for n in numbers if n <= last)
                first = max(first, *numbers) + 1  # forward even should an answer start before it
            return found

        try:
            async with asyncio.timeout(self._timeout):
                answers = await asyncio.gather(*(present(*span) for span in spans), return_exceptions=True)
        except TimeoutError as exc:
            answers = [exc] * len(spans)
        found: dict[int, set[int] | BaseException] = {}
        for (first, last), answer in zip(spans, answers, strict=True):
            if isinstance(answer, BaseException) and failure_of(answer) not in SERVICE_BUS:
                raise answer
            found.update(dict.fromkeys(range(first, last + 1), answer))  # spans are at most _PEEK_SPAN long
        result: list[bool] = []
        for message, number in zip(messages, numbers, strict=True):
            peek = found.get(number) if number is not None else None
            if isinstance(peek, BaseException):
                self._ctx.stats.count_error(peek)
                log.warning(
                    "cannot tell whether a backlog settlement whose answer was lost was applied",
                    extra={"backlog_queue": self._queue, "message_id": message.message_id, "error": repr(peek)},
                )
            result.append(isinstance(peek, set) and number not in peek)
        return result

    async def _attempt(
        self, settle: Callable[[M], Awaitable[None]], messages: list[M], together: sdk.Disposition | None
    ) -> Sequence[BaseException | None]:
        """One attempt at settling each of `messages`, all at once; `together`: as that disposition with one wait
        for their outcomes, where the receiver is the SDK's (`_together`)."""
        if together is not None:
            outcomes = await self._together(messages, together)
            if outcomes is not None:
                return outcomes
        return await asyncio.gather(*(self._bounded(settle, message) for message in messages), return_exceptions=True)

    def _sort(
        self,
        pending: list[int],
        outcomes: Sequence[BaseException | None],
        attempt: int,
        results: list[BaseException | None],
        unanswered: set[int],
    ) -> list[int]:
        """Record the outcome of each of `pending` (indexes into `results`) after `attempt`: settled, failed,
        or (the answer lost: `unanswered`) unknown; the indexes worth another attempt. An error that is
        not Service Bus's is raised."""
        again: list[int] = []
        for index, outcome in zip(pending, outcomes, strict=True):
            if outcome is None:
                results[index] = None
                continue
            failure = failure_of(outcome)
            if failure not in SERVICE_BUS:
                raise outcome
            if failure in _MAY_HAVE_APPLIED:
                unanswered.add(index)
            if attempt < _SETTLE_TRIES and failure in RETRYABLE:
                self._ctx.stats.count_error(outcome)
                self._ctx.pair.note_error(SECONDARY, outcome)
                again.append(index)
            else:
                results[index] = outcome
        return again

    async def _each(
        self, settle: Callable[[M], Awaitable[None]], messages: list[M], *, together: sdk.Disposition | None = None
    ) -> tuple[list[BaseException | None], list[int]]:
        """One settlement per message, all at once, together bounded by the operation timeout;
        those that failed in a way a retry can help (a busy or timed-out broker: the lock is still
        held, and letting it lapse costs a redelivery a lock duration later) tried again at once.
        The error of each (None: settled; TimeoutError: unsettled at the bound), and the indexes of
        those that failed after an attempt whose answer was lost (`_MAY_HAVE_APPLIED`). Every
        settlement has ended, or was cancelled, when this returns (gather awaits or cancels them all).
        With `together`, every attempt settles them all as that disposition with one wait for their
        outcomes (`sdk.settle_together`) where the receiver is the SDK's: it settles by lock token what
        the receive link can no longer carry. Retries went one by one through the SDK's `complete_message`
        before, which on a link the broker had detached raised inside the SDK, and the SDK shut the
        receiver's handler down, failing every settlement in flight on it (docs/drill.md)."""
        results: list[BaseException | None] = [TimeoutError(f"settlement took over {self._timeout:g} s")] * len(
            messages
        )
        # A message whose lock a renewal found lost is not settled: the broker would refuse it.
        pending = [i for i, message in enumerate(messages) if not self._keeper.lost(message)]
        tried = set(pending)  # an attempt still on the wire at the bound may have been applied too
        for i in set(range(len(messages))) - tried:
            results[i] = _LOCK_LOST
        unanswered: set[int] = set()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self._timeout):
                for attempt in range(1, _SETTLE_TRIES + 1):
                    outcomes = await self._attempt(settle, [messages[i] for i in pending], together)
                    pending = self._sort(pending, outcomes, attempt, results, unanswered)
                    if not pending:
                        break
        unanswered.update(i for i in pending if i in tried)  # still on the wire when the bound came
        return results, sorted(i for i in unanswered if results[i] is not None)

    async def _together(self, messages: list[M], disposition: sdk.Disposition) -> list[Exception | None] | None:
        """Settle `messages` as `disposition` with one wait for their outcomes, within one of the receiver's
        outstanding settlements (None: the receiver is not the SDK's; `_each` settles them one by one)."""
        if self._settling is None:
            return await sdk.settle_together(self._receiver, messages, self._timeout, disposition)
        async with self._settling:
            return await sdk.settle_together(self._receiver, messages, self._timeout, disposition)

    async def _bounded(self, settle: Callable[[M], Awaitable[None]], message: M) -> None:
        """One settlement, within the receiver's bound on outstanding ones (when it has one)."""
        if self._settling is None:
            return await settle(message)
        async with self._settling:
            return await settle(message)

    def _failed(self, exc: BaseException, message: M, what: str) -> None:
        if exc is _LOCK_LOST:
            log.info(
                f"backlog {what} skipped: its lock was lost; the message will be redelivered",
                extra={"backlog_queue": self._queue, "message_id": message.message_id},
            )
            return  # counted when the renewal failed
        self._ctx.stats.count_error(exc)
        self._ctx.pair.note_error(SECONDARY, exc)
        log.warning(
            f"backlog {what} failed; the message will be redelivered",
            extra={"backlog_queue": self._queue, "message_id": message.message_id, "error": repr(exc)},
        )


#: The most sequence numbers one peek of `Settlement._gone` spans (a batch's messages lie close together).
_PEEK_SPAN = 256


def _spans(numbers: list[int]) -> list[tuple[int, int]]:
    """Sorted, distinct `numbers` grouped into (first, last) spans of at most `_PEEK_SPAN` numbers."""
    spans: list[tuple[int, int]] = []
    for number in numbers:
        if spans and number - spans[-1][0] < _PEEK_SPAN:
            spans[-1] = (spans[-1][0], number)
        else:
            spans.append((number, number))
    return spans


#: A failed settlement that may have been applied all the same: its answer was lost (a timeout, a
#: dropped connection, the SDK's own failure, ...), as opposed to the broker's refusal (the lock
#: lost, busy) or a call the SDK refused before the request left (its handler shut down, the
#: message settled already).
_MAY_HAVE_APPLIED = SERVICE_BUS - {
    Failure.LOCK_LOST,
    Failure.BUSY,
    Failure.SHUT_DOWN,
    Failure.INVALID,
    Failure.ALREADY_SETTLED,
    Failure.TOO_LARGE,
}
