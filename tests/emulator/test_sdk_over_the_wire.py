"""The unmodified azure-servicebus (aio and sync) against the emulator over a real loopback socket:
sends, receives, the four settlements, locks, peek, scheduling, deferral, sessions, batches and
large messages, and the errors the SDK raises for what the broker says."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator

import pytest
from azure.servicebus import NEXT_AVAILABLE_SESSION, ServiceBusMessage, ServiceBusReceiveMode, ServiceBusSubQueue
from azure.servicebus import ServiceBusClient as SyncClient
from azure.servicebus.aio import ServiceBusClient
from azure.servicebus.exceptions import (
    MessageLockLostError,
    MessageNotFoundError,
    MessageSizeExceededError,
    MessagingEntityNotFoundError,
    OperationTimeoutError,
    ServiceBusAuthenticationError,
    ServiceBusConnectionError,
    ServiceBusQuotaExceededError,
    ServiceBusServerBusyError,
    SessionCannotBeLockedError,
    SessionLockLostError,
)

from pairedbus.emulator import Emulator
from pairedbus.emulator.running import emulator_thread
from pairedbus.servicebus.errors import ErrorKind

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def emulator() -> AsyncIterator[Emulator]:
    async with Emulator(["primary"]) as emu:
        ns = emu.namespace("primary")
        ns.create_queue("orders")
        ns.create_queue("sessions", requires_session=True)
        ns.create_queue("small", max_delivery_count=2)
        topic = ns.create_topic("events")
        ns.create_subscription("events", "all")
        del topic
        yield emu


def client(emu: Emulator, **kwargs: object) -> ServiceBusClient:
    return ServiceBusClient.from_connection_string(emu.connection_string("primary"), retry_total=0, **kwargs)


async def test_a_message_round_trips_with_its_properties_and_the_brokers_fields(emulator: Emulator) -> None:
    async with client(emulator) as sb:
        async with sb.get_queue_sender("orders") as sender:
            await sender.send_messages(
                ServiceBusMessage(
                    "hello",
                    message_id="m-1",
                    correlation_id="c-1",
                    subject="greeting",
                    content_type="text/plain",
                    application_properties={"n": 7, "s": "x"},
                    time_to_live=dt.timedelta(minutes=5),
                )
            )
        async with sb.get_queue_receiver("orders") as receiver:
            (message,) = await receiver.receive_messages(max_message_count=5, max_wait_time=5)
            assert str(message) == "hello"
            assert message.message_id == "m-1"
            assert message.correlation_id == "c-1"
            assert message.subject == "greeting"
            assert message.content_type == "text/plain"
            assert message.application_properties == {b"n": 7, b"s": b"x"}
            assert message.time_to_live == dt.timedelta(minutes=5)
            assert message.sequence_number == 1
            assert message.delivery_count == 0
            assert message.enqueued_time_utc is not None
            assert message.locked_until_utc is not None and message.locked_until_utc > message.enqueued_time_utc
            assert message.lock_token is not None
            await receiver.complete_message(message)
    assert emulator.namespace("primary").queue("orders").message_counts()["active"] == 0


async def test_abandon_redelivers_with_a_higher_delivery_count_and_max_delivery_dead_letters(
    emulator: Emulator,
) -> None:
    async with client(emulator) as sb:
        async with sb.get_queue_sender("small") as sender:
            await sender.send_messages(ServiceBusMessage("x", message_id="a"))
        async with sb.get_queue_receiver("small") as receiver:
            (first,) = await receiver.receive_messages(max_wait_time=5)
            await receiver.abandon_message(first)
            (second,) = await receiver.receive_messages(max_wait_time=5)
            assert (first.delivery_count, second.delivery_count) == (0, 1)
            await receiver.abandon_message(second)
            assert await receiver.receive_messages(max_wait_time=1) == []
        async with sb.get_queue_receiver("small", sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dlq:
            (dead,) = await dlq.receive_messages(max_wait_time=5)
            assert dead.dead_letter_reason == "MaxDeliveryCountExceeded"
            await dlq.complete_message(dead)


async def test_dead_letter_is_confirmed_on_the_link_with_reason_and_description(emulator: Emulator) -> None:
    async with client(emulator) as sb:
        async with sb.get_queue_sender("orders") as sender:
            await sender.send_messages(ServiceBusMessage("x"))
        async with sb.get_queue_receiver("orders") as receiver:
            (message,) = await receiver.receive_messages(max_wait_time=5)
            await receiver.dead_letter_message(message, reason="bad", error_description="it was bad")
        async with sb.get_queue_receiver("orders", sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dlq:
            (dead,) = await dlq.receive_messages(max_wait_time=5)
            assert (dead.dead_letter_reason, dead.dead_letter_error_description) == ("bad", "it was bad")
    assert emulator.world.operations.get("update-disposition", 0) == 0


async def test_defer_then_receive_deferred_by_sequence_number(emulator: Emulator) -> None:
    async with client(emulator) as sb:
        async with sb.get_queue_sender("orders") as sender:
            await sender.send_messages(ServiceBusMessage("later"))
        async with sb.get_queue_receiver("orders") as receiver:
            (message,) = await receiver.receive_messages(max_wait_time=5)
            await receiver.defer_message(message)
            (again,) = await receiver.receive_deferred_messages([message.sequence_number])
            assert str(again) == "later"
            await receiver.complete_message(again)
    assert emulator.namespace("primary").queue("orders").message_counts()["deferred"] == 0


async def test_renew_lock_moves_the_expiry_and_peek_sees_without_locking(emulator: Emulator) -> None:
    async with client(emulator) as sb:
        async with sb.get_queue_sender("orders") as sender:
            await sender.send_messages([ServiceBusMessage(f"m{i}") for i in range(3)])
        async with sb.get_queue_receiver("orders") as receiver:
            peeked = await receiver.peek_messages(max_message_count=10)
            assert [str(m) for m in peeked] == ["m0", "m1", "m2"]
            (message,) = await receiver.receive_messages(max_wait_time=5)
            before = message.locked_until_utc
            await asyncio.sleep(0.05)
            after = await receiver.renew_message_lock(message)
            assert after > before
            await receiver.complete_message(message)


async def test_schedule_and_cancel(emulator: Emulator) -> None:
    when = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    async with client(emulator) as sb:
        async with sb.get_queue_sender("orders") as sender:
            numbers = await sender.schedule_messages([ServiceBusMessage("a"), ServiceBusMessage("b")], when)
            assert len(numbers) == 2
            assert emulator.namespace("primary").queue("orders").message_counts()["scheduled"] == 2
            await sender.cancel_scheduled_messages(numbers[0])
            assert emulator.namespace("primary").queue("orders").message_counts()["scheduled"] == 1
            with pytest.raises(MessageNotFoundError):
                await sender.cancel_scheduled_messages(numbers[0])


async def test_a_session_receiver_gets_its_session_and_its_state(emulator: Emulator) -> None:
    async with client(emulator) as sb:
        async with sb.get_queue_sender("sessions") as sender:
            await sender.send_messages(
                [ServiceBusMessage("s1", session_id="a"), ServiceBusMessage("s2", session_id="b")]
            )
        async with sb.get_queue_receiver("sessions", session_id="b") as receiver:
            assert receiver.session.session_id == "b"
            (message,) = await receiver.receive_messages(max_wait_time=5)
            assert (str(message), message.session_id) == ("s2", "b")
            await receiver.session.set_state(b"seen")
            assert await receiver.session.get_state() == b"seen"
            await receiver.session.renew_lock()
            await receiver.complete_message(message)
        async with sb.get_queue_receiver("sessions", session_id=NEXT_AVAILABLE_SESSION, max_wait_time=5) as receiver:
            assert receiver.session.session_id == "a"


async def test_list_queue_sessions_is_get_message_sessions(emulator: Emulator) -> None:
    """The SDK's session browser (`com.microsoft:get-message-sessions`): sessions holding messages or
    state; with a cutoff, only those whose state was set after it."""
    async with client(emulator) as sb:
        async with sb.get_queue_sender("sessions") as sender:
            await sender.send_messages([ServiceBusMessage("1", session_id="a"), ServiceBusMessage("2", session_id="b")])
        async with sb.get_queue_receiver("sessions", session_id="b") as receiver:
            await receiver.session.set_state(b"seen")
        assert sorted([s async for s in sb.list_queue_sessions("sessions")]) == ["a", "b"]
        cutoff = emulator.world.clock.now() - dt.timedelta(minutes=1)
        assert [s async for s in sb.list_queue_sessions("sessions", state_updated_after=cutoff)] == ["b"]
    assert emulator.world.operations.get("get-message-sessions", 0) >= 2


async def test_batches_and_large_messages_cross_several_frames(emulator: Emulator) -> None:
    big = "x" * 200_000
    async with client(emulator) as sb:
        async with sb.get_queue_sender("orders") as sender:
            batch = await sender.create_message_batch()
            for i in range(50):
                batch.add_message(ServiceBusMessage(f"b{i}"))
            await sender.send_messages(batch)
            await sender.send_messages(ServiceBusMessage(big))
        got = []
        async with sb.get_queue_receiver("orders", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as receiver:
            while len(got) < 51:
                messages = await receiver.receive_messages(max_message_count=100, max_wait_time=5)
                assert messages
                got += [str(m) for m in messages]
    assert got == [f"b{i}" for i in range(50)] + [big]


async def test_topic_fan_out_to_a_subscription(emulator: Emulator) -> None:
    async with client(emulator) as sb:
        async with sb.get_topic_sender("events") as sender:
            await sender.send_messages(ServiceBusMessage("e"))
        async with sb.get_subscription_receiver("events", "all") as receiver:
            (message,) = await receiver.receive_messages(max_wait_time=5)
            await receiver.complete_message(message)


# --- what the broker says, as the SDK raises it ---------------------------------------------------


async def test_a_missing_entity_raises_entity_not_found(emulator: Emulator) -> None:
    async with client(emulator) as sb:
        with pytest.raises(MessagingEntityNotFoundError):
            async with sb.get_queue_sender("nope") as sender:  # the attach is refused
                await sender.send_messages(ServiceBusMessage("x"))


async def test_a_wrong_key_is_refused_at_put_token(emulator: Emulator) -> None:
    wrong = emulator.connection_string("primary").replace("SAS_KEY_VALUE", "wrong")
    async with ServiceBusClient.from_connection_string(wrong, retry_total=0) as sb:
        with pytest.raises(ServiceBusAuthenticationError):
            async with sb.get_queue_sender("orders") as sender:
                await sender.send_messages(ServiceBusMessage("x"))
    assert emulator.namespace("primary").queue("orders").message_counts()["active"] == 0


async def test_a_message_over_the_limit_raises_size_exceeded(emulator: Emulator) -> None:
    async with client(emulator) as sb, sb.get_queue_sender("orders") as sender:
        with pytest.raises(MessageSizeExceededError):
            await sender.send_messages(ServiceBusMessage("x" * 300_000))


@pytest.mark.parametrize(
    ("mode", "raised"),
    [
        ("attach", ServiceBusServerBusyError),
        ("reject", ServiceBusServerBusyError),
        # pyamqp drops the link's error when it removes the pending send (../shared/wire.md)
        ("detach", ServiceBusConnectionError),
    ],
)
async def test_server_busy_surfaces_by_where_the_broker_says_it(
    emulator: Emulator, mode: str, raised: type[Exception]
) -> None:
    emulator.broker("primary").faults.busy.add(mode)
    async with client(emulator) as sb:
        with pytest.raises(raised):
            async with sb.get_queue_sender("orders") as sender:
                await sender.send_messages(ServiceBusMessage("x"))
    assert emulator.namespace("primary").queue("orders").message_counts()["active"] == 0


async def test_throttling_refuses_what_passes_the_rate_as_the_service_does(emulator: Emulator) -> None:
    """Three operations in a second pass (the attach and two sends); the fourth is refused with the
    service's throttling text, raised as the retryable ServiceBusServerBusyError; a second later it passes."""
    now = [100.0]
    faults = emulator.broker("primary").faults
    faults.clock = lambda: now[0]
    faults.throttle(3)
    async with client(emulator) as sb, sb.get_queue_sender("orders") as sender:
        await sender.send_messages(ServiceBusMessage("1"))
        await sender.send_messages(ServiceBusMessage("2"))
        with pytest.raises(ServiceBusServerBusyError) as raised:
            await sender.send_messages(ServiceBusMessage("3"))
        assert "is being throttled. Error code : 50009" in str(raised.value)
        assert raised.value._retryable is True  # what the SDK's own retry policy reads
        now[0] += 1.0
        await sender.send_messages(ServiceBusMessage("3"))
        faults.heal()
        for i in range(5):
            await sender.send_messages(ServiceBusMessage(str(i)))
    assert emulator.namespace("primary").queue("orders").message_counts()["active"] == 8


async def test_a_namespace_down_refuses_connections(emulator: Emulator) -> None:
    emulator.broker("primary").faults.down()
    async with client(emulator) as sb:
        with pytest.raises(ServiceBusConnectionError):
            async with sb.get_queue_sender("orders") as sender:
                await sender.send_messages(ServiceBusMessage("x"))


async def test_an_injected_model_fault_reaches_the_wire_as_the_services_condition(emulator: Emulator) -> None:
    emulator.world.fail(emulator.namespace("primary").fqdn, "orders", ServiceBusServerBusyError)
    async with client(emulator) as sb:
        with pytest.raises(ServiceBusServerBusyError):
            async with sb.get_queue_sender("orders") as sender:
                await sender.send_messages(ServiceBusMessage("x"))


async def test_a_lock_that_expired_cannot_be_completed(emulator: Emulator) -> None:
    async with client(emulator) as sb:
        async with sb.get_queue_sender("orders") as sender:
            await sender.send_messages(ServiceBusMessage("x"))
        async with sb.get_queue_receiver("orders") as receiver:
            (message,) = await receiver.receive_messages(max_wait_time=5)
            emulator.world.clock.advance(120)
            with pytest.raises(MessageLockLostError):
                await receiver.complete_message(message)


async def test_a_full_entity_raises_quota_exceeded(emulator: Emulator) -> None:
    """The model's entity-full refusal (`amqp:resource-limit-exceeded` on the transfer)."""
    emulator.world.fail(emulator.namespace("primary").fqdn, "orders", ErrorKind.QUOTA_EXCEEDED)
    async with client(emulator) as sb:
        with pytest.raises(ServiceBusQuotaExceededError):  # the fault holds from the attach on
            async with sb.get_queue_sender("orders") as sender:
                await sender.send_messages(ServiceBusMessage("x"))
    assert emulator.namespace("primary").queue("orders").message_counts()["active"] == 0


async def test_a_session_held_by_another_receiver_cannot_be_locked(emulator: Emulator) -> None:
    """`com.microsoft:session-cannot-be-locked` on the second receiver's attach."""
    async with client(emulator) as sb:
        async with sb.get_queue_sender("sessions") as sender:
            await sender.send_messages(ServiceBusMessage("s", session_id="a"))
        async with sb.get_queue_receiver("sessions", session_id="a"):
            with pytest.raises(SessionCannotBeLockedError):
                async with sb.get_queue_receiver("sessions", session_id="a"):
                    pass


async def test_a_session_lock_that_expired_is_lost(emulator: Emulator) -> None:
    """The session lock ran out (the model's clock moved 120 s): renewing it is
    `com.microsoft:session-lock-lost`."""
    async with client(emulator) as sb:
        async with sb.get_queue_sender("sessions") as sender:
            await sender.send_messages(ServiceBusMessage("s", session_id="a"))
        async with sb.get_queue_receiver("sessions", session_id="a") as receiver:
            emulator.world.clock.advance(120)
            with pytest.raises(SessionLockLostError):
                await receiver.session.renew_lock()


async def test_a_session_nobody_sent_to_times_out(emulator: Emulator) -> None:
    async with client(emulator) as sb:
        receiver = sb.get_queue_receiver("sessions", session_id=NEXT_AVAILABLE_SESSION, max_wait_time=1)
        with pytest.raises(OperationTimeoutError):
            async with receiver:
                pass


def test_the_sync_client_over_the_wire() -> None:
    with emulator_thread(["primary"]) as runner:
        runner.call(lambda: runner.emulator.namespace("primary").create_queue("q"))
        with SyncClient.from_connection_string(runner.connection_string("primary"), retry_total=0) as sb:
            with sb.get_queue_sender("q") as sender:
                sender.send_messages([ServiceBusMessage("one"), ServiceBusMessage("two")])
            with sb.get_queue_receiver("q") as receiver:
                messages = receiver.receive_messages(max_message_count=2, max_wait_time=5)
                assert [str(m) for m in messages] == ["one", "two"]
                for m in messages:
                    receiver.complete_message(m)
        counts = runner.call(lambda: runner.emulator.namespace("primary").queue("q").message_counts())
    assert counts["active"] == 0


async def test_the_pytest_fixture_serves_two_namespaces(servicebus_emulator: Emulator) -> None:
    servicebus_emulator.namespace("secondary").create_queue("q")
    cs = servicebus_emulator.connection_string("secondary")
    async with ServiceBusClient.from_connection_string(cs, retry_total=0) as sb, sb.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage("x"))
    assert servicebus_emulator.namespace("secondary").queue("q").message_counts()["active"] == 1
    assert servicebus_emulator.namespace("primary").queues() == []


async def test_the_admin_client_reaches_the_same_host_and_port_over_tls(emulator: Emulator) -> None:
    """The administration client always speaks HTTPS to the connection string's host and port: the
    broker hands a TLS handshake to the admin plane, whose certificate the run's CA signed."""
    from azure.servicebus.aio.management import ServiceBusAdministrationClient

    assert emulator.ca_file is not None
    conn_str = emulator.connection_string("primary")
    async with ServiceBusAdministrationClient.from_connection_string(
        conn_str, connection_verify=str(emulator.ca_file)
    ) as admin:
        await admin.create_queue("primary/x-servicebus-transfer/0", lock_duration="PT1M")
        names = [q.name async for q in admin.list_queues()]
    assert "primary/x-servicebus-transfer/0" in names
    assert emulator.namespace("primary").queue("primary/x-servicebus-transfer/0").settings.lock_seconds == 60.0
