"""The failover sender with the unmodified SDK against two emulated namespaces in another process,
faults injected on the socket: what the SDK really raises, after its own retries, decides."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import timedelta

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.exceptions import MessageSizeExceededError, MessagingEntityNotFoundError

from pairedbus import contract
from pairedbus.emulator.remote import EmulatorProcess
from pairedbus.sender import PairedNamespaceClient, SendAvailabilityOptions
from tests.load import guard

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

COUNT = 2
BACKLOG = contract.backlog_queue_names("primary", COUNT)


@pytest.fixture(scope="module")
def brokers() -> Iterator[EmulatorProcess]:
    with EmulatorProcess(["primary", "secondary"]) as process:
        yield process


@pytest.fixture
def pair(brokers: EmulatorProcess) -> Iterator[EmulatorProcess]:
    """The module's brokers with every fault healed before and after the test."""
    brokers.heal("primary")
    brokers.heal("secondary")
    yield brokers
    brokers.heal("primary")


def _client(brokers: EmulatorProcess, **options: object) -> PairedNamespaceClient:
    options.setdefault("backlog_queue_count", COUNT)
    options.setdefault("failover_interval", timedelta(seconds=1))
    options.setdefault("ping_primary_interval", timedelta(seconds=1))
    return PairedNamespaceClient.from_connection_strings(
        brokers.connection_string("primary"),
        brokers.connection_string("secondary"),
        primary_name="primary",
        connection_verify=brokers.ca_file,
        options=SendAvailabilityOptions(**options),  # type: ignore[arg-type]
    )


def _parked(brokers: EmulatorProcess, prefix: str) -> list[str]:
    """Ids of the messages parked in the backlog whose id starts with `prefix` (each test sends
    its own; the backlog queues are shared by the module's tests)."""
    ids = [m["message_id"] for name in BACKLOG for m in brokers.queue("secondary", name)["active"]]
    return [i for i in ids if i.startswith(prefix)]


@pytest.fixture(scope="module", autouse=True)
def entities(brokers: EmulatorProcess) -> None:
    for name in BACKLOG:
        brokers.create_queue("secondary", name)


@pytest.fixture
def queue(pair: EmulatorProcess, request: pytest.FixtureRequest) -> str:
    """A primary queue of the test's own."""
    name = request.node.name.replace("[", "-").replace("]", "")[:50].strip("-_")
    pair.create_queue("primary", name)
    return name


async def test_a_healthy_primary_takes_the_send(pair: EmulatorProcess, queue: str) -> None:
    async with _client(pair) as client:
        await client.get_queue_sender(queue).send_messages(ServiceBusMessage("hello", message_id="h-1"))
    assert [m["message_id"] for m in pair.queue("primary", queue)["active"]] == ["h-1"]
    assert _parked(pair, "h-") == []


async def test_a_primary_that_refuses_connections_is_failed_over_on_the_first_send(
    pair: EmulatorProcess, queue: str
) -> None:
    """The SDK retries a refused connection before it raises ServiceBusConnectionError (12 s with
    its default policy; one retry after 0.5 s with the policy a 1 s interval gets); that first call
    already outlasts the interval, so it is parked (before the fix its error reached the caller and
    only the next call failed over: 24 s to the first parked message with the default policy)."""
    async with _client(pair) as client:
        sender = client.get_queue_sender(queue)
        await sender.send_messages(ServiceBusMessage("before", message_id="r-b1"))
        pair.faults("primary", down=True)
        await sender.send_messages(ServiceBusMessage("during", message_id="r-d1"))
        assert sender.switched
        await sender.send_messages(ServiceBusMessage("during", message_id="r-d2"))
        assert client.stats.failovers == 1
    assert sorted(_parked(pair, "r-")) == ["r-d1", "r-d2"]
    assert [m["message_id"] for m in pair.queue("primary", queue)["active"]] == ["r-b1"]


async def test_pings_bring_the_sender_back_when_the_primary_returns(pair: EmulatorProcess, queue: str) -> None:
    async with _client(pair) as client:
        sender = client.get_queue_sender(queue)
        pair.faults("primary", down=True)
        await sender.send_messages(ServiceBusMessage("parked", message_id="p-1"))
        assert sender.switched
        pair.heal("primary")
        for _ in range(600):  # bounded: 60 s of 0.1 s turns; pings go once a second
            if not sender.switched:
                break
            await asyncio.sleep(0.1)
        assert not sender.switched
        assert client.stats.returns_to_primary == 1
        await sender.send_messages(ServiceBusMessage("back", message_id="p-k1"))
    assert _parked(pair, "p-") == ["p-1"]
    # today's service stores pings like any message (for 1 s): receivers and the syphon drop them
    active = pair.queue("primary", queue)["active"]
    assert [m["message_id"] for m in active if m["content_type"] != "application/vnd.ms-servicebus-ping"] == ["p-k1"]


@pytest.mark.parametrize("mode", ["reject", "attach"])
async def test_server_busy_fails_over(pair: EmulatorProcess, queue: str, mode: str) -> None:
    prefix = f"busy-{mode}-"
    async with _client(pair) as client:
        sender = client.get_queue_sender(queue)
        pair.faults("primary", busy=[mode])
        sent = 0
        for i in range(10):  # the SDK retries server-busy itself; each error it gives up on counts
            try:
                await sender.send_messages(ServiceBusMessage("x", message_id=f"{prefix}{i}"))
                sent += 1
                break
            except Exception as exc:  # what reaches the caller before the switch
                assert getattr(exc, "retryable", True)
        assert sender.switched and sent == 1
    assert len(_parked(pair, prefix)) == 1


async def test_a_message_too_large_never_fails_over(pair: EmulatorProcess, queue: str) -> None:
    async with _client(pair) as client:
        sender = client.get_queue_sender(queue)
        with pytest.raises(MessageSizeExceededError):
            await sender.send_messages(ServiceBusMessage("x" * 300_000, message_id="big-1"))
        assert not sender.switched
    assert _parked(pair, "big-") == []


async def test_a_missing_entity_never_fails_over(pair: EmulatorProcess) -> None:
    async with _client(pair) as client:
        sender = client.get_queue_sender("no-such-queue")
        with pytest.raises(MessagingEntityNotFoundError):
            await sender.send_messages(ServiceBusMessage("x"))
        assert not sender.switched


async def test_a_disabled_primary_entity_fails_over_on_the_wire(pair: EmulatorProcess) -> None:
    pair.create_queue("primary", "disabled-queue", status="Disabled")
    async with _client(pair, failover_interval=timedelta(0)) as client:
        sender = client.get_queue_sender("disabled-queue")
        await sender.send_messages(ServiceBusMessage("x", message_id="dis-w1"))
        assert sender.switched
    assert _parked(pair, "dis-w") == ["dis-w1"]


async def test_a_dropped_connection_the_sdk_reopens_is_not_an_outage(pair: EmulatorProcess, queue: str) -> None:
    """Every open connection to the primary is cut (no close frame): the SDK opens a new one on the
    next send by itself, the send succeeds on the primary, and nothing fails over."""
    async with _client(pair) as client:
        sender = client.get_queue_sender(queue)
        await sender.send_messages(ServiceBusMessage("before", message_id="drop-1"))
        assert pair.faults("primary", drop=True)["dropped"] >= 1
        await sender.send_messages(ServiceBusMessage("after", message_id="drop-2"))
        assert not sender.switched
        assert client.stats.failovers == 0
    assert [m["message_id"] for m in pair.queue("primary", queue)["active"]] == ["drop-1", "drop-2"]
    assert _parked(pair, "drop-") == []


async def test_a_send_stored_but_unanswered_is_sent_again_and_duplicate_detection_keeps_one(
    pair: EmulatorProcess,
) -> None:
    """The primary stores a send, then the connection is cut before the answer: the SDK sends it
    again on a new connection, and the primary's duplicate detection (paired entities need it,
    keyed by the message id the sender set) drops the second copy; the caller saw one success."""
    pair.create_queue("primary", "ambiguous-queue", requires_duplicate_detection=True)
    async with _client(pair) as client:
        sender = client.get_queue_sender("ambiguous-queue")
        pair.faults("primary", ambiguous_sends=1)
        await sender.send_messages(ServiceBusMessage("once", message_id="amb-1"))
        assert not sender.switched
    stored = pair.queue("primary", "ambiguous-queue")
    assert [m["message_id"] for m in stored["active"]] == ["amb-1"]
    assert stored["duplicates_dropped"] == 1  # it did arrive twice


async def test_sends_overlapping_on_one_failover_sender_each_return(pair: EmulatorProcess, queue: str) -> None:
    """A caller shares one failover sender between tasks: the SDK's aio sender cannot be opened by two
    tasks at once, and loses track of sends that overlap on it (Azure/azure-sdk-for-python#36334:
    they never return, whatever their `timeout=`). The sender's calls take turns (sender/turns.py):
    every send returns, on the primary, and nothing fails over. Before, all 30 raised "Handler
    failed: 'NoneType' object has no attribute 'client_ready_async'" to the caller."""
    count = 30
    async with _client(pair) as client:
        sender = client.get_queue_sender(queue)

        async def send(i: int) -> None:
            await asyncio.sleep(0.002 * i)  # staggered: each joins while others wait for their answer
            await sender.send_messages(ServiceBusMessage("x", message_id=f"ov-{i}"), timeout=guard(20))

        tasks = [asyncio.create_task(send(i)) for i in range(count)]
        done, pending = await asyncio.wait(tasks, timeout=guard(60))
        for task in pending:
            task.cancel()
        assert not pending, f"{len(pending)} of {count} sends never returned"
        failed = [repr(task.exception()) for task in done if task.exception() is not None]
        assert not failed, f"{len(failed)} of {count} sends raised: {failed[:3]}"
        assert not sender.switched and client.stats.calls_cut == 0
    assert len(pair.queue("primary", queue)["active"]) == count
