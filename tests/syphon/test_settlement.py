"""How a batch's backlog messages end (`settlement.Settlement`): completes, pings and
dead-letters, each tried again at once while a retry can help, and their slots given back."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

from azure.servicebus.exceptions import (
    MessageLockLostError,
    OperationTimeoutError,
    ServiceBusConnectionError,
    ServiceBusServerBusyError,
)

from pairedbus.syphon.settlement import Settlement, _spans
from pairedbus.syphon.stats import SyphonStats


class AnswerLost(Exception):
    """Queued for a message: the settlement is applied, then its answer lost (`error` raised)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


class Receiver:
    """Settles each message after the errors queued for it (by message id) are spent; a settled
    message is gone from the queue (`peek_messages`), and one settled twice is refused lock-lost."""

    def __init__(self, **errors: list[BaseException]) -> None:
        self.errors = errors
        self.calls: list[str] = []
        self.settled: list[str] = []
        self.peeks: list[int] = []
        self.peek_error: BaseException | None = None
        #: The most messages a peek returns, whatever was asked (the service may return fewer).
        self.peek_limit: int | None = None
        #: Runs while a peek is on the wire.
        self.during_peek: Any = None

    async def complete_message(self, message: Any) -> None:
        self.calls.append(message.message_id)
        if message.message_id in self.settled:
            raise MessageLockLostError(message="settled before: the lock token is gone")
        queued = self.errors.get(message.message_id) or []
        error = queued.pop(0) if queued else None
        if isinstance(error, AnswerLost):
            self.settled.append(message.message_id)
            raise error.error
        if error is not None:
            raise error
        self.settled.append(message.message_id)

    async def peek_messages(self, max_message_count: int, *, sequence_number: int, **_options: Any) -> list[Any]:
        self.peeks.append(sequence_number)
        if self.during_peek is not None:
            await self.during_peek()
        if self.peek_error is not None:
            raise self.peek_error
        here = [
            m for m in MESSAGES.values() if m.sequence_number >= sequence_number and m.message_id not in self.settled
        ]
        return sorted(here, key=lambda m: m.sequence_number)[
            : min(max_message_count, self.peek_limit or max_message_count)
        ]

    async def dead_letter_message(self, message: Any, *, reason: str, error_description: str) -> None:
        await self.complete_message(message)


class Keeper:
    def __init__(self, *lost: str) -> None:
        self.released: list[str] = []
        self._lost = set(lost)

    def lost(self, message: Any) -> bool:
        return bool(message.message_id in self._lost)

    async def keep(self, messages: list[Any]) -> None:
        pass

    def release(self, message: Any) -> None:
        self.released.append(message.message_id)


class HoldStub:
    def __init__(self) -> None:
        self.given_back = 0

    async def give_back(self, count: int) -> None:
        self.given_back += count


class Pair:
    def __init__(self) -> None:
        self.noted: list[tuple[str, str]] = []

    def note_error(self, side: str, exc: BaseException) -> bool:
        self.noted.append((side, type(exc).__name__))
        return False


#: Every message the tests made, by id: what a peek of the queue may find.
MESSAGES: dict[str, Any] = {}


def message(message_id: str) -> Any:
    made = MESSAGES.setdefault(message_id, SimpleNamespace(message_id=message_id, sequence_number=len(MESSAGES) + 1))
    return SimpleNamespace(message_id=message_id, sequence_number=made.sequence_number)


def context(stats: SyphonStats, pair: Pair) -> Any:
    return SimpleNamespace(
        stats=stats, pair=pair, options=SimpleNamespace(operation_timeout=timedelta(seconds=5)), confirming={}
    )


async def settle(receiver: Receiver, run: Any, *lost: str) -> tuple[SyphonStats, HoldStub, Keeper, Pair]:
    stats, hold, keeper, pair = SyphonStats(), HoldStub(), Keeper(*lost), Pair()
    async with asyncio.TaskGroup() as tasks:
        run(Settlement(context(stats, pair), "q", receiver, keeper, hold, tasks))
    return stats, hold, keeper, pair


def busy() -> BaseException:
    return ServiceBusServerBusyError(message="busy")


async def test_every_ping_completed_is_counted_and_its_slot_given_back() -> None:
    receiver = Receiver()
    stats, hold, keeper, _ = await settle(receiver, lambda s: s.drop_pings([message(f"p{i}") for i in range(3)]))
    assert stats.dropped_pings == 3
    assert hold.given_back == 3 and keeper.released == ["p0", "p1", "p2"]


async def test_a_ping_that_cannot_be_completed_is_counted_as_an_error_and_left() -> None:
    receiver = Receiver(p1=[MessageLockLostError(message="lost")])
    stats, hold, _, pair = await settle(receiver, lambda s: s.drop_pings([message("p0"), message("p1")]))
    assert stats.dropped_pings == 1
    assert stats.errors == {"MessageLockLostError": 1}
    assert pair.noted == [("secondary", "MessageLockLostError")]
    assert hold.given_back == 2


async def test_a_busy_broker_s_complete_is_tried_three_times_in_all() -> None:
    receiver = Receiver(m0=[busy(), busy()])
    stats, hold, _, pair = await settle(receiver, lambda s: s.complete([message("m0")]))
    assert receiver.calls == ["m0", "m0", "m0"] and receiver.settled == ["m0"]
    assert stats.moved == 1
    assert stats.errors == {"ServiceBusServerBusyError": 2}  # each retried failure counted
    assert pair.noted == [("secondary", "ServiceBusServerBusyError")] * 2
    assert hold.given_back == 1


async def test_a_complete_busy_three_times_is_left_for_redelivery() -> None:
    receiver = Receiver(m0=[busy(), busy(), busy()])
    stats, hold, _, _ = await settle(receiver, lambda s: s.complete([message("m0"), message("m1")]))
    assert receiver.calls.count("m0") == 3 and receiver.settled == ["m1"]
    assert stats.moved == 1
    assert stats.errors == {"ServiceBusServerBusyError": 3}  # two retried, the last one the failure
    assert hold.given_back == 2


async def test_a_complete_cut_by_an_asyncio_timeout_inside_the_sdk_is_retried_not_raised() -> None:
    # As the SDK's own operation timeout is (`pairing.failures`: both mean TIMED_OUT); it used to
    # raise out of the batch and stop the syphon.
    receiver = Receiver(m0=[TimeoutError("cut")])
    stats, hold, _, _ = await settle(receiver, lambda s: s.complete([message("m0")]))
    assert receiver.calls == ["m0", "m0"] and receiver.settled == ["m0"]
    assert stats.moved == 1 and stats.errors == {"TimeoutError": 1}
    assert hold.given_back == 1


async def test_an_error_no_retry_helps_is_not_retried() -> None:
    receiver = Receiver(m0=[MessageLockLostError(message="lost")])
    stats, _, _, _ = await settle(receiver, lambda s: s.complete([message("m0")]))
    assert receiver.calls == ["m0"] and stats.moved == 0
    assert stats.errors == {"MessageLockLostError": 1}


async def test_a_dead_letter_is_counted_by_reason() -> None:
    receiver = Receiver(d0=[busy()])
    stats, hold, _, _ = await settle(
        receiver, lambda s: [s.dead_letter(message(f"d{i}"), "SendRejected", "refused") for i in range(2)]
    )
    assert stats.dead_lettered == 2 and stats.dead_letter_reasons == {"SendRejected": 2}
    assert receiver.calls == ["d0", "d1", "d0"]
    assert hold.given_back == 2


async def test_a_message_whose_lock_a_renewal_found_lost_is_not_settled() -> None:
    """The broker answered its renewal lock-lost and made it available again: a complete or a
    dead-letter would only be refused (and count the loss twice). Its slot is given back; the
    redelivered copy is the one moved."""
    receiver = Receiver()
    stats, hold, _, pair = await settle(
        receiver,
        lambda s: (s.complete([message("m0"), message("m1")]), s.dead_letter(message("d0"), "r", "d")),
        "m1",
        "d0",
    )
    assert receiver.calls == ["m0"]
    assert stats.moved == 1 and stats.dead_lettered == 0
    assert stats.errors == {} and pair.noted == []
    assert hold.given_back == 3


def cut() -> BaseException:
    return ServiceBusConnectionError(message="connection dropped")


async def test_a_complete_applied_whose_answer_was_lost_is_counted_once_as_moved() -> None:
    """The broker completed it, the answer was lost to a dropped connection, the retry was refused
    lock-lost: the message is gone from the backlog (a peek says so), so it was moved. Before it was
    counted as nothing, and never came back to be counted later."""
    receiver = Receiver(m0=[AnswerLost(cut())])
    stats, hold, _, _ = await settle(receiver, lambda s: s.complete([message("m0"), message("m1")]))
    assert receiver.calls == ["m0", "m1", "m0"] and receiver.settled == ["m0", "m1"]
    assert stats.moved == 2
    assert receiver.peeks == [message("m0").sequence_number]
    assert stats.errors == {"ServiceBusConnectionError": 1}  # the retried failure; the lock-lost retry is not one
    assert hold.given_back == 2


async def test_the_answer_lost_completes_of_one_batch_are_confirmed_with_one_peek() -> None:
    """Three completes applied whose answers were lost, one left unapplied: one peek from the lowest sequence
    number over the span tells them apart (3 moved, the fourth not). Before, a peek each (4), gathered: over the
    wire they raced each other's reopening of a handler the SDK had shut down ("Handler failed")."""
    batch = [message(f"span{i}") for i in range(4)]
    receiver = Receiver(
        span0=[AnswerLost(cut())], span1=[AnswerLost(cut())], span2=[AnswerLost(cut())], span3=[cut(), cut(), cut()]
    )
    stats, _, _, _ = await settle(receiver, lambda s: s.complete(batch))
    assert receiver.peeks == [batch[0].sequence_number]
    assert stats.moved == 3 and receiver.settled == ["span0", "span1", "span2"]


async def test_a_peek_that_returns_fewer_than_asked_is_read_on_from_where_it_ended() -> None:
    """The service may return fewer messages than a peek asks for: what lies past the last one returned is not
    known gone. Two of four answer-lost completes applied, two not; peeks of one message each find both left
    (before: the first peek's one message, and the fourth of the batch counted moved)."""
    batch = [message(f"short{i}") for i in range(4)]
    unapplied = [cut(), cut(), cut()]
    receiver = Receiver(
        short0=[AnswerLost(cut())], short1=list(unapplied), short2=[AnswerLost(cut())], short3=list(unapplied)
    )
    receiver.peek_limit = 1
    stats, _, _, _ = await settle(receiver, lambda s: s.complete(batch))
    assert receiver.peeks == [batch[0].sequence_number, batch[1].sequence_number + 1]
    assert stats.moved == 2 and receiver.settled == ["short0", "short2"]


async def test_sequence_numbers_far_apart_are_peeked_in_spans_of_their_own() -> None:
    assert _spans([1, 2, 256, 257, 1000]) == [(1, 256), (257, 257), (1000, 1000)]
    assert _spans([]) == []


async def test_a_complete_whose_answer_was_lost_and_was_not_applied_is_left_for_redelivery() -> None:
    receiver = Receiver(m0=[cut(), OperationTimeoutError(message="no answer"), cut()])
    stats, _, _, _ = await settle(receiver, lambda s: s.complete([message("m0")]))
    assert receiver.settled == [] and receiver.peeks == [message("m0").sequence_number]
    assert stats.moved == 0
    assert stats.errors == {"ServiceBusConnectionError": 2, "OperationTimeoutError": 1}


async def test_a_dead_letter_and_a_ping_whose_answers_were_lost_count_as_what_they_were() -> None:
    receiver = Receiver(d0=[AnswerLost(cut())], p0=[AnswerLost(cut())])
    stats, _, _, _ = await settle(
        receiver, lambda s: (s.dead_letter(message("d0"), "SendRejected", "refused"), s.drop_pings([message("p0")]))
    )
    assert stats.dead_letter_reasons == {"SendRejected": 1} and stats.dropped_pings == 1
    assert stats.moved == 0


async def test_a_lock_lost_answer_costs_no_peek() -> None:
    """The broker refused it: nothing to confirm."""
    receiver = Receiver(m0=[MessageLockLostError(message="lost")])
    stats, _, _, _ = await settle(receiver, lambda s: s.complete([message("m0")]))
    assert receiver.peeks == [] and stats.moved == 0


async def test_a_peek_that_fails_leaves_the_message_uncounted() -> None:
    receiver = Receiver(m0=[AnswerLost(cut())])
    receiver.peek_error = cut()
    stats, _, _, _ = await settle(receiver, lambda s: s.complete([message("m0")]))
    assert stats.moved == 0
    # the complete's cut, its retry's lock-lost (the first try applied it), the peek's cut
    assert stats.errors == {"ServiceBusConnectionError": 2, "MessageLockLostError": 1}


async def test_a_redelivered_copy_settled_while_its_first_copy_is_confirmed_is_counted_once() -> None:
    """Its first copy's answer was lost; while the peek is on the wire the redelivered copy (same
    sequence number) is completed and counted; the peek then finds the message gone, which is the
    copy's doing, not a second move."""
    stats, hold, pair = SyphonStats(), HoldStub(), Pair()
    ctx = context(stats, pair)
    first, copy = Receiver(m0=[cut(), cut(), cut()]), Receiver()

    async with asyncio.TaskGroup() as tasks:

        async def copy_moved() -> None:
            Settlement(ctx, "q", copy, Keeper(), hold, tasks).complete([message("m0")])
            await asyncio.sleep(0)  # the copy's complete runs
            first.settled.extend(copy.settled)  # one queue: the copy's complete removed it

        first.during_peek = copy_moved
        Settlement(ctx, "q", first, Keeper(), hold, tasks).complete([message("m0")])
    assert copy.settled == ["m0"] and first.peeks == [message("m0").sequence_number]
    assert stats.moved == 1
    assert ctx.confirming == {}


class CountingReceiver(Receiver):
    """Completes that take a turn of the loop each, counting how many are outstanding at once."""

    def __init__(self) -> None:
        super().__init__()
        self.outstanding = 0
        self.most = 0

    async def complete_message(self, message: Any) -> None:
        self.outstanding += 1
        self.most = max(self.most, self.outstanding)
        try:
            await asyncio.sleep(0)
            await super().complete_message(message)
        finally:
            self.outstanding -= 1


async def test_a_receivers_bound_holds_its_outstanding_completes_across_its_batches() -> None:
    """Over the wire each outstanding complete is a reader of the receiver's connection (the SDK waits for its
    outcome a frame at a time under the connection's lock): the bound caps them for every batch of the receiver
    at once. Without one, two sends' 40 completes were all outstanding together."""
    receiver, settling = CountingReceiver(), asyncio.Semaphore(4)
    stats, hold = SyphonStats(), HoldStub()
    async with asyncio.TaskGroup() as tasks:
        for batch in range(2):
            settlement = Settlement(context(stats, Pair()), "q", receiver, Keeper(), hold, tasks, settling)
            settlement.complete([message(f"bounded-{batch}-{i}") for i in range(20)])
    assert receiver.most == 4
    assert stats.moved == 40 and hold.given_back == 40


async def test_without_a_bound_an_acknowledged_sends_completes_all_go_out_at_once() -> None:
    receiver = CountingReceiver()
    stats, _, _, _ = await settle(receiver, lambda s: s.complete([message(f"unbounded-{i}") for i in range(20)]))
    assert receiver.most == 20 and stats.moved == 20
