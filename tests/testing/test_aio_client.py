"""The aio data plane of the fake pins the service's message semantics."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from azure.servicebus import (
    NEXT_AVAILABLE_SESSION,
    ServiceBusMessage,
    ServiceBusReceivedMessage,
    ServiceBusReceiveMode,
    ServiceBusSubQueue,
)
from azure.servicebus.aio import AutoLockRenewer, ServiceBusClient
from azure.servicebus.exceptions import (
    MessageAlreadySettled,
    MessageLockLostError,
    MessageNotFoundError,
    MessageSizeExceededError,
    MessagingEntityNotFoundError,
    OperationTimeoutError,
    ServiceBusConnectionError,
    ServiceBusError,
    ServiceBusQuotaExceededError,
    ServiceBusServerBusyError,
    SessionCannotBeLockedError,
    SessionLockLostError,
)
from pytest_mock import MockerFixture

from pairedbus import contract
from pairedbus.testing import DEAD_LETTER_REASON_MAX_DELIVERY, DEAD_LETTER_REASON_TTL, Namespace, ServiceBusWorld

from .conftest import FQDN, Credential

BACKLOG = contract.backlog_queue_name("contoso", 0)


def body(message: ServiceBusReceivedMessage) -> bytes:
    return b"".join(message.body)


async def test_send_and_receive_round_trip_keeps_properties_and_assigns_broker_values(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue(BACKLOG)
    sent = ServiceBusMessage(
        b"payload",
        message_id="m-1",
        session_id=None,
        content_type="application/json",
        correlation_id="c-1",
        subject="subj",
        to="dest",
        reply_to="replies",
        reply_to_session_id="rs",
        partition_key="pk",
        time_to_live=timedelta(seconds=30),
        application_properties={"x-ms-path": "orders", "count": 3, "ok": True, b"raw": b"bytes"},
    )
    async with client.get_queue_sender(BACKLOG) as sender:
        await sender.send_messages(sent)
    async with client.get_queue_receiver(BACKLOG) as receiver:
        [got] = await receiver.receive_messages(max_message_count=5, max_wait_time=1)
    assert isinstance(got, ServiceBusReceivedMessage)
    assert body(got) == b"payload"
    assert (got.message_id, got.content_type, got.correlation_id, got.subject) == (
        "m-1",
        "application/json",
        "c-1",
        "subj",
    )
    assert (got.to, got.reply_to, got.reply_to_session_id, got.partition_key) == ("dest", "replies", "rs", "pk")
    assert got.time_to_live == timedelta(seconds=30)
    assert got.sequence_number == 1
    assert got.delivery_count == 0
    now = world.clock.now()
    assert got.enqueued_time_utc == now and got.enqueued_time_utc.tzinfo is not None
    assert got.expires_at_utc == now + timedelta(seconds=30)
    assert got.locked_until_utc == now + timedelta(minutes=1)
    assert got.lock_token is not None
    # The real SDK returns keys and str values as bytes after a round trip.
    assert got.application_properties == {b"x-ms-path": b"orders", b"count": 3, b"ok": True, b"raw": b"bytes"}


async def test_message_without_application_properties_reads_none(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage("text body"))
    async with client.get_queue_receiver("q") as receiver:
        [got] = await receiver.receive_messages(max_wait_time=1)
    assert got.application_properties is None
    assert str(got) == "text body"
    assert got.time_to_live is None and got.expires_at_utc is None


async def test_list_and_batch_sends_keep_order_and_sequence_numbers(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages([ServiceBusMessage(b"a"), ServiceBusMessage(b"b")])
        batch = await sender.create_message_batch()
        batch.add_message(ServiceBusMessage(b"c"))
        batch.add_message(ServiceBusMessage(b"d"))
        assert len(batch) == 2
        await sender.send_messages(batch)
        await sender.send_messages([])
    async with client.get_queue_receiver("q") as receiver:
        got = await receiver.receive_messages(max_message_count=10, max_wait_time=1)
    assert [body(m) for m in got] == [b"a", b"b", b"c", b"d"]
    assert [m.sequence_number for m in got] == [1, 2, 3, 4]


async def test_receive_respects_max_message_count(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages([ServiceBusMessage(str(i)) for i in range(5)])
    async with client.get_queue_receiver("q") as receiver:
        assert len(await receiver.receive_messages(max_message_count=3, max_wait_time=1)) == 3
        assert len(await receiver.receive_messages(max_message_count=3, max_wait_time=1)) == 2


async def test_waiting_receiver_is_woken_by_a_send(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_receiver("q") as receiver, client.get_queue_sender("q") as sender:
        waiting = asyncio.create_task(receiver.receive_messages(max_wait_time=600))
        await asyncio.sleep(0)
        assert not waiting.done()
        await sender.send_messages(ServiceBusMessage(b"wake"))
        [got] = await asyncio.wait_for(waiting, timeout=5)
    assert body(got) == b"wake"


async def test_empty_receive_ends_when_the_frozen_clock_passes_max_wait_time(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q")
    async with client.get_queue_receiver("q") as receiver:
        waiting = asyncio.create_task(receiver.receive_messages(max_wait_time=900))
        await asyncio.sleep(0)
        world.clock.advance(899)
        await asyncio.sleep(0)
        assert not waiting.done()
        world.clock.advance(1)
        assert await asyncio.wait_for(waiting, timeout=5) == []


async def test_unknown_entity_raises_messaging_entity_not_found(client: ServiceBusClient) -> None:
    async with client.get_queue_sender("missing") as sender:
        with pytest.raises(MessagingEntityNotFoundError):
            await sender.send_messages(ServiceBusMessage(b"x"))
    with pytest.raises(MessagingEntityNotFoundError):
        async with client.get_queue_receiver("missing"):
            pass


# --- locks ----------------------------------------------------------------------------------


async def test_expired_lock_redelivers_with_delivery_count_incremented(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q", lock_duration=timedelta(seconds=30))
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))
    async with client.get_queue_receiver("q") as receiver:
        [first] = await receiver.receive_messages(max_wait_time=1)
        world.clock.advance(29)
        assert ns.queue("q").message_counts()["active"] == 1
        world.clock.advance(1)
        [again] = await receiver.receive_messages(max_wait_time=1)
        assert again.sequence_number == first.sequence_number
        assert again.delivery_count == 1
        with pytest.raises(MessageLockLostError):
            await receiver.complete_message(first)
        await receiver.complete_message(again)
    assert ns.queue("q").message_counts()["active"] == 0


async def test_locked_message_is_skipped_by_other_receivers(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages([ServiceBusMessage(b"1"), ServiceBusMessage(b"2")])
    async with client.get_queue_receiver("q") as one, client.get_queue_receiver("q") as two:
        [a] = await one.receive_messages(max_wait_time=1)
        [b] = await two.receive_messages(max_wait_time=1)
        assert (body(a), body(b)) == (b"1", b"2")


async def test_renew_message_lock_extends_the_lock(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q", lock_duration="PT30S")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))
    async with client.get_queue_receiver("q") as receiver:
        [message] = await receiver.receive_messages(max_wait_time=1)
        world.clock.advance(20)
        until = await receiver.renew_message_lock(message)
        assert until == world.clock.now() + timedelta(seconds=30)
        assert message.locked_until_utc == until
        world.clock.advance(20)  # past the original lock, within the renewed one
        assert await receiver.receive_messages(max_wait_time=0.01) == []
        await receiver.complete_message(message)
    assert ns.queue("q").counts.renewals == 1
    assert ns.queue("q").counts.completes == 1


async def test_renewing_a_lost_lock_raises_message_lock_lost(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q", lock_duration="PT30S")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))
    async with client.get_queue_receiver("q") as receiver:
        [message] = await receiver.receive_messages(max_wait_time=1)
        world.clock.advance(31)
        with pytest.raises(MessageLockLostError) as caught:
            await receiver.renew_message_lock(message)
    assert caught.value._retryable is False


async def test_auto_lock_renewer_keeps_a_short_lock_alive(ns: Namespace, world: ServiceBusWorld) -> None:
    world.clock.unfreeze()  # the SDK's renewer reads the real clock
    ns.create_queue("q", lock_duration="PT5S")
    renewer = AutoLockRenewer(max_lock_renewal_duration=60)
    async with ServiceBusClient(FQDN, Credential()) as client:
        async with client.get_queue_sender("q") as sender:
            await sender.send_messages(ServiceBusMessage(b"x"))
        async with client.get_queue_receiver("q", auto_lock_renewer=renewer) as receiver:
            [message] = await receiver.receive_messages(max_wait_time=1)
            first_until = message.locked_until_utc
            for _ in range(200):
                if ns.queue("q").counts.renewals:
                    break
                await asyncio.sleep(0.05)
            assert ns.queue("q").counts.renewals >= 1
            assert message.locked_until_utc > first_until
            await receiver.complete_message(message)
    await renewer.close()


async def test_abandon_makes_message_available_again(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages([ServiceBusMessage(b"1"), ServiceBusMessage(b"2")])
    async with client.get_queue_receiver("q") as receiver:
        [first] = await receiver.receive_messages(max_wait_time=1)
        await receiver.abandon_message(first)
        with pytest.raises(MessageAlreadySettled):
            await receiver.complete_message(first)
        [again] = await receiver.receive_messages(max_wait_time=1)
    assert body(again) == b"1" and again.delivery_count == 1


async def test_max_delivery_count_dead_letters_with_reason(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q", max_delivery_count=3)
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"poison", message_id="p"))
    async with client.get_queue_receiver("q") as receiver:
        for expected_count in range(3):
            [message] = await receiver.receive_messages(max_wait_time=1)
            assert message.delivery_count == expected_count
            await receiver.abandon_message(message)
        assert await receiver.receive_messages(max_wait_time=0.01) == []
    async with client.get_queue_receiver("q", sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dlq:
        [dead] = await dlq.receive_messages(max_wait_time=1)
        assert dead.message_id == "p"
        assert dead.dead_letter_reason == DEAD_LETTER_REASON_MAX_DELIVERY
        assert dead.dead_letter_error_description == "Message could not be consumed after 3 delivery attempts."
        await dlq.complete_message(dead)
    assert ns.queue("q").message_counts() == {"active": 0, "dead_letter": 0, "scheduled": 0, "deferred": 0}


async def test_dead_letter_message_keeps_reason_and_description(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"bad"))
    async with client.get_queue_receiver("q") as receiver:
        [message] = await receiver.receive_messages(max_wait_time=1)
        await receiver.dead_letter_message(message, reason="TTLExpiredInBacklog", error_description="too late")
    [dead] = ns.queue("q").dead_letters()
    assert (dead.dead_letter_reason, dead.dead_letter_error_description) == ("TTLExpiredInBacklog", "too late")
    assert ns.queue("q").counts.dead_letters == 1


async def test_receive_and_delete_removes_at_once_and_cannot_settle(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))
    async with client.get_queue_receiver("q", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as receiver:
        [message] = await receiver.receive_messages(max_wait_time=1)
        assert message.lock_token is None and message.locked_until_utc is None
        with pytest.raises(ValueError, match="RECEIVE_AND_DELETE"):
            await receiver.complete_message(message)
    assert ns.queue("q").message_counts()["active"] == 0


async def test_update_queue_properties_loses_locks(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))
    async with client.get_queue_receiver("q") as receiver:
        [message] = await receiver.receive_messages(max_wait_time=1)
        queue = ns.queue("q")
        queue.settings.update({"max_delivery_count": 20})
        queue.settings_changed()
        with pytest.raises(MessageLockLostError):
            await receiver.complete_message(message)
        [again] = await receiver.receive_messages(max_wait_time=1)
    assert again.delivery_count == 1


# --- TTL ------------------------------------------------------------------------------------


async def test_expired_message_is_dead_lettered_when_entity_asks_for_it(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q", dead_lettering_on_message_expiration=True)
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x", time_to_live=timedelta(seconds=10)))
    world.clock.advance(10)
    async with client.get_queue_receiver("q") as receiver:
        assert await receiver.receive_messages(max_wait_time=0.01) == []
    [dead] = ns.queue("q").dead_letters()
    assert dead.dead_letter_reason == DEAD_LETTER_REASON_TTL
    assert ns.queue("q").counts.expired == 1


async def test_expired_message_is_dropped_without_dead_lettering(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x", time_to_live=timedelta(seconds=10)))
        await sender.send_messages(ServiceBusMessage(b"keep"))
    world.clock.advance(11)
    async with client.get_queue_receiver("q") as receiver:
        [kept] = await receiver.receive_messages(max_message_count=5, max_wait_time=0.01)
    assert body(kept) == b"keep"
    assert ns.queue("q").dead_letters() == []


async def test_entity_default_ttl_caps_message_ttl(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q", default_message_time_to_live=timedelta(seconds=60))
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x", time_to_live=timedelta(hours=1)))
        await sender.send_messages(ServiceBusMessage(b"y"))
    async with client.get_queue_receiver("q") as receiver:
        got = await receiver.receive_messages(max_message_count=2, max_wait_time=1)
    assert [m.time_to_live for m in got] == [timedelta(seconds=60)] * 2


# --- sessions -------------------------------------------------------------------------------


async def test_session_receiver_gets_only_its_session_in_order(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("orders", requires_session=True)
    async with client.get_queue_sender("orders") as sender:
        await sender.send_messages([ServiceBusMessage(f"{s}{i}", session_id=s) for i in range(3) for s in "ab"])
    async with client.get_queue_receiver("orders", session_id="b") as receiver:
        got = await receiver.receive_messages(max_message_count=10, max_wait_time=1)
        assert [str(m) for m in got] == ["b0", "b1", "b2"]
        assert all(m.session_id == "b" and m.locked_until_utc is None for m in got)
        assert receiver.session.session_id == "b"
        await receiver.session.set_state(b"progress")
        assert await receiver.session.get_state() == b"progress"


async def test_next_available_session_skips_locked_sessions(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("orders", requires_session=True)
    async with client.get_queue_sender("orders") as sender:
        await sender.send_messages([ServiceBusMessage(b"1", session_id="s1"), ServiceBusMessage(b"2", session_id="s2")])
    async with client.get_queue_receiver("orders", session_id=NEXT_AVAILABLE_SESSION) as first:
        async with client.get_queue_receiver("orders", session_id=NEXT_AVAILABLE_SESSION) as second:
            assert {first.session.session_id, second.session.session_id} == {"s1", "s2"}
        with pytest.raises(SessionCannotBeLockedError):
            async with client.get_queue_receiver("orders", session_id=first.session.session_id):
                pass


async def test_no_available_session_times_out(ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld) -> None:
    ns.create_queue("orders", requires_session=True)
    receiver = client.get_queue_receiver("orders", session_id=NEXT_AVAILABLE_SESSION, max_wait_time=5)
    opening = asyncio.create_task(receiver.__aenter__())
    await asyncio.sleep(0)
    world.clock.advance(5)
    with pytest.raises(OperationTimeoutError):
        await asyncio.wait_for(opening, timeout=5)


async def test_session_lock_expiry_raises_session_lock_lost_and_releases_messages(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("orders", requires_session=True, lock_duration="PT30S")
    async with client.get_queue_sender("orders") as sender:
        await sender.send_messages(ServiceBusMessage(b"1", session_id="s"))
    async with client.get_queue_receiver("orders", session_id="s") as receiver:
        [message] = await receiver.receive_messages(max_wait_time=1)
        world.clock.advance(31)
        with pytest.raises(SessionLockLostError):
            await receiver.complete_message(message)
    async with client.get_queue_receiver("orders", session_id="s") as again:
        [redelivered] = await again.receive_messages(max_wait_time=1)
        assert redelivered.delivery_count == 1
        until = await again.session.renew_lock()
        assert until == world.clock.now() + timedelta(seconds=30)
        await again.complete_message(redelivered)


async def test_closing_a_session_receiver_releases_the_session(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("orders", requires_session=True)
    async with client.get_queue_sender("orders") as sender:
        await sender.send_messages(ServiceBusMessage(b"1", session_id="s"))
    async with client.get_queue_receiver("orders", session_id="s") as receiver:
        await receiver.receive_messages(max_wait_time=1)
    async with client.get_queue_receiver("orders", session_id=NEXT_AVAILABLE_SESSION) as next_one:
        [message] = await next_one.receive_messages(max_wait_time=1)
        assert message.session_id == "s" and message.delivery_count == 1


async def test_session_entities_refuse_sessionless_sends_and_receivers(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("orders", requires_session=True)
    async with client.get_queue_sender("orders") as sender:
        with pytest.raises(ServiceBusError, match="SessionId"):
            await sender.send_messages(ServiceBusMessage(b"x"))
    with pytest.raises(ServiceBusError):
        async with client.get_queue_receiver("orders"):
            pass


# --- duplicates, schedules, deferral, peek ----------------------------------------------------


async def test_duplicate_message_id_is_dropped_within_the_window(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q", requires_duplicate_detection=True, duplicate_detection_history_time_window="PT1M")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"1", message_id="same"))
        await sender.send_messages(ServiceBusMessage(b"2", message_id="same"))
        world.clock.advance(60)
        await sender.send_messages(ServiceBusMessage(b"3", message_id="same"))
    assert [str(m) for m in ns.queue("q").active_messages()] == ["1", "3"]
    assert ns.queue("q").counts.duplicates_dropped == 1


async def test_duplicates_are_kept_without_duplicate_detection(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(
            [ServiceBusMessage(b"1", message_id="same"), ServiceBusMessage(b"2", message_id="same")]
        )
    assert len(ns.queue("q").active_messages()) == 2


async def test_scheduled_message_appears_at_its_time_and_can_be_cancelled(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q")
    due = world.clock.now() + timedelta(minutes=5)
    async with client.get_queue_sender("q") as sender:
        [keep] = await sender.schedule_messages(ServiceBusMessage(b"later"), due)
        [drop] = await sender.schedule_messages(ServiceBusMessage(b"never"), due)
        await sender.cancel_scheduled_messages(drop)
        await sender.send_messages(ServiceBusMessage(b"also", scheduled_enqueue_time_utc=due))
    queue = ns.queue("q")
    assert queue.message_counts()["scheduled"] == 2
    async with client.get_queue_receiver("q") as receiver:
        assert await receiver.receive_messages(max_wait_time=0.01) == []
        world.clock.advance(timedelta(minutes=5))
        got = await receiver.receive_messages(max_message_count=5, max_wait_time=1)
    assert got[0].sequence_number == keep
    assert [body(m) for m in got] == [b"later", b"also"]
    assert got[0].scheduled_enqueue_time_utc == due
    assert got[0].enqueued_time_utc == due


async def test_waiting_receiver_wakes_when_a_schedule_comes_due(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.schedule_messages(ServiceBusMessage(b"later"), world.clock.now() + timedelta(seconds=30))
    async with client.get_queue_receiver("q") as receiver:
        waiting = asyncio.create_task(receiver.receive_messages(max_wait_time=60))
        await asyncio.sleep(0)
        world.clock.advance(30)
        [got] = await asyncio.wait_for(waiting, timeout=5)
    assert body(got) == b"later"


async def test_deferred_message_is_received_by_sequence_number(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))
    async with client.get_queue_receiver("q") as receiver:
        [message] = await receiver.receive_messages(max_wait_time=1)
        await receiver.defer_message(message)
        assert await receiver.receive_messages(max_wait_time=0.01) == []
        [deferred] = await receiver.receive_deferred_messages([message.sequence_number])
        await receiver.complete_message(deferred)
    assert ns.queue("q").deferred_messages() == []


async def test_peek_does_not_lock_or_count_deliveries(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages([ServiceBusMessage(b"1"), ServiceBusMessage(b"2")])
    async with client.get_queue_receiver("q") as receiver:
        peeked = await receiver.peek_messages(max_message_count=5)
        assert [body(m) for m in peeked] == [b"1", b"2"]
        with pytest.raises(ValueError, match="peeked"):
            await receiver.complete_message(peeked[0])
        [first] = await receiver.receive_messages(max_wait_time=1)
    assert first.delivery_count == 0


# --- topics and subscriptions -----------------------------------------------------------------


async def test_topic_fans_out_to_matching_subscriptions(ns: Namespace, client: ServiceBusClient) -> None:
    from azure.servicebus.management import CorrelationRuleFilter, RuleProperties, SqlRuleFilter

    ns.create_topic("events")
    ns.create_subscription("events", "all")
    red = ns.create_subscription("events", "red")
    red.rules.remove("$Default")
    red.rules.add(RuleProperties("red", filter=SqlRuleFilter("color = 'red'"), action=None, created_at_utc=None))
    audit = ns.create_subscription("events", "audit")
    audit.rules.remove("$Default")
    audit.rules.add(
        RuleProperties("audit", filter=CorrelationRuleFilter(label="audit"), action=None, created_at_utc=None)
    )
    async with client.get_topic_sender("events") as sender:
        await sender.send_messages(
            [
                ServiceBusMessage(b"1", application_properties={"color": "red"}),
                ServiceBusMessage(b"2", application_properties={"color": "blue"}, subject="audit"),
            ]
        )
    async with client.get_subscription_receiver("events", "all") as receiver:
        assert [body(m) for m in await receiver.receive_messages(5, max_wait_time=1)] == [b"1", b"2"]
    assert [str(m) for m in ns.subscription("events", "red").active_messages()] == ["1"]
    assert [str(m) for m in ns.subscription("events", "audit").active_messages()] == ["2"]


async def test_subscription_copies_settle_independently(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_topic("events")
    ns.create_subscription("events", "a")
    ns.create_subscription("events", "b")
    async with client.get_topic_sender("events") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))
    async with client.get_subscription_receiver("events", "a") as receiver:
        [message] = await receiver.receive_messages(max_wait_time=1)
        await receiver.complete_message(message)
    assert ns.subscription("events", "a").message_counts()["active"] == 0
    assert ns.subscription("events", "b").message_counts()["active"] == 1


# --- size limits --------------------------------------------------------------------------------


async def test_message_over_256_kb_raises_message_size_exceeded(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x" * (contract.MAX_MESSAGE_SIZE_BYTES - 1024)))
        with pytest.raises(MessageSizeExceededError) as caught:
            await sender.send_messages(ServiceBusMessage(b"x" * contract.MAX_MESSAGE_SIZE_BYTES))
        with pytest.raises(MessageSizeExceededError):
            await sender.send_messages([ServiceBusMessage(b"x" * 200_000), ServiceBusMessage(b"x" * 100_000)])
    assert caught.value._retryable is False
    assert ns.queue("q").counts.sends == 1


async def test_message_just_under_the_limit_is_measured_exactly(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    overhead = 61  # the SDK's encoded size of an empty-bodied message is body + ~61 bytes
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x" * (contract.MAX_MESSAGE_SIZE_BYTES - overhead - 16)))
        with pytest.raises(MessageSizeExceededError):
            await sender.send_messages(
                ServiceBusMessage(
                    b"x" * (contract.MAX_MESSAGE_SIZE_BYTES - overhead - 16),
                    application_properties={"x-ms-path": "o" * 64},
                )
            )


async def test_batch_add_message_raises_when_full(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        batch = await sender.create_message_batch()
        added = 0
        with pytest.raises(MessageSizeExceededError):
            while True:
                batch.add_message(ServiceBusMessage(b"x" * 10_000))
                added += 1
        assert added == 25
        assert batch.size_in_bytes <= batch.max_size_in_bytes == contract.MAX_MESSAGE_SIZE_BYTES
        await sender.send_messages(batch)
        with pytest.raises(ValueError):
            await sender.create_message_batch(max_size_in_bytes=contract.MAX_MESSAGE_SIZE_BYTES + 1)
    assert ns.queue("q").counts.sends == 25


async def test_premium_namespace_allows_larger_messages(world: ServiceBusWorld, client: ServiceBusClient) -> None:
    world.namespace(FQDN, sku=contract.SKU_PREMIUM).create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x" * 500_000))


async def test_entity_quota_raises_quota_exceeded(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q", max_size_in_megabytes=1024)
    chunk = b"x" * 250_000
    async with client.get_queue_sender("q") as sender:
        for _ in range(1024 * 1024 * 1024 // 250_100):
            await sender.send_messages(ServiceBusMessage(chunk))
        with pytest.raises(ServiceBusQuotaExceededError):
            await sender.send_messages(ServiceBusMessage(chunk))


async def test_partitioned_standard_queue_holds_sixteen_times_its_size(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q", max_size_in_megabytes=1024, enable_partitioning=True)
    chunk = b"x" * 250_000
    async with client.get_queue_sender("q") as sender:
        for _ in range(1024 * 1024 * 1024 // 250_000 + 10):
            await sender.send_messages(ServiceBusMessage(chunk))
    assert ns.reported_size_in_megabytes(ns.queue("q")) == 1024 * 16


# --- faults, latency, connections -----------------------------------------------------------------


async def test_fail_and_heal_namespace(ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld) -> None:
    ns.create_queue("q")
    world.fail(FQDN)
    async with client.get_queue_sender("q") as sender:
        with pytest.raises(ServiceBusServerBusyError) as caught:
            await sender.send_messages(ServiceBusMessage(b"x"))
        assert caught.value._retryable is True
        world.heal(FQDN)
        await sender.send_messages(ServiceBusMessage(b"x"))
    assert ns.queue("q").counts.sends == 1


async def test_fail_one_entity_leaves_others_working(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("bad")
    ns.create_queue("good")
    world.fail(FQDN, "bad", error=OperationTimeoutError)
    async with client.get_queue_sender("bad") as bad, client.get_queue_sender("good") as good:
        with pytest.raises(OperationTimeoutError):
            await bad.send_messages(ServiceBusMessage(b"x"))
        await good.send_messages(ServiceBusMessage(b"x"))
    receiver = client.get_queue_receiver("bad")
    with pytest.raises(OperationTimeoutError):
        await receiver.receive_messages(max_wait_time=1)


async def test_fail_for_a_number_of_operations(ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld) -> None:
    ns.create_queue("q")
    world.fail(FQDN, "q", times=2)
    async with client.get_queue_sender("q") as sender:
        for _ in range(2):
            with pytest.raises(ServiceBusServerBusyError):
                await sender.send_messages(ServiceBusMessage(b"x"))
        await sender.send_messages(ServiceBusMessage(b"x"))


async def test_fault_rate_is_reproducible_with_a_seed(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q")

    async def outcomes() -> list[bool]:
        results = []
        async with client.get_queue_sender("q") as sender:
            for _ in range(50):
                try:
                    await sender.send_messages(ServiceBusMessage(b"x"))
                    results.append(True)
                except ServiceBusServerBusyError:
                    results.append(False)
        return results

    world.fault_rate = 0.3
    world.seed(7)
    first = await outcomes()
    world.seed(7)
    assert await outcomes() == first
    assert 0 < first.count(False) < 50


async def test_latency_is_one_round_trip_per_operation(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld, mocker: MockerFixture
) -> None:
    ns.create_queue("q")
    world.latency = 0.001
    round_trips = mocker.spy(world, "round_trip")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages([ServiceBusMessage(b"x") for _ in range(100)])
    assert round_trips.call_count == 1
    async with client.get_queue_receiver("q") as receiver:
        messages = await receiver.receive_messages(max_message_count=100, max_wait_time=1)
        assert round_trips.call_count == 3  # open, receive
        await asyncio.gather(*(receiver.complete_message(m) for m in messages))
    assert round_trips.call_count == 103


async def test_concurrent_operations_share_one_round_trip_timer(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld, mocker: MockerFixture
) -> None:
    ns.create_queue("q")
    world.latency = 0.001
    loop = asyncio.get_running_loop()
    call_later = mocker.spy(loop, "call_later")
    async with client.get_queue_sender("q") as sender:
        await asyncio.gather(*(sender.send_messages(ServiceBusMessage(b"x")) for _ in range(50)))
    timers = [c for c in call_later.call_args_list if c.args[1].__name__ == "_wake_all"]
    assert len(timers) < 50
    assert ns.queue("q").counts.sends == 50


async def test_close_connections_faults_open_clients_and_wakes_receivers(ns: Namespace, world: ServiceBusWorld) -> None:
    ns.create_queue("q")
    async with ServiceBusClient(FQDN, Credential()) as faulted:
        receiver = faulted.get_queue_receiver("q")
        sender = faulted.get_queue_sender("q")
        waiting = asyncio.create_task(receiver.receive_messages(max_wait_time=600))
        await asyncio.sleep(0)
        assert world.close_connections(FQDN) == 1
        with pytest.raises(ServiceBusConnectionError) as caught:
            await asyncio.wait_for(waiting, timeout=5)
        assert caught.value._retryable is True
        with pytest.raises(ServiceBusConnectionError):
            await sender.send_messages(ServiceBusMessage(b"x"))
    async with ServiceBusClient(FQDN, Credential()) as fresh, fresh.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))


async def test_closed_handler_raises_value_error(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    sender = client.get_queue_sender("q")
    await sender.close()
    with pytest.raises(ValueError, match="shutdown"):
        await sender.send_messages(ServiceBusMessage(b"x"))


async def test_from_connection_string_uses_endpoint_and_entity_path(ns: Namespace) -> None:
    ns.create_queue("q")
    conn = f"Endpoint=sb://{FQDN}/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=abc=;EntityPath=q"
    async with ServiceBusClient.from_connection_string(conn) as client:
        assert client.fully_qualified_namespace == FQDN
        with pytest.raises(ValueError, match="EntityPath"):
            client.get_queue_sender("other")
        async with client.get_queue_sender("q") as sender:
            await sender.send_messages(ServiceBusMessage(b"x"))
    assert ns.queue("q").counts.sends == 1


async def test_resending_a_received_message_forwards_its_content(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue(BACKLOG)
    ns.create_queue("orders")
    async with client.get_queue_sender(BACKLOG) as sender:
        await sender.send_messages(ServiceBusMessage(b"x", message_id="m", application_properties={"k": "v"}))
    async with client.get_queue_receiver(BACKLOG) as receiver, client.get_queue_sender("orders") as forward:
        [message] = await receiver.receive_messages(max_wait_time=1)
        message.session_id = None
        await forward.send_messages(message)
        await receiver.complete_message(message)
    [moved] = ns.queue("orders").active_messages()
    assert (moved.message_id, moved.application_properties) == ("m", {b"k": b"v"})


async def test_deleting_a_queue_fails_its_waiting_receivers(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_receiver("q") as receiver:
        waiting = asyncio.create_task(receiver.receive_messages(max_wait_time=600))
        await asyncio.sleep(0)
        ns.delete("q")
        with pytest.raises(MessagingEntityNotFoundError):
            await asyncio.wait_for(waiting, timeout=5)
        ns.create_queue("q")
        with pytest.raises(MessagingEntityNotFoundError):
            await receiver.receive_messages(max_wait_time=0.01)


async def test_topic_schedules_are_cancelled_in_every_subscription(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_topic("events")
    ns.create_subscription("events", "a")
    ns.create_subscription("events", "b")
    async with client.get_topic_sender("events") as sender:
        [seq] = await sender.schedule_messages(ServiceBusMessage(b"x"), world.clock.now() + timedelta(minutes=1))
        assert ns.subscription("events", "a").message_counts()["scheduled"] == 1
        await sender.cancel_scheduled_messages(seq)
        with pytest.raises(MessageNotFoundError):
            await sender.cancel_scheduled_messages(seq)
    world.clock.advance(120)
    assert all(ns.subscription("events", s).message_counts()["active"] == 0 for s in "ab")


async def test_peek_continues_from_the_last_peeked_sequence_number(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages([ServiceBusMessage(str(i)) for i in range(5)])
    async with client.get_queue_receiver("q") as receiver:
        first = await receiver.peek_messages(2)
        second = await receiver.peek_messages(2)
        from_start = await receiver.peek_messages(1, sequence_number=1)
    assert [m.sequence_number for m in first + second] == [1, 2, 3, 4]
    assert from_start[0].sequence_number == 1


async def test_subscription_dead_letter_sub_queue(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_topic("events")
    ns.create_subscription("events", "s", max_delivery_count=1)
    async with client.get_topic_sender("events") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))
    async with client.get_subscription_receiver("events", "s") as receiver:
        [message] = await receiver.receive_messages(max_wait_time=1)
        await receiver.abandon_message(message)
    async with client.get_subscription_receiver("events", "s", sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dlq:
        [dead] = await dlq.receive_messages(max_wait_time=1)
    assert dead.dead_letter_reason == DEAD_LETTER_REASON_MAX_DELIVERY


async def test_world_counts_operations_including_faulted_ones(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))
        world.fail(FQDN, "q", times=1)
        with pytest.raises(ServiceBusServerBusyError):
            await sender.send_messages(ServiceBusMessage(b"x"))
    assert world.operations["send"] == 2
    assert ns.queue("q").counts.send_calls == 1


async def test_auto_forwarding_moves_messages_and_dead_letters(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("sink")
    ns.create_queue("dead-sink")
    ns.create_queue("q", forward_dead_lettered_messages_to="dead-sink", max_delivery_count=1)
    ns.create_topic("events")
    ns.create_subscription("events", "to-sink", forward_to="sink")
    async with client.get_topic_sender("events") as sender:
        await sender.send_messages(ServiceBusMessage(b"routed"))
    assert [str(m) for m in ns.queue("sink").active_messages()] == ["routed"]
    assert ns.subscription("events", "to-sink").message_counts()["active"] == 0
    async with client.get_queue_sender("q") as sender, client.get_queue_receiver("q") as receiver:
        await sender.send_messages(ServiceBusMessage(b"poison"))
        [message] = await receiver.receive_messages(max_wait_time=1)
        await receiver.abandon_message(message)
    assert [str(m) for m in ns.queue("dead-sink").active_messages()] == ["poison"]
    assert ns.queue("q").dead_letters() == []


async def test_partition_key_differing_from_session_id_is_rejected(ns: Namespace, client: ServiceBusClient) -> None:
    ns.create_queue("q")
    message = ServiceBusMessage(b"x", partition_key="p")
    message.session_id = "s"  # the SDK only checks the other order client-side
    async with client.get_queue_sender("q") as sender:
        with pytest.raises(ServiceBusError, match="PartitionKey"):
            await sender.send_messages(message)
    assert ns.queue("q").counts.sends == 0


async def test_session_whose_lock_expired_is_offered_to_the_next_receiver(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld
) -> None:
    ns.create_queue("orders", requires_session=True, lock_duration="PT10S")
    async with client.get_queue_sender("orders") as sender:
        await sender.send_messages(ServiceBusMessage(b"1", session_id="s"))
    stalled = client.get_queue_receiver("orders", session_id="s")
    await stalled.receive_messages(max_wait_time=1)
    world.clock.advance(10)
    async with client.get_queue_receiver("orders", session_id=NEXT_AVAILABLE_SESSION) as next_one:
        [message] = await next_one.receive_messages(max_wait_time=1)
    assert (message.session_id, message.delivery_count) == ("s", 1)
    with pytest.raises(SessionLockLostError):
        await stalled.receive_messages(max_wait_time=1)


async def test_round_trip_slower_than_the_timeout_raises_operation_timeout(
    ns: Namespace, world: ServiceBusWorld
) -> None:
    ns.create_queue("q")
    ns.latency = 0.05
    async with ServiceBusClient(FQDN, Credential(), try_timeout=0.01) as bounded:
        with pytest.raises(OperationTimeoutError) as caught:
            await bounded.get_queue_sender("q").send_messages(ServiceBusMessage(b"x"))
    assert caught.value._retryable is True
    async with ServiceBusClient(FQDN, Credential()) as unbounded:
        sender = unbounded.get_queue_sender("q")
        with pytest.raises(OperationTimeoutError):
            await sender.send_messages(ServiceBusMessage(b"x"), timeout=0.01)
        await sender.send_messages(ServiceBusMessage(b"x"), timeout=1)
    assert ns.queue("q").counts.sends == 1


async def test_namespace_latency_overrides_the_world_latency(
    ns: Namespace, client: ServiceBusClient, world: ServiceBusWorld, mocker: MockerFixture
) -> None:
    ns.create_queue("q")
    world.latency = 0.001
    ns.latency = 0.002
    round_trips = mocker.spy(world, "round_trip")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage(b"x"))
    assert round_trips.call_args.args == (0.002,)


async def test_iterating_a_receiver_yields_messages_until_max_wait_time(
    ns: Namespace, client: ServiceBusClient
) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages([ServiceBusMessage(str(i)) for i in range(3)])
    async with client.get_queue_receiver("q", max_wait_time=0.01) as receiver:
        seen = []
        async for message in receiver:
            seen.append(str(message))
            await receiver.complete_message(message)
    assert seen == ["0", "1", "2"]
