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
