"""Per-message behaviour of the syphon's pump, on the Service Bus fake."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.exceptions import MessageLockLostError, ServiceBusServerBusyError

from pairedbus import contract, sdk
from pairedbus.pairing.aliasing import DEAD_LETTER_MALFORMED_ALIAS, DEAD_LETTER_MISSING_PATH
from pairedbus.pairing.ping import ping_message
from pairedbus.servicebus.world import ServiceBusWorld
from pairedbus.syphon.pump import DEAD_LETTER_DESTINATION_NOT_FOUND, DEAD_LETTER_MESSAGE_SIZE_EXCEEDED
from pairedbus.testing import aio_client
from tests.load import guard

from .helpers import (
    PRIMARY,
    SECONDARY,
    FastForward,
    backlog_depth,
    create_backlog_queues,
    eventually,
    make_syphon,
    park,
    send_raw,
)


def primary_queue(world: ServiceBusWorld, name: str, **settings: Any) -> Any:
    return world.namespace(PRIMARY).create_queue(name, **settings)


def backlog(world: ServiceBusWorld, index: int = 0) -> Any:
    return world.namespace(SECONDARY).queue(contract.backlog_queue_name("contoso-primary", index))


async def test_moved_message_arrives_with_every_property_restored(world: ServiceBusWorld) -> None:
    create_backlog_queues(world)
    orders = primary_queue(world, "orders", requires_session=True)
    message = ServiceBusMessage(
        b'{"order": 42}',
        application_properties={"tenant": "contoso", "attempt": 3, "urgent": True},
        session_id="customer-7",
        partition_key="customer-7",
        message_id="order-42",
        content_type="application/json",
        correlation_id="corr-1",
        subject="order.created",
        to="billing",
        reply_to="replies",
        reply_to_session_id="reply-7",
        time_to_live=timedelta(hours=1),
    )
    await park("orders", message)

    async with make_syphon(world) as syphon:
        stats = await syphon.drain()

    assert stats.moved == 1
    (arrived,) = orders.active_messages()
    assert b"".join(arrived.body) == b'{"order": 42}'
    assert arrived.application_properties == {b"tenant": b"contoso", b"attempt": 3, b"urgent": True}
    assert (arrived.session_id, arrived.partition_key, arrived.message_id) == ("customer-7", "customer-7", "order-42")
    assert (arrived.content_type, arrived.correlation_id, arrived.subject) == (
        "application/json",
        "corr-1",
        "order.created",
    )
    assert (arrived.to, arrived.reply_to, arrived.reply_to_session_id) == ("billing", "replies", "reply-7")
    assert timedelta(minutes=59) < arrived.time_to_live <= timedelta(hours=1)
    assert backlog_depth(world) == 0


async def test_restored_time_to_live_is_what_the_backlog_left(world: ServiceBusWorld) -> None:
    create_backlog_queues(world)
    orders = primary_queue(world, "orders")
    await park("orders", ServiceBusMessage(b"x", time_to_live=timedelta(seconds=60)))

    async with make_syphon(world, clock=lambda: world.clock.now() + timedelta(seconds=20)) as syphon:
        await syphon.drain()

    (arrived,) = orders.active_messages()
    assert timedelta(seconds=39) < arrived.time_to_live <= timedelta(seconds=40)


async def test_scheduled_message_is_scheduled_at_its_destination(world: ServiceBusWorld) -> None:
    create_backlog_queues(world)
    orders = primary_queue(world, "orders")
    when = (world.clock.now() + timedelta(hours=2)).replace(microsecond=0)
    await park("orders", ServiceBusMessage(b"later", scheduled_enqueue_time_utc=when))

    async with make_syphon(world) as syphon:
        await syphon.drain()

    assert orders.active_messages() == []
    (scheduled,) = orders.scheduled_messages()
    assert scheduled.scheduled_enqueue_time_utc == when


async def test_topic_destination_reaches_its_subscriptions(world: ServiceBusWorld) -> None:
    create_backlog_queues(world)
    ns = world.namespace(PRIMARY)
    ns.create_topic("events")
    audit = ns.create_subscription("events", "audit")
    await park("events", ServiceBusMessage(b"e1"), ServiceBusMessage(b"e2"))

    async with make_syphon(world) as syphon:
        stats = await syphon.drain()

    assert stats.moved == 2
    assert sorted(b"".join(m.body) for m in audit.active_messages()) == [b"e1", b"e2"]


async def test_pings_are_completed_and_never_forwarded(world: ServiceBusWorld) -> None:
    create_backlog_queues(world)
    orders = primary_queue(world, "orders")
    ping = ServiceBusMessage(None, content_type=contract.PING_CONTENT_TYPE)
    await park("orders", ping, ServiceBusMessage(b"real"))

    async with make_syphon(world) as syphon:
        stats = await syphon.drain()

    assert (stats.dropped_pings, stats.moved) == (1, 1)
    assert [b"".join(m.body) for m in orders.active_messages()] == [b"real"]
    assert backlog(world).dead_letters() == []
    assert backlog_depth(world) == 0


async def test_a_ping_that_cannot_be_restored_is_dropped_not_dead_lettered(world: ServiceBusWorld) -> None:
    names = create_backlog_queues(world)
    orders = primary_queue(world, "orders")
    # One straight into the backlog queue (no destination alias), one parked whose 1 s ran out there.
    await send_raw(names[0], ServiceBusMessage(None, content_type=contract.PING_CONTENT_TYPE))
    await park("orders", ping_message(session=False), ServiceBusMessage(b"real"))

    async with make_syphon(world, clock=lambda: world.clock.now() + timedelta(minutes=5)) as syphon:
        stats = await syphon.drain()

    assert (stats.dropped_pings, stats.moved, stats.dead_lettered) == (2, 1, 0)
    assert [b"".join(m.body) for m in orders.active_messages()] == [b"real"]
    assert backlog(world).dead_letters() == []
    assert backlog_depth(world) == 0


async def test_time_to_live_spent_in_the_backlog_is_dead_lettered_there(world: ServiceBusWorld) -> None:
    create_backlog_queues(world)
    orders = primary_queue(world, "orders")
    await park("orders", ServiceBusMessage(b"stale", time_to_live=timedelta(seconds=30)))

    async with make_syphon(world, clock=lambda: world.clock.now() + timedelta(minutes=5)) as syphon:
        stats = await syphon.drain()

    assert orders.active_messages() == []
    (dead,) = backlog(world).dead_letters()
    assert dead.dead_letter_reason == contract.DEAD_LETTER_TTL_EXPIRED_IN_BACKLOG
    assert stats.dead_letter_reasons == {contract.DEAD_LETTER_TTL_EXPIRED_IN_BACKLOG: 1}


@pytest.mark.parametrize(
    ("properties", "reason"),
    [
        ({"tenant": "contoso"}, DEAD_LETTER_MISSING_PATH),
        ({contract.ALIAS_PATH: "orders", contract.ALIAS_TIME_TO_LIVE: "soon"}, DEAD_LETTER_MALFORMED_ALIAS),
    ],
)
async def test_unrestorable_backlog_message_is_dead_lettered_with_its_reason(
    world: ServiceBusWorld, properties: dict[str, Any], reason: str
) -> None:
    create_backlog_queues(world)
    orders = primary_queue(world, "orders")
    await send_raw(
        contract.backlog_queue_name("contoso-primary", 0), ServiceBusMessage(b"?", application_properties=properties)
    )

    async with make_syphon(world) as syphon:
        stats = await syphon.drain()

    (dead,) = backlog(world).dead_letters()
    assert dead.dead_letter_reason == reason
    assert dead.dead_letter_error_description
    assert orders.active_messages() == []
    assert (stats.dead_lettered, stats.moved) == (1, 0)


async def test_unknown_destination_is_dead_lettered_and_the_rest_still_moves(world: ServiceBusWorld) -> None:
    create_backlog_queues(world)
    orders = primary_queue(world, "orders")
    await park("no-such-queue", ServiceBusMessage(b"lost"))
    await park("orders", ServiceBusMessage(b"fine"))

    async with make_syphon(world) as syphon:
        stats = await syphon.drain()

    (dead,) = backlog(world).dead_letters()
    assert dead.dead_letter_reason == DEAD_LETTER_DESTINATION_NOT_FOUND
    assert "no-such-queue" in dead.dead_letter_error_description
    assert [b"".join(m.body) for m in orders.active_messages()] == [b"fine"]
    assert stats.moved == 1


async def test_message_too_large_for_the_primary_is_dead_lettered(world: ServiceBusWorld) -> None:
    # A Premium secondary takes 1 MB messages; the Standard primary only 256 KB.
    world.namespace(SECONDARY, sku=contract.SKU_PREMIUM)
    create_backlog_queues(world)
    orders = primary_queue(world, "orders")
    await park(
        "orders", ServiceBusMessage(b"x" * (contract.MAX_MESSAGE_SIZE_BYTES + 1024)), ServiceBusMessage(b"small")
    )

    async with make_syphon(world) as syphon:
        stats = await syphon.drain()

    (dead,) = backlog(world).dead_letters()
    assert dead.dead_letter_reason == DEAD_LETTER_MESSAGE_SIZE_EXCEEDED
    assert [b"".join(m.body) for m in orders.active_messages()] == [b"small"]
    assert stats.moved == 1


async def test_messages_for_one_destination_are_sent_in_batches(world: ServiceBusWorld) -> None:
    create_backlog_queues(world, 1)
    orders = primary_queue(world, "orders")
    await park("orders", *(ServiceBusMessage(f"m{i}") for i in range(200)))
    sends_before = world.operations.get("send", 0)

    async with make_syphon(world) as syphon:
        stats = await syphon.drain()

    assert stats.moved == 200
    assert [b"".join(m.body) for m in orders.active_messages()] == [f"m{i}".encode() for i in range(200)]
    assert world.operations["send"] - sends_before <= 4


async def test_a_busy_queue_gets_more_receivers_and_every_message_moves_once(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_backlog_queues(world, 1)
    orders = primary_queue(world, "orders")
    await park("orders", *(ServiceBusMessage(f"m{i}", message_id=f"id-{i}") for i in range(600)))
    world.latency = 0.002  # receives overlap only when they take time
    receiving, most = 0, 0
    receive = aio_client.ServiceBusReceiver.receive_messages

    async def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal receiving, most
        receiving += 1
        most = max(most, receiving)
        try:
            return await receive(self, *args, **kwargs)
        finally:
            receiving -= 1

    monkeypatch.setattr(aio_client.ServiceBusReceiver, "receive_messages", counted)

    async with make_syphon(world, receive_batch_size=50, receivers_per_queue=3) as syphon:
        stats = await syphon.drain()

    assert 2 <= most <= 3  # the busy queue was served by several receivers, never more than allowed
    assert stats.moved == 600
    assert sorted(m.message_id for m in orders.active_messages()) == sorted(f"id-{i}" for i in range(600))
    assert backlog_depth(world) == 0
    assert receiving == 0


async def test_every_receiver_is_opened_before_its_first_receive(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK bounds a receiver's link open by its first receive's wait (7.15.0; a receive whose
    open used the wait up returns nothing): a drain's short wait then timed out opening, or came
    back empty from a queue with messages, and a 10-queue drain over the wire stalled. The pump
    opens each receiver first (bounded by the operation timeout): no receive meets an unopened one."""
    create_backlog_queues(world, 3)
    primary_queue(world, "orders")
    for q in range(3):
        await park("orders", *(ServiceBusMessage(f"m{q}-{i}") for i in range(100)), backlog=q)
    world.latency = 0.002
    unopened: list[bool] = []
    receive = aio_client.ServiceBusReceiver.receive_messages

    async def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
        unopened.append(not self._opened)
        return await receive(self, *args, **kwargs)

    monkeypatch.setattr(aio_client.ServiceBusReceiver, "receive_messages", checked)

    async with make_syphon(world, receive_batch_size=50) as syphon:  # no queue count: no warm receivers
        stats = await syphon.drain()

    assert stats.moved == 300
    assert unopened and not any(unopened)


async def test_one_receiver_per_queue_when_asked(world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    create_backlog_queues(world, 1)
    primary_queue(world, "orders")
    await park("orders", *(ServiceBusMessage(f"m{i}") for i in range(300)))
    world.latency = 0.002
    opened: list[str] = []
    get_receiver = aio_client.ServiceBusClient.get_queue_receiver

    def counted(self: Any, queue_name: str, **kwargs: Any) -> Any:
        opened.append(queue_name)
        return get_receiver(self, queue_name, **kwargs)

    monkeypatch.setattr(aio_client.ServiceBusClient, "get_queue_receiver", counted)

    async with make_syphon(world, receive_batch_size=50, receivers_per_queue=1) as syphon:
        stats = await syphon.drain()

    assert stats.moved == 300
    assert len(opened) == 1


async def test_messages_of_different_sessions_are_batched_apart(world: ServiceBusWorld) -> None:
    create_backlog_queues(world, 1)
    orders = primary_queue(world, "orders", requires_session=True)
    await park("orders", *(ServiceBusMessage(f"m{i}", session_id=f"s{i % 3}") for i in range(30)))

    async with make_syphon(world) as syphon:
        stats = await syphon.drain()

    assert stats.moved == 30
    bodies = {s: [b"".join(m.body) for m in orders.active_messages() if m.session_id == s] for s in ("s0", "s1", "s2")}
    assert bodies["s1"] == [f"m{i}".encode() for i in range(1, 30, 3)]


async def test_destination_outage_loses_nothing_and_moves_once_healed(world: ServiceBusWorld) -> None:
    create_backlog_queues(world, 2)
    orders = primary_queue(world, "orders")
    invoices = primary_queue(world, "invoices")
    world.fail(PRIMARY, "orders", ServiceBusServerBusyError)
    await park("orders", *(ServiceBusMessage(f"o{i}") for i in range(20)), backlog=0)
    await park("invoices", *(ServiceBusMessage(f"i{i}") for i in range(20)), backlog=1)

    async with make_syphon(world) as syphon, FastForward(world):
        drain = asyncio.create_task(syphon.drain())
        # The healthy destination is served while the other one is down.
        await eventually(lambda: len(invoices.active_messages()) == 20)
        await eventually(lambda: syphon.stats.left_locked >= 20)
        assert orders.active_messages() == []
        assert backlog(world, 0).message_counts()["active"] == 20
        assert not drain.done()

        world.heal(PRIMARY, "orders")
        stats = await asyncio.wait_for(drain, guard(30))

    assert sorted(b"".join(m.body) for m in orders.active_messages()) == sorted(f"o{i}".encode() for i in range(20))
    assert stats.moved == 40
    assert stats.dead_lettered == 0
    assert stats.errors["ServiceBusServerBusyError"] >= 1
    assert backlog_depth(world) == 0


async def test_a_destination_refusing_the_credential_as_the_sdk_raises_it_is_waited_out_not_dead_lettered(
    world: ServiceBusWorld,
) -> None:
    # The SDK's transport raises it not retryable (the class alone says retryable): read as the
    # primary's refusal of the messages, it dead-lettered every one of them (SendRejected).
    refused = sdk.error_for_condition("amqp:unauthorized-access", "Unauthorized access. 'Send' claim(s) are required")
    create_backlog_queues(world, 1)
    orders = primary_queue(world, "orders")
    world.fail(PRIMARY, "orders", refused)
    await park("orders", *(ServiceBusMessage(f"o{i}") for i in range(5)), backlog=0)

    async with make_syphon(world) as syphon, FastForward(world):
        drain = asyncio.create_task(syphon.drain())
        await eventually(lambda: syphon.stats.errors.get("ServiceBusAuthorizationError", 0) >= 2)
        assert syphon.stats.dead_lettered == 0 and not drain.done()
        world.heal(PRIMARY, "orders")
        stats = await asyncio.wait_for(drain, guard(30))

    assert stats.moved == 5 and stats.dead_lettered == 0
    assert sorted(b"".join(m.body) for m in orders.active_messages()) == sorted(f"o{i}".encode() for i in range(5))


async def test_crash_between_send_and_complete_is_redelivered_and_dropped_as_duplicate(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_backlog_queues(world, 1)
    orders = primary_queue(world, "orders", requires_duplicate_detection=True)
    await park("orders", ServiceBusMessage(b"once", message_id="order-1"))
    real_complete = aio_client.ServiceBusReceiver.complete_message
    crashed: list[str] = []

    async def complete_after_crash(self: Any, message: Any) -> None:
        if not crashed:  # the first process died after the send: the lock lapses
            crashed.append(message.message_id)
            raise MessageLockLostError(message="The lock supplied is invalid.")
        await real_complete(self, message)

    monkeypatch.setattr(aio_client.ServiceBusReceiver, "complete_message", complete_after_crash)

    async with make_syphon(world) as syphon, FastForward(world):
        stats = await syphon.drain()

    assert crashed == ["order-1"]
    assert [m.message_id for m in orders.active_messages()] == ["order-1"]
    assert stats.moved == 1
    assert stats.errors["MessageLockLostError"] == 1
    assert world.operations["send"] >= 3  # the park, and the send made twice
    assert backlog_depth(world) == 0


async def test_time_to_live_beyond_int32_milliseconds_survives_the_backlog(world: ServiceBusWorld) -> None:
    create_backlog_queues(world)
    orders = primary_queue(world, "orders")
    await park("orders", ServiceBusMessage(b"x", time_to_live=timedelta(days=40)))

    async with make_syphon(world) as syphon:
        await syphon.drain()

    (arrived,) = orders.active_messages()
    assert timedelta(days=40) - timedelta(minutes=1) < arrived.time_to_live <= timedelta(days=40)


async def test_a_failed_fragment_holds_back_only_the_messages_its_keys_pin(world: ServiceBusWorld) -> None:
    # partitioning.md: under duplicate detection a message without session id or partition key is
    # keyed by its message id. The syphon's batches follow that rule (it reads the destination's
    # properties), so one failed fragment does not fail a batch that mixes keys.
    from pairedbus.servicebus.store import partition_for_key

    create_backlog_queues(world)
    orders = primary_queue(world, "orders", enable_partitioning=True, requires_duplicate_detection=True)
    ids = [f"order-{i}" for i in range(60)]
    victim = partition_for_key(ids[0], orders.partitions)
    pinned = {m for m in ids if partition_for_key(m, orders.partitions) == victim}
    assert pinned and len(pinned) < len(ids)
    world.fail_partition(PRIMARY, "orders", victim)
    await park("orders", *(ServiceBusMessage(b"x", message_id=m) for m in ids))
    async with make_syphon(world, retry_hold=timedelta(milliseconds=1)) as syphon:
        stop = asyncio.Event()
        running = asyncio.create_task(syphon.run(stop))
        await eventually(lambda: syphon.stats.moved == len(ids) - len(pinned))
        assert {m.message_id for m in orders.active_messages()} == set(ids) - pinned
        world.heal_partition(PRIMARY, "orders", victim)
        async with FastForward(world):  # the held-back messages come back when their locks lapse
            await eventually(lambda: syphon.stats.moved == len(ids))
        stop.set()
        await asyncio.wait_for(running, guard(10))
    assert sorted(m.message_id for m in orders.active_messages()) == sorted(ids)  # once each
    assert syphon.stats.dead_lettered == 0


async def test_lock_lost_after_the_send_is_moved_again_and_dropped_as_a_duplicate(world: ServiceBusWorld) -> None:
    # paired-namespaces.md, "Duplicates": a lock lost after the syphon's send succeeded but before
    # its complete makes the message move again; duplicate detection on the destination drops it.
    names = create_backlog_queues(world, 1)
    orders = primary_queue(world, "orders", requires_duplicate_detection=True)
    ids = [f"m-{i}" for i in range(20)]
    await park("orders", *(ServiceBusMessage(b"x", message_id=m) for m in ids))
    world.late_lock_loss(SECONDARY, names[0], times=5)
    async with make_syphon(world) as syphon:
        await syphon.drain()
    assert sorted(m.message_id for m in orders.active_messages()) == sorted(ids)  # 0 lost, 0 doubled
    assert orders.counts.duplicates_dropped == 5
    assert backlog_depth(world) == 0


def _session_bodies(entity: Any, session: str) -> list[bytes]:
    return [b"".join(m.body) for m in entity.active_messages() if m.session_id == session]


async def test_a_key_backing_off_holds_up_only_its_own_later_messages(world: ServiceBusWorld) -> None:
    # Issue 21: one session backing off held the destination's order lock while it slept, so every
    # later batch of every other session to that destination waited behind it.
    from pairedbus.servicebus.store import partition_for_key

    create_backlog_queues(world, 1)
    orders = primary_queue(world, "orders", requires_session=True, enable_partitioning=True)
    slow = "session-slow"
    down = partition_for_key(slow, orders.partitions)
    fast = next(s for s in (f"session-{i}" for i in range(100)) if partition_for_key(s, orders.partitions) != down)
    world.fail_partition(PRIMARY, "orders", down)
    await park("orders", *(ServiceBusMessage(f"{s}-{i}", session_id=s) for i in range(10) for s in (slow, fast)))
    options = {
        "receive_batch_size": 2,  # every batch holds one message of each session
        "receivers_per_queue": 1,
        "backoff_initial": timedelta(milliseconds=20),
        "backoff_max": timedelta(milliseconds=20),
        "retry_hold": timedelta(seconds=10),  # the slow session retries in place, never left locked
    }
    async with make_syphon(world, **options) as syphon:
        stop = asyncio.Event()
        running = asyncio.create_task(syphon.run(stop))
        await eventually(lambda: len(_session_bodies(orders, fast)) == 10)
        assert _session_bodies(orders, slow) == []
        world.heal_partition(PRIMARY, "orders", down)
        await eventually(lambda: len(_session_bodies(orders, slow)) == 10)
        stop.set()
        await asyncio.wait_for(running, guard(10))
    # Each session's order is the order it was parked in.
    assert _session_bodies(orders, fast) == [f"{fast}-{i}".encode() for i in range(10)]
    assert _session_bodies(orders, slow) == [f"{slow}-{i}".encode() for i in range(10)]
    assert syphon.stats.moved == 20 and syphon.stats.left_locked == 0
    assert backlog_depth(world) == 0


async def test_settlements_never_outlive_a_cancelled_pump(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 21: a settlement task per message, created outside any group, kept running after its
    # pump was cancelled (a killed syphon) and died unobserved: "Task exception was never retrieved".
    import gc

    create_backlog_queues(world, 1)
    orders = primary_queue(world, "orders")
    await park("orders", *(ServiceBusMessage(f"m{i}") for i in range(20)))
    gate = asyncio.Event()
    waiting: list[Any] = []

    async def complete_after_the_kill(self: Any, message: Any) -> None:
        waiting.append(message)
        await gate.wait()
        raise MessageLockLostError(message="The lock supplied is invalid.")

    monkeypatch.setattr(aio_client.ServiceBusReceiver, "complete_message", complete_after_the_kill)
    loop = asyncio.get_running_loop()
    unhandled: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: unhandled.append(context))
    try:
        async with make_syphon(world) as syphon:
            running = asyncio.create_task(syphon.run(asyncio.Event()))
            await eventually(lambda: len(waiting) == 20)
            running.cancel()  # killed mid-settlement
            with pytest.raises(asyncio.CancelledError):
                await running
            gate.set()
            for _ in range(10):
                await asyncio.sleep(0)
        gc.collect()
        for _ in range(10):
            await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(previous)
    assert len(orders.active_messages()) == 20
    assert [c.get("message") for c in unhandled] == []


def _record_receives(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int | None]]:
    """(queue, max_message_count) of every backlog receive, in the order they were made."""
    asked: list[tuple[str, int | None]] = []
    receive = aio_client.ServiceBusReceiver.receive_messages

    async def recording(self: Any, max_message_count: int | None = 1, max_wait_time: float | None = None) -> Any:
        asked.append((self.entity_name, max_message_count))
        return await receive(self, max_message_count, max_wait_time)

    monkeypatch.setattr(aio_client.ServiceBusReceiver, "receive_messages", recording)
    return asked


async def test_a_queue_listed_with_work_starts_at_full_size_and_an_empty_one_with_a_probe(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = create_backlog_queues(world, 2)
    orders = primary_queue(world, "orders")
    for start in range(0, 1_000, 100):  # a send holds at most 256 KB
        await park("orders", *(ServiceBusMessage(f"m{i}", message_id=f"id-{i}") for i in range(start, start + 100)))
    world.latency = 0.002
    asked = _record_receives(monkeypatch)

    async with make_syphon(world, receive_batch_size=500, receivers_per_queue=4) as syphon:
        stats = await syphon.drain()

    deep = [count for queue, count in asked if queue == names[0]]
    empty = [count for queue, count in asked if queue == names[1]]
    # Two receivers (1,000 listed, 500 a receive) asked for 500 each before any came back: no probe, no ramp.
    assert deep[:2] == [500, 500]
    assert empty[0] == 16  # the probe: an empty queue stays cheap
    assert stats.moved == 1_000 and len(orders.active_messages()) == 1_000
    assert backlog_depth(world) == 0


async def _ten_queues_with_work(world: ServiceBusWorld, *, per_queue: int) -> tuple[list[str], Any]:
    """Ten backlog queues with `per_queue` parked for "orders" each, and a 2 ms round trip."""
    names = create_backlog_queues(world, 10)
    orders = primary_queue(world, "orders")
    for q in range(10):
        await park("orders", *(ServiceBusMessage(f"m{i}", message_id=f"{q}-{i}") for i in range(per_queue)), backlog=q)
    world.latency = 0.002
    return names, orders


async def test_queues_listed_with_work_share_the_receivers_the_budget_warrants(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    names, orders = await _ten_queues_with_work(world, per_queue=100)
    open_receives: dict[str, int] = dict.fromkeys(names, 0)
    most: dict[str, int] = dict.fromkeys(names, 0)
    receive = aio_client.ServiceBusReceiver.receive_messages

    async def counting(self: Any, max_message_count: int | None = 1, max_wait_time: float | None = None) -> Any:
        open_receives[self.entity_name] += 1
        most[self.entity_name] = max(most[self.entity_name], open_receives[self.entity_name])
        try:
            return await receive(self, max_message_count, max_wait_time)
        finally:
            open_receives[self.entity_name] -= 1

    monkeypatch.setattr(aio_client.ServiceBusReceiver, "receive_messages", counting)
    async with make_syphon(
        world, max_in_flight=100, receive_batch_size=25, receivers_per_queue=4, drain_wait=timedelta(milliseconds=100)
    ) as syphon:
        stats = await syphon.drain()

    # Ten busy queues, receives of 25, 100 in flight: one receiver each (4 each split the slots into 40 receives).
    assert most == dict.fromkeys(names, 1)
    assert stats.moved == 1_000 and len(orders.active_messages()) == 1_000
    assert backlog_depth(world) == 0


async def test_queues_listed_with_work_receive_at_most_their_share_of_the_budget_each(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    names, orders = await _ten_queues_with_work(world, per_queue=40)
    asked = _record_receives(monkeypatch)

    async with make_syphon(world, max_in_flight=200, receive_batch_size=500, receivers_per_queue=4) as syphon:
        stats = await syphon.drain()

    # 40 listed on each of ten queues, 200 in flight: one receiver each, receives of a tenth of the budget (20),
    # not the whole 40 at once (on the code before: 16, a probe, as 4 receivers a queue would have shared it).
    first = {queue: count for queue, count in reversed(asked)}
    assert first == dict.fromkeys(names, 20)
    assert max(count for _, count in asked) == 20
    assert stats.moved == 400 and len(orders.active_messages()) == 400


async def test_the_first_receives_of_large_messages_keep_the_byte_bound_from_the_listed_size(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = create_backlog_queues(world, 1)
    orders = primary_queue(world, "orders")
    for _ in range(200):
        await park("orders", ServiceBusMessage(b"x" * 200_000))
    asked = _record_receives(monkeypatch)

    async with make_syphon(world, max_in_flight_bytes=4 * 1024 * 1024) as syphon:
        stats = await syphon.drain()

    # The listing's bytes over its depth (just over 200 KB a message): a quarter of 4 MiB holds 5,
    # so 200 messages warrant every receiver allowed (4), each asking for 5 at once.
    assert asked[:4] == [(names[0], 5)] * 4
    assert stats.moved == 200 and len(orders.active_messages()) == 200


async def test_a_stopped_syphon_ends_though_a_receive_swallowed_its_cancellation(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over the wire, a receive whose cancellation the SDK dropped (Python 3.11's asyncio.wait_for, CPython
    gh-86296) went on into its long poll, and the pump waited for it: a killed syphon ran on. Here every
    receive drops its first cancellation and then waits for ever; cancelled, the syphon ends (the pump
    cancels its receive until it ends). On the code before, this hung."""
    create_backlog_queues(world)
    swallowed = 0
    receiving = asyncio.Event()

    async def swallowing(self: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal swallowed
        receiving.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            swallowed += 1
        await asyncio.Event().wait()  # its long poll

    monkeypatch.setattr(aio_client.ServiceBusReceiver, "receive_messages", swallowing)
    async with make_syphon(world) as syphon:
        running = asyncio.create_task(syphon.run(asyncio.Event()))
        await asyncio.wait_for(receiving.wait(), guard(10))
        running.cancel()
        done, _ = await asyncio.wait({running}, timeout=guard(10))  # a hang guard: it ends at once
    assert done and running.cancelled()
    assert swallowed >= 1


async def test_a_receive_waits_for_messages_still_listed_and_only_the_emptiness_test_waits_the_drain_wait(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a drain wait of 100 ms, the receives of a queue listed with 300 messages wait at least 0.5 s (they
    return as soon as their messages came): over the wire a receive cut at 100 ms left its transfers to be
    released and sent again. On the code before every receive waited 0.1 s. Only once the listed messages are
    received does a receive test the queue for emptiness with the drain wait."""
    create_backlog_queues(world, 1)
    orders = primary_queue(world, "orders")
    await park("orders", *(ServiceBusMessage(f"m{i}", message_id=f"id-{i}") for i in range(300)))
    waits: list[tuple[int | None, float | None]] = []
    receive = aio_client.ServiceBusReceiver.receive_messages

    async def recording(self: Any, max_message_count: int | None = 1, max_wait_time: float | None = None) -> Any:
        received = await receive(self, max_message_count, max_wait_time)
        waits.append((len(received), max_wait_time))
        return received

    monkeypatch.setattr(aio_client.ServiceBusReceiver, "receive_messages", recording)
    async with make_syphon(
        world, receive_batch_size=100, receivers_per_queue=1, drain_wait=timedelta(milliseconds=100)
    ) as syphon:
        stats = await syphon.drain()

    assert stats.moved == 300 and len(orders.active_messages()) == 300
    collecting = [wait for count, wait in waits if count]
    assert sum(count for count, _ in waits) == 300
    assert collecting and all(wait is not None and wait >= 0.5 for wait in collecting)
    assert waits[-1] == (0, 0.1)  # the emptiness test


def _cut_receives(monkeypatch: pytest.MonkeyPatch, cuts: list[int]) -> list[tuple[str, int, int | None, int]]:
    """Every backlog receive as ("receive", receiver, max_message_count, messages returned), the first ones
    returning only `cuts[i]` messages (as the SDK's receive does over the wire when it ends 0.2 s after its
    first message, its other transfers still on their way), and every time the pump took back a receiver's
    link credit, ("take back", receiver, None, 0): in the order they happened."""
    events: list[tuple[str, int, int | None, int]] = []
    receive = aio_client.ServiceBusReceiver.receive_messages
    close_link_credit = sdk.close_link_credit

    async def cut(self: Any, max_message_count: int | None = 1, max_wait_time: float | None = None) -> Any:
        most = cuts.pop(0) if cuts else max_message_count
        received = await receive(self, most, max_wait_time) if most else []
        events.append(("receive", id(self), max_message_count, len(received)))
        return received

    async def taking_back(receiver: object) -> None:
        events.append(("take back", id(receiver), None, 0))
        await close_link_credit(receiver)

    monkeypatch.setattr(aio_client.ServiceBusReceiver, "receive_messages", cut)
    monkeypatch.setattr(sdk, "close_link_credit", taking_back)
    return events


async def test_a_short_receive_of_listed_messages_is_followed_at_once_by_its_rest_on_the_same_credit(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """1,000 listed, receives of 500 on one receiver: the first brings 300 (its other 200 transfers still on
    their way), and the next call on that receiver is a receive of at least the 200, its credit not taken back in
    between, so that the transfers arrive during a receive instead of being released by the SDK. On the code
    before, the credit was taken back first and the next receive asked for 500 (over the wire, busy: 18,500
    transfers for 10,000 messages)."""
    create_backlog_queues(world, 1)
    orders = primary_queue(world, "orders")
    for start in range(0, 1_000, 100):
        await park("orders", *(ServiceBusMessage(f"m{i}", message_id=f"id-{i}") for i in range(start, start + 100)))
    events = _cut_receives(monkeypatch, [300])

    async with make_syphon(world, receive_batch_size=500, receivers_per_queue=1) as syphon:
        stats = await syphon.drain()

    first = events[0]
    assert first[0::2] == ("receive", 500)
    assert first[3] == 300
    what, asked = next((what, asked) for what, receiver, asked, _ in events[1:] if receiver == first[1])
    assert what == "receive" and asked is not None and asked >= 200
    assert stats.moved == 1_000 and len(orders.active_messages()) == 1_000
    assert backlog_depth(world) == 0


async def test_an_empty_receive_of_listed_messages_asks_again_once_and_a_second_empty_one_ends_it(
    world: ServiceBusWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first receive of a queue listed with 400 brings nothing (over the wire, busy: its wait ran out with
    its transfers on their way): the same receiver asks for the same 400 at once, credit kept. That rest bringing
    nothing too, the pump stops carrying on: it takes the credit back and the listing counts as stale (the drain
    lists again and moves all). On the code before, the first empty receive took the credit back and ended the
    pump at once."""
    create_backlog_queues(world, 1)
    orders = primary_queue(world, "orders")
    for start in range(0, 400, 100):
        await park("orders", *(ServiceBusMessage(f"m{i}", message_id=f"id-{i}") for i in range(start, start + 100)))
    events = _cut_receives(monkeypatch, [0, 0])

    async with make_syphon(world, receive_batch_size=500, receivers_per_queue=1) as syphon:
        stats = await syphon.drain()

    first = events[0][1]
    on_first = [(what, asked, got) for what, receiver, asked, got in events if receiver == first]
    assert on_first == [("receive", 400, 0), ("receive", 400, 0), ("take back", None, 0)]
    assert stats.moved == 400 and len(orders.active_messages()) == 400


async def test_a_receive_that_ends_with_the_sdks_error_as_its_caller_is_cancelled_is_not_left_unread():
    """The 200-message harsh wire drill logged "Task exception was never retrieved" twice: a pump cancelled
    while its receive ran (`_raced`) cancels the receive, the SDK ends it with its own error (busy, connection
    lost) instead of the cancellation, and the pump, being cancelled, never read it."""
    import gc

    from pairedbus.syphon.pump import cancel_until_done

    logged: list[str] = []
    asyncio.get_running_loop().set_exception_handler(lambda _loop, context: logged.append(context["message"]))
    receiving = asyncio.Event()

    async def receive() -> None:
        receiving.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            raise ServiceBusServerBusyError(message="busy") from None

    task = asyncio.ensure_future(receive())

    async def pump(receiving_task: asyncio.Future[None]) -> None:
        try:
            await asyncio.sleep(60)
        finally:
            await cancel_until_done(receiving_task)

    await receiving.wait()
    stopping = asyncio.ensure_future(pump(task))
    await asyncio.sleep(0)
    stopping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopping
    assert task.done() and not task.cancelled()  # ended with the SDK's error (reading it here would mark it read)
    del task, stopping
    gc.collect()
    assert not [m for m in logged if "never retrieved" in m], logged
