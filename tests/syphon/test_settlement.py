"""How a batch's backlog messages end (`settlement.Settlement`): completes, pings and
dead-letters, each tried again at once while a retry can help, and their slots given back."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

from azure.servicebus.exceptions import MessageLockLostError, ServiceBusServerBusyError

from pairedbus.syphon.settlement import Settlement
from pairedbus.syphon.stats import SyphonStats


class Receiver:
    """Settles each message after the errors queued for it (by message id) are spent."""

    def __init__(self, **errors: list[BaseException]) -> None:
        self.errors = errors
        self.calls: list[str] = []
        self.settled: list[str] = []

    async def complete_message(self, message: Any) -> None:
        self.calls.append(message.message_id)
        queued = self.errors.get(message.message_id) or []
        if queued:
            raise queued.pop(0)
        self.settled.append(message.message_id)

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


def message(message_id: str) -> Any:
    return SimpleNamespace(message_id=message_id)


async def settle(receiver: Receiver, run: Any, *lost: str) -> tuple[SyphonStats, HoldStub, Keeper, Pair]:
    stats, hold, keeper, pair = SyphonStats(), HoldStub(), Keeper(*lost), Pair()
    ctx = SimpleNamespace(stats=stats, pair=pair, options=SimpleNamespace(operation_timeout=timedelta(seconds=5)))
    async with asyncio.TaskGroup() as tasks:
        run(Settlement(ctx, "q", receiver, keeper, hold, tasks))  # type: ignore[arg-type]
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
