"""Senders to the primary's destinations: topic fallback, fresh senders, batching by key."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.exceptions import MessagingEntityNotFoundError

from pairedbus.syphon.destinations import Destinations, batch_key


class StubSender:
    def __init__(self, kind: str, name: str, *, missing: bool = False, closed: bool = False) -> None:
        self.kind, self.name, self.missing, self.closed = kind, name, missing, closed
        self.sent: list[Any] = []
        self.timeouts: list[float | None] = []

    async def send_messages(self, batch: Any, *, timeout: float | None = None) -> None:  # noqa: ASYNC109
        self.timeouts.append(timeout)
        if self.closed:
            raise ValueError("The handler has already been shutdown.")
        if self.missing:
            raise MessagingEntityNotFoundError(message=f"{self.name} not found")
        self.sent.append(batch)

    async def close(self) -> None:
        self.closed = True


class StubClient:
    def __init__(self, *, topics: set[str], closed_first: bool = False) -> None:
        self.topics = topics
        self.closed_first = closed_first
        self.made: list[StubSender] = []

    def get_queue_sender(self, name: str) -> StubSender:
        closed = self.closed_first and not self.made
        sender = StubSender("queue", name, missing=name in self.topics, closed=closed)
        self.made.append(sender)
        return sender

    def get_topic_sender(self, name: str) -> StubSender:
        sender = StubSender("topic", name)
        self.made.append(sender)
        return sender


async def test_a_name_not_found_as_a_queue_is_sent_to_as_a_topic_from_then_on() -> None:
    client = StubClient(topics={"events"})
    destinations = Destinations(client, timeout=60)

    await destinations.send("events", "batch-1")
    await destinations.send("events", "batch-2")

    assert [(s.kind, s.sent) for s in client.made] == [("queue", []), ("topic", ["batch-1", "batch-2"])]
    assert client.made[1].timeouts == [60, 60]  # every send bounded by the operation timeout


async def test_a_name_that_is_neither_is_reported_missing() -> None:
    class Nowhere(StubClient):
        def get_topic_sender(self, name: str) -> StubSender:
            sender = StubSender("topic", name, missing=True)
            self.made.append(sender)
            return sender

    destinations = Destinations(Nowhere(topics={"gone"}), timeout=60)
    with pytest.raises(MessagingEntityNotFoundError):
        await destinations.send("gone", "batch")


async def test_a_sender_shut_down_under_it_is_replaced_on_the_next_send() -> None:
    client = StubClient(topics=set(), closed_first=True)
    destinations = Destinations(client, timeout=60)

    with pytest.raises(ValueError):
        await destinations.send("orders", "batch-1")
    await destinations.send("orders", "batch-2")

    assert [s.sent for s in client.made] == [[], ["batch-2"]]


def test_batch_key_is_the_session_else_the_partition_key() -> None:
    assert batch_key(ServiceBusMessage(b"x", session_id="s", partition_key="s")) == "s"
    assert batch_key(ServiceBusMessage(b"x", partition_key="p")) == "p"
    assert batch_key(ServiceBusMessage(b"x")) is None


def test_batch_key_is_the_message_id_only_under_duplicate_detection_without_session_or_key() -> None:
    # partitioning.md: "MessageId: the key only when the entity has RequiresDuplicateDetection and
    # neither SessionId nor PartitionKey is set."
    assert batch_key(ServiceBusMessage(b"x", message_id="m-1"), message_id_is_key=True) == "m-1"
    assert batch_key(ServiceBusMessage(b"x", message_id="m-1")) is None
    assert batch_key(ServiceBusMessage(b"x", message_id="m-1", partition_key="p"), message_id_is_key=True) == "p"
    keyed = ServiceBusMessage(b"x", message_id="m-1", session_id="s", partition_key="s")
    assert batch_key(keyed, message_id_is_key=True) == "s"


async def test_a_message_larger_than_the_room_left_starts_the_next_batch_without_being_encoded_for_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from azure.servicebus import ServiceBusMessageBatch

    from pairedbus import sdk

    class BatchingSender(StubSender):
        async def create_message_batch(self) -> ServiceBusMessageBatch:
            return ServiceBusMessageBatch(max_size_in_bytes=256 * 1024)

    class BatchingClient(StubClient):
        def get_queue_sender(self, name: str) -> StubSender:
            return BatchingSender("queue", name)

    tries: list[Any] = []
    add_to_batch = sdk.add_to_batch

    def counted(batch: Any, message: Any) -> bool:
        tries.append(message)
        return add_to_batch(batch, message)

    monkeypatch.setattr(sdk, "add_to_batch", counted)
    destinations = Destinations(BatchingClient(topics=set()), timeout=60)
    large = [ServiceBusMessage(b"x" * 200 * 1024, message_id=f"m{i}") for i in range(3)]
    small = [ServiceBusMessage(b"y", message_id=f"s{i}") for i in range(2)]

    units = await destinations.batches("orders", [*large, *small], key=None)

    # Each 200 KB message fills a batch: tried once, in a batch of its own; the small ones share the last one.
    assert [members for _, members, _ in units] == [[0], [1], [2, 3, 4]]
    assert len(tries) == 5


async def test_sends_to_one_destination_overlap_only_across_senders_never_on_one() -> None:
    """The SDK's aio sender loses track of sends that overlap on it (over the wire: transfers sent
    twice, sends that never return); a destination's sends take a sender each, up to
    `senders_per_destination`, and wait for one when all are busy."""
    release = asyncio.Event()

    class SlowSender(StubSender):
        busy = 0
        most = 0

        async def send_messages(self, batch: Any, *, timeout: float | None = None) -> None:  # noqa: ASYNC109
            self.busy += 1
            self.most = max(self.most, self.busy)
            await release.wait()
            self.busy -= 1
            self.sent.append(batch)

    class SlowClient(StubClient):
        def get_queue_sender(self, name: str) -> StubSender:
            sender = SlowSender("queue", name)
            self.made.append(sender)
            return sender

    client = SlowClient(topics=set())
    destinations = Destinations(client, timeout=60, senders_per_destination=3)
    sends = [asyncio.ensure_future(destinations.send("orders", f"batch-{i}")) for i in range(10)]
    await asyncio.sleep(0)
    assert len(client.made) == 3  # three sends under way, the other seven waiting for a sender
    release.set()
    await asyncio.gather(*sends)

    assert [cast(SlowSender, s).most for s in client.made] == [1, 1, 1]
    assert sorted(b for s in client.made for b in s.sent) == sorted(f"batch-{i}" for i in range(10))


async def test_an_idle_sender_is_reused_before_another_is_made() -> None:
    client = StubClient(topics=set())
    destinations = Destinations(client, timeout=60, senders_per_destination=4)
    for i in range(3):
        await destinations.send("orders", f"batch-{i}")
    assert [s.sent for s in client.made] == [["batch-0", "batch-1", "batch-2"]]


async def test_closing_closes_every_sender_side_by_side() -> None:
    """Over the wire a sender's close waits for the broker's answers (0.9 s each under load): 40
    senders closed one after another held the syphon's exit 37 s."""
    release = asyncio.Event()
    closing: list[str] = []

    class SlowClose(StubSender):
        async def close(self) -> None:
            closing.append(self.name)
            await release.wait()
            self.closed = True

    class SlowCloseClient(StubClient):
        def get_queue_sender(self, name: str) -> StubSender:
            sender = SlowClose("queue", name)
            self.made.append(sender)
            return sender

    client = SlowCloseClient(topics=set())
    destinations = Destinations(client, timeout=60, senders_per_destination=2)
    for name in ("a", "b", "c"):
        await destinations.send(name, "batch")
    closed = asyncio.ensure_future(destinations.close())
    for _ in range(10):  # a few turns of the loop; closed one after another, only the first starts
        await asyncio.sleep(0)
    assert sorted(closing) == ["a", "b", "c"]  # every close under way before any returned
    release.set()
    await closed
    assert all(s.closed for s in client.made)


@pytest.mark.parametrize(
    "error",
    [ValueError("The handler has already been shutdown."), TimeoutError("close cut"), KeyError("a bug")],
    ids=["shut-down", "timed-out", "a-bug"],
)
async def test_closing_is_best_effort_for_every_failure_of_service_bus_and_raises_a_bug(error: Exception) -> None:
    # A close cut by an asyncio timeout inside the SDK (`pairing.failures`: TIMED_OUT, as the SDK's
    # own) used to raise out of the syphon's exit; a failure that is no Service Bus answer still does.
    class FailingClose(StubSender):
        async def close(self) -> None:
            raise error

    class FailingCloseClient(StubClient):
        def get_queue_sender(self, name: str) -> StubSender:
            sender = FailingClose("queue", name)
            self.made.append(sender)
            return sender

    destinations = Destinations(FailingCloseClient(topics=set()), timeout=60)
    await destinations.send("orders", "batch")
    if isinstance(error, KeyError):
        with pytest.raises(KeyError):
            await destinations.close()
    else:
        await destinations.close()
