"""The syphon with the unmodified SDK against two emulated namespaces in another process: what the
sender parked is moved home exactly once, settled only after the primary took it, and a dropped
connection loses the locks without losing or doubling a message."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from azure.servicebus import ServiceBusMessage

from pairedbus import contract
from pairedbus.emulator.remote import EmulatorProcess
from pairedbus.pairing.endpoints import NamespaceEndpoint
from pairedbus.sender import PairedNamespaceClient, SendAvailabilityOptions
from pairedbus.syphon import Syphon
from tests.load import guard

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

COUNT = 2
BACKLOG = contract.backlog_queue_names("primary", COUNT)


@pytest.fixture
def brokers() -> Iterator[EmulatorProcess]:
    with EmulatorProcess(["primary", "secondary"]) as process:
        for name in BACKLOG:
            process.create_queue("secondary", name, lock_duration="PT5S")
        process.create_queue(
            "primary", "orders", requires_duplicate_detection=True, duplicate_detection_history_time_window="PT10M"
        )
        yield process


def _endpoints(brokers: EmulatorProcess) -> tuple[NamespaceEndpoint, NamespaceEndpoint]:
    return (
        NamespaceEndpoint.from_connection_string(
            brokers.connection_string("primary"), name="primary", connection_verify=brokers.ca_file
        ),
        NamespaceEndpoint.from_connection_string(
            brokers.connection_string("secondary"), name="secondary", connection_verify=brokers.ca_file
        ),
    )


def _syphon(brokers: EmulatorProcess, **options: object) -> Syphon:
    """A syphon on the brokers' connection strings, serving the pair's backlog queues."""
    primary, secondary = _endpoints(brokers)
    return Syphon(primary=primary, secondary=secondary, credential=None, backlog_queue_count=COUNT, **options)


async def _park(brokers: EmulatorProcess, count: int) -> None:
    """The sender parks `count` messages while the primary refuses connections."""
    primary, secondary = _endpoints(brokers)
    options = SendAvailabilityOptions(backlog_queue_count=COUNT, failover_interval=timedelta(0))
    # retry_total=0: the parking itself is not under test, the SDK's 12 s of retries are skipped
    async with PairedNamespaceClient(
        primary, secondary, None, options=options, client_kwargs={"retry_total": 0}
    ) as client:
        sender = client.get_queue_sender("orders", requires_session=False)
        brokers.faults("primary", down=True)
        for i in range(count):
            await sender.send_messages(
                ServiceBusMessage(f"body {i}", message_id=f"m{i}", application_properties={"i": i})
            )
        assert sender.switched
    brokers.heal("primary")


def _backlog_total(brokers: EmulatorProcess) -> int:
    return sum(brokers.queue("secondary", name)["counts"]["active"] for name in BACKLOG)


async def test_the_syphon_moves_every_parked_message_home_once(brokers: EmulatorProcess) -> None:
    await _park(brokers, 20)
    assert _backlog_total(brokers) == 20
    async with _syphon(brokers) as syphon:
        stats = await asyncio.wait_for(syphon.drain(), guard(120))
    home = brokers.queue("primary", "orders")["active"]
    assert sorted(m["message_id"] for m in home) == sorted(f"m{i}" for i in range(20))
    assert {m["body"] for m in home} == {f"body {i}" for i in range(20)}
    assert all(m["application_properties"]["i"] == m["message_id"][1:] for m in home)
    assert _backlog_total(brokers) == 0
    assert stats.moved == 20


async def test_a_dropped_secondary_connection_loses_the_locks_and_nothing_else(brokers: EmulatorProcess) -> None:
    """The syphon's secondary connection is cut while it moves: its locks are lost (the messages
    come back when the 5 s lock expires) and they are moved later; duplicate detection on the
    destination drops a second copy of any whose send had already succeeded."""
    await _park(brokers, 200)

    dropped: list[int] = []

    async def cut_once_moving() -> None:
        if dropped:
            return
        for _ in range(400):  # bounded: 20 s
            if brokers.queue("primary", "orders")["counts"]["active"] > 0:
                dropped.append(brokers.faults("secondary", drop=True)["dropped"])
                return
            await asyncio.sleep(0.05)

    moved = 0
    for _ in range(3):  # a faulted syphon is started again, as its host does
        syphon = _syphon(brokers, close_fault_grace=timedelta(seconds=1))
        try:
            async with syphon:
                cutter = asyncio.ensure_future(cut_once_moving())
                try:
                    await asyncio.wait_for(syphon.drain(), guard(120))
                finally:
                    cutter.cancel()
            if _backlog_total(brokers) == 0:
                break
        except Exception:  # SyphonFaulted, or the drain's own error: start again
            await asyncio.sleep(6)  # the lost locks expire (5 s)
        finally:
            moved += syphon.stats.moved
    assert dropped and dropped[0] >= 1  # the syphon's connection was cut while it moved
    home = brokers.queue("primary", "orders")
    ids = [m["message_id"] for m in home["active"]]
    assert sorted(ids) == sorted(f"m{i}" for i in range(200))  # none lost, none doubled
    assert home["dead_letter"] == []
    # No backlog message counted as moved twice: a copy sent again after its lock was lost is one
    # the destination's duplicate detection dropped, and its stale complete is refused. (Fewer
    # than 200 when a complete the broker applied lost its answer to the cut.)
    assert moved <= 200, (moved, home["duplicates_dropped"])
    assert all(m["delivery_count"] == 0 for m in home["active"])
    for name in BACKLOG:
        assert brokers.queue("secondary", name)["dead_letter"] == []
    assert _backlog_total(brokers) == 0


async def test_a_primary_that_goes_down_faults_the_syphon_by_the_close_fault_rule(brokers: EmulatorProcess) -> None:
    """The primary refuses connections while the syphon moves: its sends fail with the SDK's
    ServiceBusConnectionError once the SDK's retries are spent, the secondary does not follow
    within the grace, and the syphon faults (paired-namespaces.md, close/fault). Nothing it held is
    lost: once the primary is back, a new syphon moves every message home, each once."""
    from pairedbus.syphon import SyphonFaulted

    await _park(brokers, 30)
    brokers.faults("primary", down=True)
    stop = asyncio.Event()
    with pytest.raises(SyphonFaulted) as caught:
        async with _syphon(
            brokers,
            close_fault_grace=timedelta(seconds=1),
            client_kwargs={"retry_total": 1, "retry_backoff_factor": 0.2},
        ) as syphon:
            await asyncio.wait_for(syphon.run(stop), guard(120))
    assert "primary" in str(caught.value)
    brokers.heal("primary")
    await asyncio.sleep(6)  # the faulted syphon's locks (5 s) run out
    async with _syphon(brokers) as syphon:
        await asyncio.wait_for(syphon.drain(), guard(120))
    assert sorted(m["message_id"] for m in brokers.queue("primary", "orders")["active"]) == sorted(
        f"m{i}" for i in range(30)
    )
    assert _backlog_total(brokers) == 0


async def _park_across(brokers: EmulatorProcess, count: int) -> None:
    """`count` parked copies for `orders`, spread over every backlog queue (as many senders'
    random picks spread them)."""
    from azure.servicebus.aio import ServiceBusClient

    from pairedbus.pairing.aliasing import parked_copy

    async with ServiceBusClient.from_connection_string(brokers.connection_string("secondary")) as client:
        for q, name in enumerate(BACKLOG):
            async with client.get_queue_sender(name) as sender:
                await sender.send_messages(
                    [
                        parked_copy(ServiceBusMessage(f"body {i}", message_id=f"m{i}"), "orders")
                        for i in range(q, count, COUNT)
                    ]
                )


async def test_short_receives_on_empty_queues_end_and_one_destination_opens_once(
    brokers: EmulatorProcess, caplog: pytest.LogCaptureFixture
) -> None:
    """Short receives on queues that run empty (each ends in a drain of its credit), and every
    backlog queue's pump opening the sender of the same destination: the SDK's aio sender cannot
    be opened by two tasks at once (the second raised AttributeError and every pump backed off;
    this test fails on that code)."""
    await _park_across(brokers, 200)
    async with _syphon(
        brokers,
        drain_wait=timedelta(milliseconds=100),
    ) as syphon:
        stats = await asyncio.wait_for(syphon.drain(), guard(60))  # a hang guard: it took 6-7 s here
    assert stats.moved == 200
    assert "opening a sender to the primary failed" not in caplog.text
    assert sorted(m["message_id"] for m in brokers.queue("primary", "orders")["active"]) == sorted(
        f"m{i}" for i in range(200)
    )


async def test_every_connection_of_the_syphon_shares_one_ssl_context(
    brokers: EmulatorProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each SDK sender and receiver is a connection of its own, and each loaded the CA bundle into an
    SSL context of its own (0.05-0.1 s of CPU, even for plain AMQP): 107 loads in one drain of the
    wire benchmark. The syphon's clients now share one context (`sdk.amqp_ssl_context`): the SDK's
    default bundle is loaded once a process however many connections the drain opens (here 4
    receivers ahead on each of 2 queues and a destination's senders)."""
    import ssl

    import certifi

    loads: list[object] = []
    load = ssl.SSLContext.load_verify_locations

    def counted(self: ssl.SSLContext, cafile: object = None, *args: object, **kwargs: object) -> None:
        loads.append(cafile)
        load(self, cafile, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    await _park_across(brokers, 40)
    loads.clear()  # the parking client's own
    async with _syphon(brokers, drain_wait=timedelta(milliseconds=100)) as syphon:
        stats = await asyncio.wait_for(syphon.drain(), guard(60))
    assert stats.moved == 40
    assert loads.count(certifi.where()) <= 1  # once a process: none if an earlier test built it


async def test_a_drain_over_ten_backlog_queues_moves_every_message_once(brokers: EmulatorProcess) -> None:
    """1,000 parked messages over 10 backlog queues to 10 destinations. It stalled with messages
    available and held, two ways: overlapping sends on one SDK sender (transfers sent again,
    dropped by duplicate detection, and sends that never returned: 132 pending after 30 s), and
    receivers whose link open the SDK bounded by the 100 ms drain wait (opens timed out under
    load, the queues backed off). A drain now ends with each message home once and no transfer
    sent twice."""
    names = contract.backlog_queue_names("bulk", 10)  # a pair of its own: the backlog spec's 1-minute lock
    for name in names:
        brokers.create_queue("secondary", name, lock_duration="PT1M")
    destinations = [f"dest-{d}" for d in range(10)]
    for destination in destinations:
        brokers.create_queue("primary", destination, requires_duplicate_detection=True)
    await _park_to(brokers, names, destinations, 1_000)
    primary, secondary = _endpoints(brokers)
    async with Syphon(
        primary=primary,
        secondary=secondary,
        credential=None,
        backlog_prefix="bulk",
        backlog_queue_count=len(names),
        drain_wait=timedelta(milliseconds=100),
    ) as syphon:
        stats = await asyncio.wait_for(syphon.drain(), guard(120))  # a hang guard: 10-20 s here, busy
    assert stats.moved == 1_000
    views = [brokers.queue("primary", d) for d in destinations]
    assert sorted(m["message_id"] for v in views for m in v["active"]) == sorted(f"m{i}" for i in range(1_000))
    assert [v["duplicates_dropped"] for v in views] == [0] * 10  # no transfer was sent twice
    assert sum(brokers.queue("secondary", n)["counts"]["active"] for n in names) == 0


async def _park_to(brokers: EmulatorProcess, names: list[str], destinations: list[str], count: int) -> None:
    """`count` parked copies spread over the backlog queues `names` and the `destinations`."""
    from azure.servicebus.aio import ServiceBusClient

    from pairedbus.pairing.aliasing import parked_copy

    async with ServiceBusClient.from_connection_string(brokers.connection_string("secondary")) as client:

        async def park(q: int, name: str) -> None:
            async with client.get_queue_sender(name) as sender:  # each opens a connection: side by side
                await sender.send_messages(
                    [
                        parked_copy(
                            ServiceBusMessage(b"x" * 256, message_id=f"m{i}"), destinations[i % len(destinations)]
                        )
                        for i in range(q, count, len(names))
                    ]
                )

        await asyncio.gather(*(park(q, name) for q, name in enumerate(names)))


async def test_a_receiver_whose_receive_failed_is_replaced_so_its_queue_is_served_again(
    brokers: EmulatorProcess,
) -> None:
    """The secondary answers receives busy (it detaches the receive link) while the service loop
    starts, then heals. The SDK keeps the detached link's error on its receiver: with its retries
    off, every later receive on that receiver raised the same ServiceBusServerBusyError, the fault
    long healed, so a pump that kept its receiver never received again (what left a drill's last
    messages parked). A receiver whose receive failed is replaced by a fresh one."""
    await _park(brokers, 20)
    brokers.faults("secondary", busy=["receive"])
    stop = asyncio.Event()
    async with _syphon(
        brokers,
        client_kwargs={"retry_total": 0},
        backoff_initial=timedelta(milliseconds=50),
        backoff_max=timedelta(milliseconds=200),
    ) as syphon:
        running = asyncio.create_task(syphon.run(stop))
        for _ in range(600):  # bounded: 30 s
            if syphon.stats.errors.get("ServiceBusServerBusyError", 0) >= 2 * COUNT:
                break
            await asyncio.sleep(0.05)
        brokers.heal("secondary")
        try:
            for _ in range(1_200):  # a hang guard (60 s): the 20 moved in 1-2 s here
                if syphon.stats.moved == 20:
                    break
                await asyncio.sleep(0.05)
        finally:
            stop.set()
            await asyncio.wait_for(running, guard(60))
    assert syphon.stats.errors["ServiceBusServerBusyError"] >= 2 * COUNT  # every queue's receives failed
    assert syphon.stats.moved == 20
    assert _backlog_total(brokers) == 0


async def test_a_syphon_the_close_fault_rule_stops_gives_back_what_it_held_at_once() -> None:
    """The primary refuses connections while the syphon holds messages (a 5-minute lock): under the
    close/fault rule it abandons them before it closes the secondary, so the broker redelivers them
    now, not when their lock runs out. On the code before, a fresh receiver got none of them within
    a minute (they waited out their lock); now it gets all 30, each once, and a new syphon moves
    them home once the primary is back."""
    from azure.servicebus.aio import ServiceBusClient

    from pairedbus.syphon import SyphonFaulted

    with EmulatorProcess(["primary", "secondary"]) as brokers:
        for name in BACKLOG:
            brokers.create_queue("secondary", name, lock_duration="PT5M")
        brokers.create_queue(
            "primary", "orders", requires_duplicate_detection=True, duplicate_detection_history_time_window="PT10M"
        )
        await _park_across(brokers, 30)
        brokers.faults("primary", down=True)
        syphon = _syphon(
            brokers,
            close_fault_grace=timedelta(seconds=1),
            lock_duration=timedelta(minutes=5),
            client_kwargs={"retry_total": 1, "retry_backoff_factor": 0.2},
        )
        with pytest.raises(SyphonFaulted):
            async with syphon:
                await asyncio.wait_for(syphon.run(asyncio.Event()), guard(120))
        assert syphon.stats.given_back == 30
        back: list[str] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + min(guard(20), 60.0)  # well inside the lock: the old code's are still locked
        async with contextlib.AsyncExitStack() as stack:
            client = await stack.enter_async_context(
                ServiceBusClient.from_connection_string(
                    brokers.connection_string("secondary"), connection_verify=brokers.ca_file
                )
            )
            # Opened first: a receive bounds its link's open by its own short wait (pump._receive).
            receivers = [await stack.enter_async_context(client.get_queue_receiver(name)) for name in BACKLOG]
            held: list[tuple[Any, Any]] = []
            while len(back) < 30 and loop.time() < deadline:
                for receiver in receivers:
                    for message in await receiver.receive_messages(max_message_count=30, max_wait_time=0.5):
                        back.append(str(message.message_id))
                        held.append((receiver, message))
            for receiver, message in held:
                await receiver.abandon_message(message)  # for the syphon below
        assert sorted(back) == sorted(f"m{i}" for i in range(30))
        brokers.heal("primary")
        async with _syphon(brokers) as syphon:
            await asyncio.wait_for(syphon.drain(), guard(120))
        assert sorted(m["message_id"] for m in brokers.queue("primary", "orders")["active"]) == sorted(
            f"m{i}" for i in range(30)
        )
        assert _backlog_total(brokers) == 0
