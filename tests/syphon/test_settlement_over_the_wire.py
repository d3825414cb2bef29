"""A batch's completes over the wire with the unmodified SDK (`settlement.Settlement`, `sdk.complete_together`):
one reader waits for all their outcomes. azure-servicebus 7.15.0's `complete_message` waits for its own outcome
by reading its receiver's connection a frame at a time under the lock its writes take too, so n completes at once
were n readers taking turns, each that found nothing to read holding the lock for the socket timeout."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus._pyamqp.aio import _transport_async
from azure.servicebus.aio import ServiceBusClient
from azure.servicebus.exceptions import ServiceBusError

from pairedbus import sdk
from pairedbus.emulator.remote import EmulatorProcess
from pairedbus.syphon.settlement import Settlement
from pairedbus.syphon.stats import SyphonStats
from tests.syphon.test_settlement import HoldStub, Keeper, Pair, context

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

COUNT = 100


@pytest.fixture(scope="module")
def brokers() -> Iterator[EmulatorProcess]:
    with EmulatorProcess(["secondary"]) as process:
        process.create_queue("secondary", "backlog", lock_duration="PT1M")
        yield process


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Reads of a connection: those that brought a frame and those that found none within their timeout."""
    counted: Counter[str] = Counter()
    receive_frame = _transport_async.AsyncTransportMixin.receive_frame

    async def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        read = await receive_frame(self, *args, **kwargs)
        counted["frame" if read[1] is not None else "empty"] += 1
        return read

    monkeypatch.setattr(_transport_async.AsyncTransportMixin, "receive_frame", counting)
    return counted


async def _received(client: ServiceBusClient, receiver: Any, count: int) -> list[Any]:
    async with client.get_queue_sender("backlog") as sender:
        await sender.send_messages([ServiceBusMessage(b"x", message_id=f"m{i}") for i in range(count)])
    received: list[Any] = []
    while len(received) < count:
        received += await receiver.receive_messages(max_message_count=count - len(received), max_wait_time=5)
    return received


async def test_a_batch_s_completes_read_the_connection_about_once_a_message(
    brokers: EmulatorProcess, reads: Counter[str]
) -> None:
    """100 messages received on one receiver, completed as one acknowledged send's (`Settlement.complete`): all
    confirmed and gone, in about a read a message (the broker's answers) with almost none empty. On the code
    before (a `complete_message` each, all at once) 99 of the reads were empty, in 2 runs of 2."""
    async with ServiceBusClient.from_connection_string(brokers.connection_string("secondary")) as client:
        async with client.get_queue_receiver("backlog", prefetch_count=0) as receiver:
            messages = await _received(client, receiver, COUNT)
            reads.clear()
            stats, hold, keeper, pair = SyphonStats(), HoldStub(), Keeper(), Pair()
            async with asyncio.TaskGroup() as tasks:
                Settlement(context(stats, pair), "backlog", receiver, keeper, hold, tasks).complete(messages)
            settling = reads.copy()
            left = await receiver.peek_messages(max_message_count=COUNT)
    assert stats.moved == COUNT and hold.given_back == COUNT and not stats.errors and not left
    assert settling["frame"] <= COUNT + 5
    assert settling["empty"] <= 5


async def test_a_complete_the_broker_cannot_apply_is_that_message_s_error_alone(brokers: EmulatorProcess) -> None:
    """One message of three completed before: the other two are confirmed, it gets the SDK's error (the SDK's
    own check refuses it before its frame leaves, as `complete_message` would), and a receiver that is not the
    SDK's is left to the caller (None)."""
    async with ServiceBusClient.from_connection_string(brokers.connection_string("secondary")) as client:
        async with client.get_queue_receiver("backlog", prefetch_count=0) as receiver:
            messages = await _received(client, receiver, 3)
            await receiver.complete_message(messages[1])
            results = await sdk.complete_together(receiver, messages, 10.0)
            left = await receiver.peek_messages(max_message_count=10)
    assert results is not None
    assert results[0] is None and results[2] is None
    assert isinstance(results[1], ServiceBusError)
    assert not left
    assert await sdk.complete_together(object(), messages, 10.0) is None


def _handler_open(receiver: Any) -> bool:
    handler = receiver._handler
    return bool(receiver._running) and handler is not None and not handler._shutdown


async def test_a_busy_answer_to_some_completes_settles_them_on_retry_and_keeps_the_receiver_open(
    brokers: EmulatorProcess,
) -> None:
    """The broker answers the first 2 of 5 completes of a group busy (`busy_dispositions`, the lock kept): every
    retry goes through `sdk.complete_together`, which completes those 2 by lock token (pyamqp forgets a delivery
    tag once its disposition went out), so all 5 are moved and gone, and the receiver's handler stays open and
    receives again. On the emulator before (a busy answer to a disposition forgot the message's lock) 3 of 5 were
    moved: each retry found the lock lost, as no broker that refused to apply a complete would say."""
    async with ServiceBusClient.from_connection_string(brokers.connection_string("secondary")) as client:
        async with client.get_queue_receiver("backlog", prefetch_count=0) as receiver:
            messages = await _received(client, receiver, 5)
            brokers.faults("secondary", busy_dispositions=2)
            stats, hold, keeper, pair = SyphonStats(), HoldStub(), Keeper(), Pair()
            async with asyncio.TaskGroup() as tasks:
                Settlement(context(stats, pair), "backlog", receiver, keeper, hold, tasks).complete(messages)
            assert _handler_open(receiver)
            left = await receiver.peek_messages(max_message_count=10)
            again = await _received(client, receiver, 1)
            await receiver.complete_message(again[0])
    assert brokers.faults("secondary")["busy_dispositions"] == 0  # both busy answers were given
    assert stats.moved == 5 and hold.given_back == 5 and not left
    assert sum(stats.errors.values()) == 2  # the two busy answers, counted once each


async def test_completes_on_a_receive_link_the_broker_detached_go_by_lock_token(brokers: EmulatorProcess) -> None:
    """A busy receive makes the broker detach the receive link (as `--fault-rate` does to a receive's credit) while
    5 received messages wait to be completed: they are completed by lock token on the management link, and the
    receiver's handler stays open. On the code before, their completes found the link closed (`ValueError('Link
    already closed.')` inside the SDK, which then shut the handler down), and the messages waited out their lock."""
    async with ServiceBusClient.from_connection_string(brokers.connection_string("secondary"), retry_total=0) as client:
        async with client.get_queue_receiver("backlog", prefetch_count=0) as receiver:
            messages = await _received(client, receiver, 5)
            brokers.faults("secondary", busy=["receive"])
            with pytest.raises(ServiceBusError):
                await receiver.receive_messages(max_message_count=1, max_wait_time=1)
            brokers.heal("secondary")
            stats, hold, keeper, pair = SyphonStats(), HoldStub(), Keeper(), Pair()
            async with asyncio.TaskGroup() as tasks:
                Settlement(context(stats, pair), "backlog", receiver, keeper, hold, tasks).complete(messages)
            assert _handler_open(receiver)
            left = await receiver.peek_messages(max_message_count=10)
    assert stats.moved == 5 and hold.given_back == 5 and not left
    assert not stats.errors


async def _detached(brokers: EmulatorProcess, receiver: Any) -> None:
    """The broker detaches `receiver`'s receive link, as `--fault-rate` does to a busy receive's credit."""
    brokers.faults("secondary", busy=["receive"])
    with pytest.raises(ServiceBusError):
        await receiver.receive_messages(max_message_count=1, max_wait_time=1)
    brokers.heal("secondary")


async def test_dead_letters_on_a_receive_link_the_broker_detached_go_by_lock_token_with_their_reason(
    brokers: EmulatorProcess,
) -> None:
    """Two received messages dead-lettered (`Settlement.dead_letter`) after the broker detached the receive link:
    both are dead-lettered by lock token (`update-disposition`, `suspended`), with the reason and description read
    back from the dead-letter queue exactly as given, and the receiver's handler stays open. On the code before,
    `dead_letter_message` found the link closed (`ValueError('Link already closed.')` inside the SDK, which shut
    the handler down): nothing dead-lettered."""
    async with ServiceBusClient.from_connection_string(brokers.connection_string("secondary"), retry_total=0) as client:
        async with client.get_queue_receiver("backlog", prefetch_count=0) as receiver:
            messages = await _received(client, receiver, 2)
            await _detached(brokers, receiver)
            by_token = _by_token_counted(receiver)
            stats, hold, keeper, pair = SyphonStats(), HoldStub(), Keeper(), Pair()
            async with asyncio.TaskGroup() as tasks:
                settlement = Settlement(context(stats, pair), "backlog", receiver, keeper, hold, tasks)
                settlement.dead_letter(messages[0], "TooBig", "refused for good: 300 KB")
                settlement.dead_letter(messages[1], "Unroutable", "no such destination 'x'")
            assert _handler_open(receiver)
            left = await receiver.peek_messages(max_message_count=10)
        async with client.get_queue_receiver("backlog", sub_queue="deadletter", prefetch_count=0) as dead:
            found = await dead.receive_messages(max_message_count=2, max_wait_time=5)
            for message in found:
                await dead.complete_message(message)
    assert not left and hold.given_back == 2 and not stats.errors and by_token == ["suspended"] * 2
    assert sorted((m.message_id, m.dead_letter_reason, m.dead_letter_error_description) for m in found) == [
        ("m0", "TooBig", "refused for good: 300 KB"),
        ("m1", "Unroutable", "no such destination 'x'"),
    ]


async def test_a_give_back_on_a_receive_link_the_broker_detached_abandons_by_lock_token(
    brokers: EmulatorProcess,
) -> None:
    """A stopping syphon gives back (`close_fault.give_back`) three messages held on a receive link the broker
    detached: all three abandoned by lock token, available at once to another receiver (the lock is a minute), and
    the receiver's handler stays open. On the code before, `abandon_message` found the link closed (`ValueError`
    inside the SDK, which shut the handler down): none given back."""
    from pairedbus.pairing.connections import ConnectionPair
    from pairedbus.syphon.close_fault import StopOnFault, give_back
    from pairedbus.syphon.lock_keeper import LockKeeper

    pair = ConnectionPair(60.0, StopOnFault())
    async with ServiceBusClient.from_connection_string(brokers.connection_string("secondary"), retry_total=0) as client:
        async with client.get_queue_receiver("backlog", prefetch_count=0) as receiver:
            messages = await _received(client, receiver, 3)
            await _detached(brokers, receiver)
            by_token = _by_token_counted(receiver)
            holders: set[LockKeeper[Any]] = set()
            stats = SyphonStats()
            LockKeeper(receiver, messages, 30.0, stats, pair, holders=holders)
            try:
                given = await give_back(holders, stats, bound=30.0)
            finally:
                await pair.shut_down()
            assert _handler_open(receiver)
        async with client.get_queue_receiver("backlog", prefetch_count=0) as again:
            back = await again.receive_messages(max_message_count=3, max_wait_time=5)
            for message in back:
                await again.complete_message(message)
    assert given == (3, 3) and by_token == ["abandoned"] * 3
    assert sorted(m.message_id for m in back) == ["m0", "m1", "m2"]
    assert all(m.delivery_count == 1 for m in back)


async def test_dead_letters_and_abandons_on_a_live_receive_link_go_on_it(brokers: EmulatorProcess) -> None:
    """On a receive link that can carry them, a dead-letter and a give-back's abandons go on it as the SDK's own
    dispositions (rejected with the dead-letter error; modified): the reason and description read back from the
    dead-letter queue as given, the abandoned two received again at once with their delivery count up."""
    from pairedbus.pairing.connections import ConnectionPair
    from pairedbus.syphon.close_fault import StopOnFault, give_back
    from pairedbus.syphon.lock_keeper import LockKeeper

    pair = ConnectionPair(60.0, StopOnFault())
    async with ServiceBusClient.from_connection_string(brokers.connection_string("secondary"), retry_total=0) as client:
        async with client.get_queue_receiver("backlog", prefetch_count=0) as receiver:
            messages = await _received(client, receiver, 3)
            by_token = _by_token_counted(receiver)
            stats, hold, keeper, stub_pair = SyphonStats(), HoldStub(), Keeper(), Pair()
            async with asyncio.TaskGroup() as tasks:
                settlement = Settlement(context(stats, stub_pair), "backlog", receiver, keeper, hold, tasks)
                settlement.dead_letter(messages[0], "TooBig", "refused for good")
            holders: set[LockKeeper[Any]] = set()
            LockKeeper(receiver, messages[1:], 30.0, stats, pair, holders=holders)
            try:
                given = await give_back(holders, stats, bound=30.0)
            finally:
                await pair.shut_down()
            assert _handler_open(receiver)
            back = await _received_again(receiver, 2)
        async with client.get_queue_receiver("backlog", sub_queue="deadletter", prefetch_count=0) as dead:
            found = await dead.receive_messages(max_message_count=1, max_wait_time=5)
            await dead.complete_message(found[0])
    assert given == (2, 2) and not stats.errors and by_token == []
    assert (found[0].message_id, found[0].dead_letter_reason, found[0].dead_letter_error_description) == (
        "m0",
        "TooBig",
        "refused for good",
    )
    assert sorted((m.message_id, m.delivery_count) for m in back) == [("m1", 1), ("m2", 1)]


async def _received_again(receiver: Any, count: int) -> list[Any]:
    """`count` messages received (and completed) on `receiver`, nothing sent."""
    received: list[Any] = []
    while len(received) < count:
        received += await receiver.receive_messages(max_message_count=count - len(received), max_wait_time=5)
    for message in received:
        await receiver.complete_message(message)
    return received


def _by_token_counted(receiver: Any) -> list[str]:
    """The `disposition-status` of each settlement `receiver` makes by lock token on its management link."""
    terms: list[str] = []
    settle = receiver._settle_message_via_mgmt_link

    async def counted(term: str, *args: Any, **kwargs: Any) -> Any:
        terms.append(term)
        return await settle(term, *args, **kwargs)

    receiver._settle_message_via_mgmt_link = counted
    return terms
