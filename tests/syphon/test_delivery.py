"""A delivery's rounds (`delivery.Round`, `Deliveries.deliver`): what one send's outcome does to
the round, what a round returns, and when a delivery waits or leaves its messages locked."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from azure.servicebus import ServiceBusMessage, ServiceBusReceivedMessage
from azure.servicebus._common.constants import _X_OPT_ENQUEUED_TIME
from azure.servicebus._pyamqp._encode import encode_payload
from azure.servicebus._transport._pyamqp_transport import PyamqpTransport
from azure.servicebus.exceptions import (
    MessageSizeExceededError,
    MessagingEntityNotFoundError,
    ServiceBusServerBusyError,
)

from pairedbus.pairing.aliasing import park_message
from pairedbus.pairing.backoff import TOP_OF_WINDOW, BackoffPolicy
from pairedbus.syphon.delivery import Deliveries, Round
from pairedbus.syphon.health import DestinationHealth, Health
from pairedbus.syphon.outcomes import DeadLetter, KeysBackingOff, Retry, RoundEnd
from pairedbus.syphon.sending import PrimarySends
from pairedbus.syphon.stats import SyphonStats
from tests.load import guard


class Primary:
    """Packs as told (units of item positions and a key); answers each send by its batch name."""

    def __init__(self, packing: list[tuple[list[int], Any]], answers: dict[str, BaseException]) -> None:
        self.packing = packing
        self.answers = answers
        self.sent: list[str] = []

    async def batches(self, destination: str, messages: list[Any], **_: Any) -> list[tuple[Any, list[int], Any]]:
        if not self.packing:  # a later round: each message alone
            return [(m, [i], None) for i, m in enumerate(messages)]
        packing, self.packing = self.packing, []
        return [("+".join(messages[i] for i in members), members, key) for members, key in packing]

    async def send(self, destination: str, batch: str) -> None:
        self.sent.append(batch)
        if batch in self.answers:
            raise self.answers[batch]

    def learn_keyed_by_message_id(self, destination: str) -> None:
        pass


class Settled:
    """The settlement's part: what was completed, dead-lettered and left locked."""

    def __init__(self) -> None:
        self.completed: list[str] = []
        self.dead_lettered: list[tuple[str, str]] = []
        self.left: list[str] = []

    async def keep(self, messages: list[Any]) -> None:
        pass

    def complete(self, messages: list[str]) -> None:
        self.completed.extend(messages)

    def dead_letter(self, message: str, reason: str, description: str) -> None:
        self.dead_lettered.append((message, reason))

    async def leave_locked(self, destination: str, messages: list[str]) -> None:
        self.left.extend(messages)


def world(
    packing: list[tuple[list[int], Any]],
    answers: dict[str, BaseException],
    *,
    retry_hold: float = 60.0,
    backoff_seconds: tuple[float, float] = (10.0, 60.0),
    healths: Health | None = None,
) -> tuple[Deliveries, Primary, DestinationHealth, SyphonStats]:
    """One pump's deliveries to "orders", and its health (`healths`: another pump's, to share)."""
    primary, stats = Primary(packing, answers), SyphonStats()
    health = healths or Health(BackoffPolicy(*backoff_seconds, rng=TOP_OF_WINDOW))  # these tests pin the waits

    class Pair:
        def note_error(self, side: str, exc: BaseException) -> bool:
            return False

    sends = PrimarySends(primary, health, stats, Pair(), queue="q")  # type: ignore[arg-type]
    deliveries = Deliveries(sends, health, stats, retry_hold=retry_hold, halted=lambda: False)
    return deliveries, primary, health.of("orders"), stats


def items(*names: str) -> list[tuple[str, str]]:
    return [(f"backlog-{n}", n) for n in names]


BUSY = ServiceBusServerBusyError(message="busy")
TOO_BIG = MessageSizeExceededError(message="too big")


async def test_side_by_side_sends_settle_what_went_and_a_retry_holds_back_what_was_split() -> None:
    deliveries, primary, health, _ = world([([0], None), ([1, 2], None), ([3], None)], {"b+c": TOO_BIG, "d": BUSY})
    settled = Settled()
    end = await Round(deliveries.sends, health, settled, items("a", "b", "c", "d")).run([0, 1, 2, 3])  # type: ignore[arg-type]
    assert end == RoundEnd(frozenset({0}), Retry())
    assert primary.sent == ["a", "b+c", "d"]  # the split batch's messages wait for the next round
    assert settled.completed == ["backlog-a"]


async def test_what_side_by_side_sends_acknowledged_is_completed_in_one_settlement() -> None:
    deliveries, _, health, _ = world([([0], None), ([1, 2], None), ([3], None)], {"d": BUSY})
    calls: list[list[str]] = []

    class Counted(Settled):
        def complete(self, messages: list[str]) -> None:
            calls.append(list(messages))
            super().complete(messages)

    end = await Round(deliveries.sends, health, Counted(), items("a", "b", "c", "d")).run([0, 1, 2, 3])  # type: ignore[arg-type]
    assert end == RoundEnd(frozenset({0, 1, 2}), Retry())
    assert len(calls) == 1 and sorted(calls[0]) == ["backlog-a", "backlog-b", "backlog-c"]  # not one per send


async def test_a_split_batch_s_messages_follow_the_side_by_side_sends_one_at_a_time_in_order() -> None:
    deliveries, primary, health, _ = world([([0, 1], None), ([2, 3], None)], {"a+b": TOO_BIG, "c+d": TOO_BIG})
    settled = Settled()
    end = await Round(deliveries.sends, health, settled, items("a", "b", "c", "d")).run([0, 1, 2, 3])  # type: ignore[arg-type]
    assert end == RoundEnd(frozenset({0, 1, 2, 3}), None)
    assert primary.sent == ["a+b", "c+d", "a", "b", "c", "d"]
    assert settled.completed == ["backlog-a", "backlog-b", "backlog-c", "backlog-d"]  # one at a time, in order


async def test_a_missing_destination_stops_the_round_and_what_was_acknowledged_is_completed() -> None:
    gone = MessagingEntityNotFoundError(message="gone")
    deliveries, _, health, _ = world([([0], None), ([1], None)], {"b": gone})
    settled = Settled()
    end = await Round(deliveries.sends, health, settled, items("a", "b")).run([0, 1])  # type: ignore[arg-type]
    assert end.finished == frozenset({0}) and isinstance(end.stop, DeadLetter) and end.stop.everything
    assert settled.completed == ["backlog-a"]


async def test_a_missing_destination_is_dead_lettered_whole_by_the_delivery() -> None:
    gone = MessagingEntityNotFoundError(message="gone")
    deliveries, _, _, _ = world([([0], None), ([1], None), ([2], None)], {"b": gone})
    settled = Settled()
    await deliveries.deliver(settled, "orders", None, items("a", "b", "c"))  # type: ignore[arg-type]
    assert sorted(settled.completed) == ["backlog-a", "backlog-c"]  # side by side: completes overlap
    assert settled.dead_lettered == [("backlog-b", "DestinationNotFound")]


async def test_a_failed_key_backs_off_alone_and_the_round_reports_the_keys_wait_when_nothing_went() -> None:
    deliveries, primary, health, _ = world([([0], "k1"), ([1], "k2")], {"a": BUSY, "b": BUSY})
    settled = Settled()
    end = await Round(deliveries.sends, health, settled, items("a", "b")).run([0, 1])  # type: ignore[arg-type]
    assert primary.sent == ["a", "b"]  # the second key is tried although the first failed
    assert end.finished == frozenset() and isinstance(end.stop, KeysBackingOff) and 9 < end.stop.wait <= 10
    assert health.failures("k1") == health.failures("k2") == 1
    assert health.failures() == 0


async def test_a_key_backing_off_is_skipped_while_the_others_go() -> None:
    deliveries, primary, health, _ = world([([0], "k1"), ([1], "k2")], {})
    health.failed("k1")
    settled = Settled()
    end = await Round(deliveries.sends, health, settled, items("a", "b")).run([0, 1])  # type: ignore[arg-type]
    assert primary.sent == ["b"]
    assert end == RoundEnd(frozenset({1}), None)  # something went: the delivery goes on at once


async def test_three_keyed_failures_in_a_row_back_off_the_destination_itself() -> None:
    packing = [([0], "k1"), ([1], "k2"), ([2], "k3"), ([3], "k4")]
    deliveries, primary, health, _ = world(packing, {"a": BUSY, "b": BUSY, "c": BUSY})
    settled = Settled()
    end = await Round(deliveries.sends, health, settled, items("a", "b", "c", "d")).run([0, 1, 2, 3])  # type: ignore[arg-type]
    assert end == RoundEnd(frozenset(), Retry())
    assert primary.sent == ["a", "b", "c"]  # the fourth key waits for the destination
    assert health.failures() == 1


async def test_keyed_failures_of_every_pump_count_together_towards_the_destination() -> None:
    # One health per destination for the whole syphon: its back-off always was; its keyed failures in
    # a row were counted per pump (10 pumps could fail 20 keyed sends before the destination backed off).
    healths = Health(BackoffPolicy(10.0, 60.0, rng=TOP_OF_WINDOW))
    one, _, health, _ = world([([0], "k1"), ([1], "k2")], {"a": BUSY, "b": BUSY}, healths=healths)
    other, other_primary, _, _ = world([([0], "k3"), ([1], "k4")], {"c": BUSY}, healths=healths)
    settled = Settled()
    await Round(one.sends, health, settled, items("a", "b")).run([0, 1])  # type: ignore[arg-type]
    assert health.failures() == 0 and health.failed_in_a_row == 2
    end = await Round(other.sends, health, settled, items("c", "d")).run([0, 1])  # type: ignore[arg-type]
    assert end == RoundEnd(frozenset(), Retry())  # the third in a row, of another pump: the destination is down
    assert other_primary.sent == ["c"] and health.failures() == 1


async def test_a_back_off_longer_than_the_retry_hold_leaves_the_messages_locked() -> None:
    deliveries, primary, _, stats = world([([0, 1], None)], {"a+b": BUSY}, retry_hold=1.0)
    settled = Settled()
    await deliveries.deliver(settled, "orders", None, items("a", "b"))  # type: ignore[arg-type]
    assert primary.sent == ["a+b"]
    assert settled.left == ["backlog-a", "backlog-b"] and settled.completed == []
    assert stats.retries == 0


async def test_a_success_between_keyed_failures_restarts_the_count_towards_the_destination() -> None:
    packing = [([0], "k1"), ([1], "k2"), ([2], "k3"), ([3], "k4")]
    deliveries, primary, health, _ = world(packing, {"b": BUSY, "c": BUSY})
    settled = Settled()
    end = await Round(deliveries.sends, health, settled, items("a", "b", "c", "d")).run([0, 1, 2, 3])  # type: ignore[arg-type]
    assert primary.sent == ["a", "b", "c", "d"]  # two failures in a row: only their keys back off
    assert end == RoundEnd(frozenset({0, 3}), None)
    assert health.failures() == 0


async def test_after_the_destination_backed_off_its_keyed_failures_count_afresh() -> None:
    packing = [([0], "k1"), ([1], "k2"), ([2], "k3")]
    deliveries, primary, health, _ = world(packing, {"a": BUSY, "b": BUSY, "c": BUSY, "d": BUSY})
    settled = Settled()
    await Round(deliveries.sends, health, settled, items("a", "b", "c")).run([0, 1, 2])  # type: ignore[arg-type]
    assert health.failures() == 1
    primary.packing = [([0], "k4")]
    end = await Round(deliveries.sends, health, settled, items("d")).run([0])  # type: ignore[arg-type]
    assert isinstance(end.stop, KeysBackingOff)  # one keyed failure: its key backs off, not the destination
    assert health.failures() == 1


async def test_a_delivery_whose_keys_all_back_off_sleeps_the_shortest_wait_once() -> None:
    deliveries, primary, health, stats = world([([0], "k1")], {}, backoff_seconds=(0.3, 0.3))
    health.failed("k1")
    settled = Settled()
    await deliveries.deliver(settled, "orders", "k1", items("a"))  # type: ignore[arg-type]
    assert stats.retries == 1  # slept out the key's back-off, not spun round after round
    assert primary.sent == ["a"] and settled.completed == ["backlog-a"]


async def test_a_delivery_that_waited_out_a_back_off_tries_once_even_if_it_was_pushed_on() -> None:
    deliveries, primary, health, stats = world([([0], None)], {}, backoff_seconds=(0.2, 0.4))
    health.failed()
    settled = Settled()
    delivering = asyncio.create_task(deliveries.deliver(settled, "orders", None, items("a")))  # type: ignore[arg-type]
    await asyncio.sleep(0.05)
    health.failed()  # another delivery's failure meanwhile
    await delivering
    assert stats.retries == 1
    assert primary.sent == ["a"] and settled.completed == ["backlog-a"]


async def test_the_key_a_delivery_was_grouped_by_reaches_its_packing() -> None:
    deliveries, primary, _, _ = world([([0, 1], "session-1")], {})
    keys: list[Any] = []
    batches = primary.batches

    async def recording(destination: str, messages: list[Any], **kwargs: Any) -> Any:
        keys.append(kwargs.get("key"))
        return await batches(destination, messages)

    primary.batches = recording  # type: ignore[method-assign]
    settled = Settled()
    await deliveries.deliver(settled, "orders", "session-1", items("a", "b"))  # type: ignore[arg-type]
    assert keys == ["session-1"]  # not read again per message, and not taken for unkeyed
    assert settled.completed == ["backlog-a", "backlog-b"]


async def test_a_destination_missing_when_its_batch_is_made_dead_letters_the_delivery() -> None:
    deliveries, primary, _, _ = world([], {})

    async def missing(destination: str, messages: list[Any], **_: Any) -> Any:
        raise MessagingEntityNotFoundError(message="gone")

    primary.batches = missing  # type: ignore[method-assign]
    settled = Settled()
    await asyncio.wait_for(deliveries.deliver(settled, "orders", None, items("a", "b")), guard(5))  # type: ignore[arg-type]
    assert settled.dead_lettered == [("backlog-a", "DestinationNotFound"), ("backlog-b", "DestinationNotFound")]
    assert settled.completed == []


def parked(message_id: str, destination: str) -> ServiceBusReceivedMessage:
    """A parked message as a backlog receive hands it over (encoded, stamped, decoded by the SDK)."""
    raw = park_message(ServiceBusMessage(b"x", message_id=message_id), destination).raw_amqp_message
    raw.annotations = {**(raw.annotations or {}), _X_OPT_ENQUEUED_TIME: datetime.now(UTC)}
    return ServiceBusReceivedMessage.from_bytes(
        bytes(encode_payload(bytearray(), PyamqpTransport.to_outgoing_amqp_message(raw)))
    )


class Tasks:
    """The batch's task group: records the deliveries started as tasks (and never runs them)."""

    def __init__(self) -> None:
        self.started = 0

    def create_task(self, coroutine: Any) -> None:
        self.started += 1
        coroutine.close()


async def test_a_batch_for_one_destination_is_delivered_without_a_task_of_its_own() -> None:
    deliveries, primary, _, _ = world([], {})
    received = [parked("m1", "orders"), parked("m2", "orders")]
    settled, tasks = Settled(), Tasks()
    await deliveries.dispatch(settled, tasks, received, now=datetime.now(UTC))  # type: ignore[arg-type]
    # Sent and completed by the time dispatch returns: no task, no turn of the loop before the send.
    assert tasks.started == 0
    assert len(primary.sent) == 2 and sorted(m.message_id for m in settled.completed) == ["m1", "m2"]


async def test_a_batch_for_several_destinations_delivers_each_in_a_task() -> None:
    deliveries, primary, _, _ = world([], {})
    settled, tasks = Settled(), Tasks()
    received = [parked("m1", "orders"), parked("m2", "invoices")]
    await deliveries.dispatch(settled, tasks, received, now=datetime.now(UTC))  # type: ignore[arg-type]
    assert tasks.started == 2 and primary.sent == []  # side by side, neither waits for the other
