"""The Syphon as a whole on the Service Bus fake: which queues it serves, drain(), run() and stop."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from azure.servicebus import ServiceBusMessage

from pairedbus import contract, sdk
from pairedbus.servicebus.world import ServiceBusWorld
from pairedbus.testing import aio_client
from tests.load import guard

from .helpers import (
    PRIMARY,
    SECONDARY,
    backlog_depth,
    backlog_settings,
    bodies,
    create_backlog_queues,
    eventually,
    make_syphon,
    park,
)


async def test_drain_serves_every_backlog_queue_including_extras_beyond_the_count(world: ServiceBusWorld) -> None:
    create_backlog_queues(world, 3)
    extra = contract.backlog_queue_name("contoso-primary", 7)
    world.namespace(SECONDARY).create_queue(extra, **backlog_settings())
    orders = world.namespace(PRIMARY).create_queue("orders")
    for index in (0, 1, 2, 7):
        await park("orders", ServiceBusMessage(f"from-{index}"), backlog=index)

    async with make_syphon(world) as syphon:
        assert await syphon.list_backlog_queues() == [*contract.backlog_queue_names("contoso-primary", 3), extra]
        stats = await syphon.drain()

    assert bodies(orders) == [b"from-0", b"from-1", b"from-2", b"from-7"]
    assert stats.moved == 4
    assert stats.backlog_depth == {name: 0 for name in [*contract.backlog_queue_names("contoso-primary", 3), extra]}


async def test_backlog_queues_of_another_primary_are_left_alone(world: ServiceBusWorld) -> None:
    create_backlog_queues(world, 1)
    create_backlog_queues(world, 1, prefix="other-primary")
    world.namespace(SECONDARY).create_queue("orders")  # an ordinary queue in the secondary
    orders = world.namespace(PRIMARY).create_queue("orders")
    await park("orders", ServiceBusMessage(b"mine"))
    await park("orders", ServiceBusMessage(b"theirs"), prefix="other-primary")

    async with make_syphon(world) as syphon:
        await syphon.drain()

    assert bodies(orders) == [b"mine"]
    assert backlog_depth(world, "other-primary") == 1


async def test_drain_of_empty_backlog_returns_zero_stats(world: ServiceBusWorld) -> None:
    create_backlog_queues(world, 2)
    async with make_syphon(world) as syphon:
        stats = await syphon.drain()
    assert (stats.moved, stats.dead_lettered, stats.dropped_pings) == (0, 0, 0)


async def test_drain_keeps_in_flight_within_its_bound(world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    create_backlog_queues(world, 3)
    orders = world.namespace(PRIMARY).create_queue("orders")
    for index in range(3):
        await park("orders", *(ServiceBusMessage(f"{index}-{i}") for i in range(40)), backlog=index)
    seen: list[int] = []
    real_send = aio_client.ServiceBusSender.send_messages

    async def watched_send(self: Any, message: Any, **kwargs: Any) -> None:
        seen.append(syphon.in_flight)
        await real_send(self, message, **kwargs)

    monkeypatch.setattr(aio_client.ServiceBusSender, "send_messages", watched_send)

    async with make_syphon(world, max_in_flight=7, receive_batch_size=5) as syphon:
        stats = await syphon.drain()

    assert stats.moved == 120
    assert len(orders.active_messages()) == 120
    assert seen and max(seen) <= 7


async def test_run_moves_messages_and_stops_gracefully_with_nothing_unsettled(world: ServiceBusWorld) -> None:
    create_backlog_queues(world, 2)
    orders = world.namespace(PRIMARY).create_queue("orders")
    stop = asyncio.Event()

    async with make_syphon(world) as syphon:
        running = asyncio.create_task(syphon.run(stop))
        await park("orders", ServiceBusMessage(b"a"), backlog=0)
        await park("orders", ServiceBusMessage(b"b"), backlog=1)
        await eventually(lambda: syphon.stats.moved == 2)
        stop.set()
        await asyncio.wait_for(running, guard(10))
        assert syphon.in_flight == 0

    assert bodies(orders) == [b"a", b"b"]
    assert backlog_depth(world) == 0


async def test_run_finishes_a_send_in_flight_before_returning_on_stop(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_backlog_queues(world, 1)
    orders = world.namespace(PRIMARY).create_queue("orders")
    release = asyncio.Event()
    sending = asyncio.Event()
    real_send = aio_client.ServiceBusSender.send_messages

    async def slow_send(self: Any, message: Any, **kwargs: Any) -> None:
        if self.fully_qualified_namespace == PRIMARY:
            sending.set()
            await release.wait()
        await real_send(self, message, **kwargs)

    monkeypatch.setattr(aio_client.ServiceBusSender, "send_messages", slow_send)
    stop = asyncio.Event()

    async with make_syphon(world) as syphon:
        running = asyncio.create_task(syphon.run(stop))
        await park("orders", ServiceBusMessage(b"in flight"))
        await asyncio.wait_for(sending.wait(), guard(10))
        stop.set()
        for _ in range(20):
            await asyncio.sleep(0)
        assert not running.done()  # it waits for the send it started
        release.set()
        await asyncio.wait_for(running, guard(10))
        assert syphon.stats.moved == 1

    assert bodies(orders) == [b"in flight"]
    assert backlog_depth(world) == 0


async def test_run_serves_a_backlog_queue_created_after_it_started(world: ServiceBusWorld) -> None:
    create_backlog_queues(world, 1)
    orders = world.namespace(PRIMARY).create_queue("orders")
    stop = asyncio.Event()

    async with make_syphon(world) as syphon:
        running = asyncio.create_task(syphon.run(stop))
        await eventually(lambda: len(syphon.stats.backlog_depth) == 1)
        late = contract.backlog_queue_name("contoso-primary", 5)
        world.namespace(SECONDARY).create_queue(late, **backlog_settings())
        await park("orders", ServiceBusMessage(b"late"), backlog=5)
        await eventually(lambda: syphon.stats.moved == 1)
        stop.set()
        await asyncio.wait_for(running, guard(10))

    assert bodies(orders) == [b"late"]


async def test_run_uses_the_long_poll_on_every_backlog_queue(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_backlog_queues(world, 2)
    waits: list[float | None] = []
    real_receive = aio_client.ServiceBusReceiver.receive_messages

    async def recording_receive(
        self: Any, max_message_count: int | None = 1, max_wait_time: float | None = None
    ) -> Any:
        waits.append(max_wait_time)
        return await real_receive(self, max_message_count, max_wait_time)

    monkeypatch.setattr(aio_client.ServiceBusReceiver, "receive_messages", recording_receive)
    stop = asyncio.Event()

    async with make_syphon(world) as syphon:
        running = asyncio.create_task(syphon.run(stop))
        await eventually(lambda: len(waits) == 2)
        stop.set()
        await asyncio.wait_for(running, guard(10))

    assert waits == [contract.SYPHON_LONG_POLL.total_seconds()] * 2


async def test_stats_are_a_snapshot(world: ServiceBusWorld) -> None:
    create_backlog_queues(world, 1)
    world.namespace(PRIMARY).create_queue("orders")
    await park("orders", ServiceBusMessage(b"x"))
    async with make_syphon(world) as syphon:
        before = syphon.stats
        await syphon.drain()
        assert (before.moved, syphon.stats.moved) == (0, 1)


async def test_backlog_receive_failures_are_retried_and_nothing_is_skipped(world: ServiceBusWorld) -> None:
    from azure.servicebus.exceptions import ServiceBusServerBusyError

    names = create_backlog_queues(world, 2)
    orders = world.namespace(PRIMARY).create_queue("orders")
    await park("orders", *(ServiceBusMessage(f"m{i}") for i in range(10)), backlog=0)
    world.fail(SECONDARY, names[0], ServiceBusServerBusyError, times=3)

    async with make_syphon(world) as syphon:
        stats = await syphon.drain()

    assert stats.moved == 10
    assert len(orders.active_messages()) == 10
    assert stats.errors["ServiceBusServerBusyError"] == 3


async def test_a_backlog_queue_refusing_the_credential_as_the_sdk_raises_it_is_retried(world: ServiceBusWorld) -> None:
    # The SDK's transport raises it not retryable (the class alone says retryable): the pump used to
    # raise it and stop the syphon, where the refusal of a role assignment still propagating passes.
    refused = sdk.error_for_condition("amqp:unauthorized-access", "Unauthorized access. 'Listen' claim(s) are required")
    names = create_backlog_queues(world, 2)
    orders = world.namespace(PRIMARY).create_queue("orders")
    await park("orders", *(ServiceBusMessage(f"m{i}") for i in range(10)), backlog=0)
    world.fail(SECONDARY, names[0], refused, times=3)

    async with make_syphon(world) as syphon:
        stats = await syphon.drain()

    assert stats.moved == 10
    assert len(orders.active_messages()) == 10
    assert stats.errors["ServiceBusAuthorizationError"] == 3


async def test_idle_long_polls_do_not_starve_other_backlog_queues_of_in_flight_slots(world: ServiceBusWorld) -> None:
    names = create_backlog_queues(world, 10)
    orders = world.namespace(PRIMARY).create_queue("orders")
    stop = asyncio.Event()

    async with make_syphon(world, max_in_flight=20, receive_batch_size=250) as syphon:
        running = asyncio.create_task(syphon.run(stop))
        await eventually(lambda: world.operations.get("receive", 0) >= len(names))  # every queue polled
        await park("orders", ServiceBusMessage(b"last queue"), backlog=9)
        await eventually(lambda: syphon.stats.moved == 1)
        stop.set()
        await asyncio.wait_for(running, guard(10))

    assert bodies(orders) == [b"last queue"]


async def test_a_failed_listing_is_retried_with_back_off_not_after_the_relist_interval(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    from azure.servicebus.exceptions import ServiceBusConnectionError

    create_backlog_queues(world, 1)
    orders = world.namespace(PRIMARY).create_queue("orders")
    await park("orders", ServiceBusMessage(b"parked"))
    stop = asyncio.Event()

    async with make_syphon(world, relist_interval=timedelta(hours=1)) as syphon:
        real_list = syphon.list_backlog_queues
        calls = 0

        async def flaky_list() -> list[str]:
            nonlocal calls
            calls += 1
            if calls == 1:
                raise ServiceBusConnectionError(message="transient")
            return await real_list()

        monkeypatch.setattr(syphon, "list_backlog_queues", flaky_list)
        running = asyncio.create_task(syphon.run(stop))
        await eventually(lambda: syphon.stats.moved == 1)  # would take an hour without the retry
        stop.set()
        await asyncio.wait_for(running, guard(10))

    assert calls == 2
    assert bodies(orders) == [b"parked"]


async def test_two_syphons_compete_on_one_backlog_with_nothing_lost_and_nothing_doubled(world: ServiceBusWorld) -> None:
    # Several replicas (KEDA scaling out) share the backlog through peek-lock: each message is
    # locked by one of them, moved once, and completed. No duplicate detection on the destination,
    # so a double move would show.
    create_backlog_queues(world, 1)
    orders = world.namespace(PRIMARY).create_queue("orders")
    world.latency = 0.001  # every operation yields, so the two interleave
    sent = [f"m-{i}" for i in range(600)]
    await park("orders", *(ServiceBusMessage(b"x", message_id=m) for m in sent), backlog=0)
    stop = asyncio.Event()
    async with make_syphon(world, receive_batch_size=7) as first, make_syphon(world, receive_batch_size=7) as second:
        runs = [asyncio.create_task(s.run(stop)) for s in (first, second)]
        await eventually(lambda: first.stats.moved + second.stats.moved >= len(sent))
        stop.set()
        await asyncio.wait_for(asyncio.gather(*runs), guard(10))
        assert first.stats.moved > 0 and second.stats.moved > 0  # both took part
        assert first.stats.moved + second.stats.moved == len(sent)
    delivered = [m.message_id for m in orders.active_messages()]
    assert sorted(delivered) == sorted(sent)  # 0 lost, 0 duplicated
    assert backlog_depth(world) == 0


async def test_two_syphons_losing_locks_after_their_sends_still_deliver_each_message_once(
    world: ServiceBusWorld,
) -> None:
    # The second path to a copy (paired-namespaces.md, "Duplicates"): a lock lost after the send
    # and before the complete. The destination's duplicate detection keeps one copy.
    [backlog] = create_backlog_queues(world, 1)
    orders = world.namespace(PRIMARY).create_queue("orders", requires_duplicate_detection=True)
    world.latency = 0.001
    sent = [f"m-{i}" for i in range(300)]
    await park("orders", *(ServiceBusMessage(b"x", message_id=m) for m in sent), backlog=0)
    world.late_lock_loss(SECONDARY, backlog, times=25)
    stop = asyncio.Event()
    async with make_syphon(world, receive_batch_size=7) as first, make_syphon(world, receive_batch_size=7) as second:
        runs = [asyncio.create_task(s.run(stop)) for s in (first, second)]
        await eventually(lambda: backlog_depth(world) == 0 and first.in_flight + second.in_flight == 0)
        stop.set()
        await asyncio.wait_for(asyncio.gather(*runs), guard(10))
    assert sorted(m.message_id for m in orders.active_messages()) == sorted(sent)  # 0 lost, 0 duplicated
    assert orders.counts.duplicates_dropped == 25


async def test_a_drain_that_saw_every_queue_empty_itself_lists_them_once(world: ServiceBusWorld, mocker) -> None:
    from pairedbus.syphon import backlog_directory

    names = create_backlog_queues(world, 2)
    orders = world.namespace(PRIMARY).create_queue("orders")
    await park("orders", *(ServiceBusMessage(f"m{i}") for i in range(30)), backlog=1)
    listing = mocker.spy(backlog_directory.DataPlaneDirectory, "list_queues")

    async with make_syphon(world) as syphon:
        stats = await syphon.drain()

    # Every listed message received and completed, then each queue found empty: no second listing.
    assert listing.call_count == 1
    assert stats.moved == 30 and len(orders.active_messages()) == 30
    assert stats.backlog_depth == {names[0]: 0, names[1]: 0}


async def test_a_listed_message_held_by_another_receiver_keeps_the_drain_listing_until_it_is_moved(
    world: ServiceBusWorld,
) -> None:
    import azure.servicebus.aio as servicebus_aio

    names = create_backlog_queues(world, 1)
    orders = world.namespace(PRIMARY).create_queue("orders")
    await park("orders", *(ServiceBusMessage(f"m{i}") for i in range(3)))
    async with servicebus_aio.ServiceBusClient(SECONDARY, object()) as other:
        async with other.get_queue_receiver(names[0]) as elsewhere:
            (held,) = await elsewhere.receive_messages(max_message_count=1, max_wait_time=1)
            async with make_syphon(world) as syphon:
                drain = asyncio.create_task(syphon.drain())
                await eventually(lambda: syphon.stats.moved == 2)
                for _ in range(20):  # several drain rounds: each lists the queue again and finds it held
                    await asyncio.sleep(0.01)
                assert not drain.done()
                await elsewhere.abandon_message(held)
                stats = await asyncio.wait_for(drain, guard(10))

    assert stats.moved == 3 and len(orders.active_messages()) == 3
    assert stats.backlog_depth == {names[0]: 0}


async def test_destinations_listed_up_front_are_not_read_one_by_one_before_their_first_send(
    world: ServiceBusWorld, mocker
) -> None:
    from azure.servicebus.aio.management import ServiceBusAdministrationClient

    create_backlog_queues(world, 1)
    keyed = world.namespace(PRIMARY).create_queue("keyed", enable_partitioning=True, requires_duplicate_detection=True)
    plain = world.namespace(PRIMARY).create_queue("plain")
    await park("keyed", *(ServiceBusMessage(b"k", message_id=f"k-{i}") for i in range(10)))
    await park("plain", *(ServiceBusMessage(b"p", message_id=f"p-{i}") for i in range(10)))
    read_one = mocker.spy(ServiceBusAdministrationClient, "get_queue")
    sent = mocker.spy(aio_client.ServiceBusSender, "send_messages")

    async with make_syphon(world) as syphon:
        stats = await syphon.drain()

    assert read_one.call_count == 0  # both were known from the primary's listing
    assert stats.moved == 20 and len(keyed.active_messages()) == len(plain.active_messages()) == 10
    # The partitioned destination with duplicate detection got batches of one message id each (the
    # listing said so): 10 sends for it; the plain one: one send of all ten; no send was refused.
    assert sent.call_count == 11
    assert sum(stats.errors.values()) == 0


async def test_a_failed_listing_of_the_primary_leaves_each_destination_read_on_its_first_send(
    world: ServiceBusWorld, mocker
) -> None:
    from azure.core.exceptions import HttpResponseError
    from azure.servicebus.aio.management import ServiceBusAdministrationClient

    create_backlog_queues(world, 1)
    keyed = world.namespace(PRIMARY).create_queue("keyed", enable_partitioning=True, requires_duplicate_detection=True)
    await park("keyed", *(ServiceBusMessage(b"k", message_id=f"k-{i}") for i in range(10)))

    def refused(self: Any, **kwargs: Any) -> Any:
        raise HttpResponseError(message="Unauthorized")

    mocker.patch.object(ServiceBusAdministrationClient, "list_queues", refused)
    read_one = mocker.spy(ServiceBusAdministrationClient, "get_queue")

    async with make_syphon(world) as syphon:
        stats = await syphon.drain()

    assert read_one.call_count == 1
    assert stats.moved == 10 and len(keyed.active_messages()) == 10
    assert sum(stats.errors.values()) == 0  # its batches were keyed by message id from the start


class _ListingGate:
    """Holds the backlog listing until `release()`, and records every backlog receiver's open and receive
    (the fake's receiver), each with whether the listing had returned by then."""

    def __init__(self, mocker: Any) -> None:
        from pairedbus.syphon import backlog_directory
        from pairedbus.testing import receiver

        self.released = asyncio.Event()
        self.returned = False
        self.opened: list[tuple[str, int, bool]] = []
        self.received: list[tuple[str, int, bool]] = []
        list_queues = backlog_directory.DataPlaneDirectory.list_queues
        open_link = receiver.ServiceBusReceiver._open
        receive = receiver.ServiceBusReceiver.receive_messages
        gate = self

        async def held_listing(directory: Any) -> Any:
            await gate.released.wait()
            listed = await list_queues(directory)
            gate.returned = True
            return listed

        async def recorded_open(handler: Any) -> None:
            if not handler._opened:
                gate.opened.append((handler.entity_name, id(handler), gate.returned))
            await open_link(handler)

        async def recorded_receive(handler: Any, *args: Any, **kwargs: Any) -> Any:
            gate.received.append((handler.entity_name, id(handler), gate.returned))
            return await receive(handler, *args, **kwargs)

        mocker.patch.object(backlog_directory.DataPlaneDirectory, "list_queues", held_listing)
        mocker.patch.object(receiver.ServiceBusReceiver, "_open", recorded_open)
        mocker.patch.object(receiver.ServiceBusReceiver, "receive_messages", recorded_receive)

    def release(self) -> None:
        self.released.set()


async def test_given_the_backlog_queue_count_drain_opens_the_named_receivers_before_the_listing_returns(
    world: ServiceBusWorld, mocker
) -> None:
    names = create_backlog_queues(world, 3)
    orders = world.namespace(PRIMARY).create_queue("orders")
    for index in range(3):
        await park("orders", *(ServiceBusMessage(f"{index}-{i}") for i in range(20)), backlog=index)
    gate = _ListingGate(mocker)

    async with make_syphon(world, backlog_queue_count=3, receivers_per_queue=1) as syphon:
        drain = asyncio.create_task(syphon.drain())
        await eventually(lambda: {name for name, _, _ in gate.opened} == set(names))
        assert not gate.returned and not gate.received  # opened while the listing ran; no receive sized blind
        gate.release()
        stats = await asyncio.wait_for(drain, guard(10))

    # Each queue's first receive came on the receiver opened ahead: no open after the listing.
    ahead = {receiver for _, receiver, returned in gate.opened if not returned}
    assert [returned for _, _, returned in gate.opened] == [False, False, False]
    assert {name for name, receiver, _ in gate.received if receiver in ahead} == set(names)
    assert stats.moved == 60 and len(orders.active_messages()) == 60
    assert sum(stats.errors.values()) == 0


async def test_receivers_opened_ahead_are_as_many_as_the_pumps_receives_warrant_when_every_named_queue_has_work(
    world: ServiceBusWorld, mocker
) -> None:
    names = create_backlog_queues(world, 10)
    orders = world.namespace(PRIMARY).create_queue("orders")
    for index in range(10):
        await park("orders", ServiceBusMessage(f"m{index}"), backlog=index)
    gate = _ListingGate(mocker)

    # 2,000 in flight over 10 busy queues: receives of 200 (a pump's share, not receive_batch_size's 500), so
    # one receiver each fills the budget (on the code before, 4 receivers of 50 each: 40 connections over the wire).
    async with make_syphon(world, backlog_queue_count=10, max_in_flight=2_000, receive_batch_size=500) as syphon:
        drain = asyncio.create_task(syphon.drain())
        await eventually(lambda: len(gate.opened) == 10)
        gate.release()
        stats = await asyncio.wait_for(drain, guard(10))

    assert sorted(name for name, _, returned in gate.opened if not returned) == sorted(names)
    assert stats.moved == 10 and len(orders.active_messages()) == 10


async def test_without_the_count_drain_opens_no_receiver_before_the_listing_returns(
    world: ServiceBusWorld, mocker
) -> None:
    create_backlog_queues(world, 2)
    orders = world.namespace(PRIMARY).create_queue("orders")
    await park("orders", *(ServiceBusMessage(f"m{i}") for i in range(5)))
    gate = _ListingGate(mocker)

    async with make_syphon(world) as syphon:
        drain = asyncio.create_task(syphon.drain())
        for _ in range(20):
            await asyncio.sleep(0.005)
        assert not gate.opened  # it knows no names before the listing
        gate.release()
        stats = await asyncio.wait_for(drain, guard(10))

    assert all(returned for _, _, returned in gate.opened)
    assert stats.moved == 5 and len(orders.active_messages()) == 5


async def test_a_named_backlog_queue_that_does_not_exist_is_not_served_and_is_no_error(
    world: ServiceBusWorld, mocker, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    from pairedbus.syphon import backlog_directory

    caplog.set_level(logging.INFO, logger="pairedbus.syphon")

    names = contract.backlog_queue_names("contoso-primary", 3)
    extra = contract.backlog_queue_name("contoso-primary", 7)
    for name in (names[0], names[2], extra):  # index 1 is missing (drift), 7 is an extra one
        world.namespace(SECONDARY).create_queue(name, **backlog_settings())
    orders = world.namespace(PRIMARY).create_queue("orders")
    for index in (0, 2, 7):
        await park("orders", *(ServiceBusMessage(f"{index}-{i}") for i in range(10)), backlog=index)
    gate = _ListingGate(mocker)
    gate.release()
    listing = mocker.spy(backlog_directory.DataPlaneDirectory, "list_queues")

    async with make_syphon(world, backlog_queue_count=3, receivers_per_queue=2) as syphon:
        stats = await asyncio.wait_for(syphon.drain(), guard(10))

    assert stats.moved == 30 and len(orders.active_messages()) == 30
    assert stats.errors == {}  # the missing queue's failed open is not the syphon's error
    assert listing.call_count == 1  # nor does it keep the drain listing: the round saw every listed queue empty
    assert stats.backlog_depth == {names[0]: 0, names[2]: 0, extra: 0}
    # The opens made ahead on the missing queue were tried once each (2 per named queue: the most per queue
    # here), and nothing else: no receive, no retry.
    assert [name for name, _, _ in gate.opened].count(names[1]) == 2
    assert names[1] not in {name for name, _, _ in gate.received}
    (drift,) = [r for r in caplog.records if "below the configured count" in r.getMessage()]
    assert (drift.missing, drift.backlog_queues) == (1, [names[1]])  # type: ignore[attr-defined]


async def test_a_complete_the_broker_applied_whose_answer_was_lost_counts_as_moved(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three completes are applied by the broker but their answers lost (the SDK times out): the
    messages are gone from the backlog, moved home; each is counted once, as moved (before: 7 of 10)."""
    from azure.servicebus.exceptions import OperationTimeoutError

    from pairedbus.testing.receiver import ServiceBusReceiver

    create_backlog_queues(world, 1)
    orders = world.namespace(PRIMARY).create_queue("orders", requires_duplicate_detection=True)
    await park("orders", *(ServiceBusMessage(b"x", message_id=f"m{i}") for i in range(10)))
    real_complete = ServiceBusReceiver.complete_message
    lost = [3]

    async def answer_lost(self: Any, message: Any) -> None:
        await real_complete(self, message)
        if lost[0]:
            lost[0] -= 1
            raise OperationTimeoutError(message="the complete's answer did not come")

    monkeypatch.setattr(ServiceBusReceiver, "complete_message", answer_lost)
    async with make_syphon(world) as syphon:
        stats = await asyncio.wait_for(syphon.drain(), guard(30))
    assert lost == [0]
    assert len(orders.active_messages()) == 10 and backlog_depth(world) == 0
    assert stats.moved == 10
