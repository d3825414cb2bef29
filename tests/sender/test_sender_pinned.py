"""Behaviours of the failover sender that mutation testing found unpinned (issue 22): the
queue/topic choice on a healthy primary, pings of a session entity, the operation timeout reaching
every SDK call, a closed sender, and retrying recently failed backlog queues."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.exceptions import (
    MessagingEntityNotFoundError,
    OperationTimeoutError,
    ServiceBusCommunicationError,
    ServiceBusConnectionError,
    ServiceBusServerBusyError,
)

from pairedbus import contract
from pairedbus.sender.errors import NoBacklogQueueError, SessionRequiredError
from pairedbus.testing import sender as fake_sender

from .conftest import BACKLOG, PRIMARY, QUEUE, SECONDARY, SESSION_QUEUE, TOPIC, backlog_messages, parked

#: Far longer than any test waits: only an operation bounded by its `timeout=` returns early.
NEVER = 30.0


async def test_a_healthy_topic_sender_sends_to_the_topic(world, make_client):
    async with make_client() as client:
        sender = client.get_topic_sender(TOPIC)
        await sender.send_messages(ServiceBusMessage(b"event", message_id="e-1"))
        [received] = world.namespace(PRIMARY).subscription(TOPIC, "all").active_messages()
        assert received.message_id == "e-1"
        assert not sender.switched and client.stats.failovers == 0
        numbers = await sender.schedule_messages(ServiceBusMessage(b"later"), datetime.now(UTC) + timedelta(hours=1))
        assert len(numbers) == 1
    assert parked(world) == []


async def test_a_healthy_queue_sender_sends_to_the_queue(world, make_client):
    async with make_client() as client:
        sender = client.get_queue_sender(QUEUE)
        await sender.send_messages([ServiceBusMessage(b"a"), ServiceBusMessage(b"b")])
        batch = await sender.create_message_batch()
        batch.add_message(ServiceBusMessage(b"c"))
        await sender.send_messages(batch)
    assert [b"".join(m.body) for m in world.namespace(PRIMARY).queue(QUEUE).active_messages()] == [b"a", b"b", b"c"]
    assert parked(world) == []


async def test_a_stated_session_queue_is_pinged_with_a_session_id_and_returns(world, make_client, gate):
    # The metadata cannot be read (the primary is down) and no message with a session id was
    # sent: the stated fact alone must give the pings a session id, or the queue never returns.
    world.fail(PRIMARY, SESSION_QUEUE, ServiceBusCommunicationError)
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(SESSION_QUEUE, requires_session=True)
        with pytest.raises(SessionRequiredError):
            await sender.send_messages(ServiceBusMessage(b"no session"))
        assert sender.switched
        world.heal(PRIMARY, SESSION_QUEUE)
        await gate.release()
        assert client.stats.pings_sent == 1 and client.stats.pings_failed == 0
        assert not sender.switched
    [ping] = world.namespace(PRIMARY).queue(SESSION_QUEUE).active_messages()  # the ping itself
    assert ping.session_id and ping.content_type == "application/vnd.ms-servicebus-ping"
    assert client.stats.returns_to_primary == 1


async def test_a_plain_queue_is_pinged_without_a_session_id(world, make_client, gate, monkeypatch):
    pings = []
    original = fake_sender.ServiceBusSender.send_messages

    async def recording(self, message, **kwargs):
        pings.append(message)
        return await original(self, message, **kwargs)

    world.fail(PRIMARY, QUEUE, ServiceBusCommunicationError)
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(QUEUE)
        await sender.send_messages(ServiceBusMessage(b"parked"))
        monkeypatch.setattr(fake_sender.ServiceBusSender, "send_messages", recording)
        world.heal(PRIMARY, QUEUE)
        await gate.release()
        assert not sender.switched
    [ping] = pings
    assert ping.session_id is None


async def test_a_primary_send_is_bounded_by_the_timeout(world, make_client):
    world.namespace(PRIMARY).latency = NEVER
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(QUEUE)
        await sender.send_messages(ServiceBusMessage(b"x"), timeout=0.01)  # times out: parked
        assert sender.switched
    assert len(parked(world)) == 1
    assert world.namespace(PRIMARY).queue(QUEUE).active_messages() == []


async def test_a_primary_schedule_is_bounded_by_the_timeout(world, make_client):
    world.namespace(PRIMARY).latency = NEVER
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(QUEUE)
        when = datetime.now(UTC) + timedelta(hours=1)
        assert await sender.schedule_messages(ServiceBusMessage(b"x"), when, timeout=0.01) == []
        assert sender.switched
    [parked_message] = parked(world)
    assert parked_message.application_properties  # aliased, schedule included


async def test_a_backlog_send_is_bounded_by_the_timeout(world, make_client):
    world.fail(PRIMARY, QUEUE, ServiceBusCommunicationError)
    world.namespace(SECONDARY).latency = NEVER
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(QUEUE)
        with pytest.raises(NoBacklogQueueError) as caught:
            await sender.send_messages(ServiceBusMessage(b"x"), timeout=0.01)
    assert {type(exc) for _, exc in caught.value.failures} == {OperationTimeoutError}
    assert len(caught.value.failures) == len(BACKLOG)


async def test_a_closed_sender_refuses_every_operation(world, make_client):
    async with make_client() as client:
        sender = client.get_queue_sender(QUEUE)
        await sender.send_messages(ServiceBusMessage(b"before"))
        await sender.close()
        await sender.close()  # twice is fine
        with pytest.raises(ValueError, match="'orders' is closed"):
            await sender.send_messages(ServiceBusMessage(b"after"))
        with pytest.raises(ValueError, match="closed"):
            await sender.send_messages([ServiceBusMessage(b"after")])
        with pytest.raises(ValueError, match="closed"):
            await sender.schedule_messages(ServiceBusMessage(b"after"), datetime.now(UTC))
        with pytest.raises(ValueError, match="closed"):
            await sender.create_message_batch()
    assert [b"".join(m.body) for m in world.namespace(PRIMARY).queue(QUEUE).active_messages()] == [b"before"]


async def test_closing_a_sender_closes_its_primary_link_once(world, make_client, monkeypatch):
    closed = []
    original = fake_sender.ServiceBusSender.close

    async def counting(self):
        closed.append(self._entity_name)
        await original(self)

    monkeypatch.setattr(fake_sender.ServiceBusSender, "close", counting)
    async with make_client() as client:
        sender = client.get_queue_sender(QUEUE)
        await sender.send_messages(ServiceBusMessage(b"x"))
        async with sender:
            pass
        assert closed == [QUEUE]
        await sender.close()
        assert closed == [QUEUE]
        assert sender not in client._senders  # the client no longer closes it again


async def test_with_every_backlog_queue_out_a_failed_send_retries_the_recently_failed_ones(world, make_client):
    world.fail(PRIMARY, QUEUE, ServiceBusCommunicationError)
    world.fail(SECONDARY, error=ServiceBusServerBusyError)
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(QUEUE)
        with pytest.raises(NoBacklogQueueError):
            await sender.send_messages(ServiceBusMessage(b"lost"))
        assert client.rotation.in_rotation() == ()
        # One queue still fails, the others recovered but are all still out of the rotation.
        world.heal(SECONDARY)
        world.fail(SECONDARY, BACKLOG[0], ServiceBusServerBusyError)
        failures = client.stats.backlog_send_failures
        for i in range(20):
            await client.get_queue_sender(QUEUE).send_messages(ServiceBusMessage(f"m-{i}".encode()))
        assert client.stats.backlog_send_failures > failures  # BACKLOG[0] was tried first at least once
    assert backlog_messages(world)[BACKLOG[0]] == []
    assert len(parked(world)) == 20


async def test_the_failover_counters_count_every_event(world, make_client, gate):
    # One entity switched at a time: the ping gate serves one ping task.
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(QUEUE)
        world.fail(PRIMARY, QUEUE, ServiceBusCommunicationError)
        await sender.send_messages([ServiceBusMessage(b"a"), ServiceBusMessage(b"b"), ServiceBusMessage(b"c")])
        await sender.send_messages(ServiceBusMessage(b"d"))
        await gate.release()  # the pings fail while the queue is down
        await gate.release()
        world.heal(PRIMARY, QUEUE)
        await gate.release()
        assert not sender.switched
        world.fail(PRIMARY, QUEUE, ServiceBusCommunicationError)  # a second outage
        await sender.send_messages(ServiceBusMessage(b"e"))
        world.heal(PRIMARY, QUEUE)
        await gate.release()
        assert not sender.switched

        stated = client.get_queue_sender(SESSION_QUEUE, requires_session=True)
        world.fail(PRIMARY, SESSION_QUEUE, ServiceBusCommunicationError)
        for _ in range(3):
            with pytest.raises(SessionRequiredError):
                await stated.send_messages(ServiceBusMessage(b"no session"))
        world.heal(PRIMARY, SESSION_QUEUE)
        await gate.release()
        assert not stated.switched
        stats = client.stats
        assert (stats.failovers, stats.returns_to_primary) == (3, 3)
        assert (stats.pings_failed, stats.pings_sent) == (2, 3)
        assert stats.parked_messages == 5
        assert stats.refused_while_switched == 3
    assert len(parked(world)) == 5


async def test_every_sdk_call_gets_the_operation_timeout_unless_the_caller_gives_one(
    world, make_client, gate, monkeypatch
):
    timeouts: list[tuple[str, float | None]] = []
    real_send = fake_sender.ServiceBusSender.send_messages
    real_schedule = fake_sender.ServiceBusSender.schedule_messages

    async def send(self, message, *, timeout=None, **kwargs):  # noqa: ASYNC109 (the SDK signature)
        timeouts.append((f"send {self.fully_qualified_namespace.split('.')[0]}", timeout))
        return await real_send(self, message, timeout=timeout, **kwargs)

    async def schedule(self, messages, when, *, timeout=None, **kwargs):  # noqa: ASYNC109 (the SDK signature)
        timeouts.append(("schedule", timeout))
        return await real_schedule(self, messages, when, timeout=timeout, **kwargs)

    monkeypatch.setattr(fake_sender.ServiceBusSender, "send_messages", send)
    monkeypatch.setattr(fake_sender.ServiceBusSender, "schedule_messages", schedule)
    async with make_client(failover_interval=0, operation_timeout=timedelta(seconds=17)) as client:
        sender = client.get_queue_sender(QUEUE)
        await sender.send_messages(ServiceBusMessage(b"a"))
        await sender.send_messages(ServiceBusMessage(b"b"), timeout=3)
        await sender.schedule_messages(ServiceBusMessage(b"c"), datetime.now(UTC) + timedelta(hours=1))
        world.fail(PRIMARY, QUEUE, ServiceBusCommunicationError)
        await sender.send_messages(ServiceBusMessage(b"d"))  # fails over: the backlog send
        await sender.send_messages(ServiceBusMessage(b"e"), timeout=4)
        world.heal(PRIMARY, QUEUE)
        await gate.release()  # the ping
    # what is left of the bound once the call's turn came on its SDK handler (turns.py): all of it, less
    # the moment taking the turn took
    assert [(call, round(timeout)) for call, timeout in timeouts] == [
        ("send contoso", 17.0),
        ("send contoso", 3),
        ("schedule", 17.0),
        ("send contoso", 17.0),
        ("send contoso-dr", 17.0),
        ("send contoso-dr", 4),
        ("send contoso", 17.0),
    ]


async def test_a_batch_made_while_switched_is_sized_by_the_message_limit(world, make_client):
    world.fail(PRIMARY, QUEUE, ServiceBusCommunicationError)
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(QUEUE)
        await sender.send_messages(ServiceBusMessage(b"x"))
        assert sender.switched
        assert (await sender.create_message_batch()).max_size_in_bytes == 262_144
        assert (await sender.create_message_batch(1_000)).max_size_in_bytes == 1_000


async def test_a_healthy_batch_is_sized_as_the_caller_asks(world, make_client):
    async with make_client() as client:
        sender = client.get_queue_sender(QUEUE)
        assert (await sender.create_message_batch(2_000)).max_size_in_bytes == 2_000


async def test_a_ping_answer_sets_whether_the_entity_exists(world, make_client, gate):
    world.namespace(PRIMARY).create_queue("doomed")
    async with make_client(failover_interval=0) as client:
        world.fail(PRIMARY, QUEUE, ServiceBusCommunicationError)  # its metadata cannot be read either
        kept = client.get_queue_sender(QUEUE)
        await kept.send_messages(ServiceBusMessage(b"x"))
        assert (await client.entity_facts(QUEUE)).exists is None
        world.heal(PRIMARY, QUEUE)
        await gate.release()
        assert (await client.entity_facts(QUEUE)).exists is True

        world.fail(PRIMARY, "doomed", ServiceBusCommunicationError)
        doomed = client.get_queue_sender("doomed")
        await doomed.send_messages(ServiceBusMessage(b"y"))
        assert (await client.entity_facts("doomed")).exists is None
        world.namespace(PRIMARY).delete("doomed")
        world.heal(PRIMARY, "doomed")
        await gate.release()
        assert (await client.entity_facts("doomed")).exists is False


# --- pinned by the second mutation-testing session (docs/mutation.md) -----------------------------


async def test_switched_is_false_not_merely_falsy_before_an_outage_and_after_the_return(world, make_client, gate):
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(QUEUE)
        assert sender.switched is False
        world.fail(PRIMARY, QUEUE, ServiceBusCommunicationError)
        await sender.send_messages(ServiceBusMessage(b"parked"))
        assert sender.switched is True
        world.heal(PRIMARY, QUEUE)
        await gate.release()
        assert sender.switched is False


async def test_an_entity_the_primary_says_is_missing_is_known_missing(world, make_client):
    world.namespace(PRIMARY).create_queue("doomed")
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender("doomed")
        assert (await client.entity_facts("doomed")).exists is True  # from its metadata
        world.namespace(PRIMARY).delete("doomed")
        with pytest.raises(MessagingEntityNotFoundError):
            await sender.send_messages(ServiceBusMessage(b"to nowhere"))
        assert (await client.entity_facts("doomed")).exists is False
        assert not sender.switched and client.stats.failovers == 0


async def test_a_refusal_of_a_missing_entity_while_switched_names_the_entity(world, make_client):
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(QUEUE)
        world.fail(PRIMARY, QUEUE, ServiceBusCommunicationError)
        await sender.send_messages(ServiceBusMessage(b"parked"))
        sender._failover.facts.exists = False  # as a ping "not found" would have learned
        with pytest.raises(MessagingEntityNotFoundError, match="entity 'orders' does not exist in the primary"):
            await sender.send_messages(ServiceBusMessage(b"refused"))
        assert client.stats.refused_while_switched == 1
    assert len(parked(world)) == 1


async def test_a_plain_send_after_a_session_send_still_teaches_that_no_sessions_are_required(
    world, make_client, metadata_unreadable
):
    async with make_client() as client:
        sender = client.get_queue_sender(QUEUE)
        assert (await client.entity_facts(QUEUE)).requires_session is None  # metadata unreadable
        await sender.send_messages(ServiceBusMessage(b"with a session", session_id="s-1"))
        assert (await client.entity_facts(QUEUE)).requires_session is None  # a plain queue takes it too
        await sender.send_messages(ServiceBusMessage(b"without"))
        assert (await client.entity_facts(QUEUE)).requires_session is False


def _ping_recorder(monkeypatch):
    """Record each message the primary's fake sender is asked to send from now on."""
    sent = []
    original = fake_sender.ServiceBusSender.send_messages

    async def recording(self, message, **kwargs):
        sent.append(message)
        return await original(self, message, **kwargs)

    monkeypatch.setattr(fake_sender.ServiceBusSender, "send_messages", recording)
    return sent


@pytest.mark.parametrize("how", ["batch", "list", "schedule"])
async def test_after_session_messages_in_a_batch_list_or_schedule_pings_carry_a_session_id(
    world, make_client, gate, monkeypatch, how
):
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(QUEUE)
        assert (await client.entity_facts(QUEUE)).requires_session is False  # the pings' session is from the sends
        if how == "batch":
            batch = await sender.create_message_batch()
            batch.add_message(ServiceBusMessage(b"in a session", session_id="s-1"))
            await sender.send_messages(batch)
        elif how == "list":
            await sender.send_messages([ServiceBusMessage(b"in a session", session_id="s-1")])
        else:
            later = datetime.now(UTC) + timedelta(hours=1)
            await sender.schedule_messages(ServiceBusMessage(b"in a session", session_id="s-1"), later)
        world.fail(PRIMARY, QUEUE, ServiceBusCommunicationError)
        await sender.send_messages(ServiceBusMessage(b"parked"))  # no session id: not what sets the pings' one
        pings = _ping_recorder(monkeypatch)
        world.heal(PRIMARY, QUEUE)
        await gate.release()
        assert not sender.switched
    [ping] = pings
    assert ping.session_id and ping.content_type == "application/vnd.ms-servicebus-ping"


async def test_a_batch_whose_message_lost_its_id_after_being_added_is_sent_with_a_fresh_one(world, make_client):
    from azure.servicebus import ServiceBusMessageBatch

    async with make_client() as client:
        batch = ServiceBusMessageBatch(max_size_in_bytes=contract.MAX_MESSAGE_SIZE_BYTES)
        message = ServiceBusMessage(b"x", message_id="given")
        batch.add_message(message)
        message.message_id = None  # after it was encoded into the batch
        await client.get_queue_sender(QUEUE).send_messages(batch)
    [received] = world.namespace(PRIMARY).queue(QUEUE).active_messages()
    assert message.message_id not in (None, "given")
    assert received.message_id == message.message_id


async def test_a_message_without_amqp_properties_gets_an_id(world, make_client):
    async with make_client() as client:
        message = ServiceBusMessage(b"bare")
        message.raw_amqp_message.properties = None
        await client.get_queue_sender(QUEUE).send_messages(message)
    [received] = world.namespace(PRIMARY).queue(QUEUE).active_messages()
    assert message.message_id and received.message_id == message.message_id


async def test_closing_a_sender_leaves_a_primary_link_of_a_replaced_connection_alone(world, make_client, monkeypatch):
    closed = []
    original = fake_sender.ServiceBusSender.close

    async def counting(self):
        closed.append(self._entity_name)
        await original(self)

    async with make_client() as client:
        sender = client.get_queue_sender(QUEUE)
        await sender.send_messages(ServiceBusMessage(b"x"))  # its primary link, on generation 0
        connections = client.connections
        connections.generations["primary"] += 1  # as `_replace` does: the old connection's links went with it
        connections.primary_generation = connections.generations["primary"]
        monkeypatch.setattr(fake_sender.ServiceBusSender, "close", counting)
        await sender.close()
        assert closed == []


async def test_a_message_of_a_subclass_gets_an_id_like_any_message(world, make_client):
    # The healthy send's shortcut is for `ServiceBusMessage` itself; a subclass goes through `prepare`.
    class Tagged(ServiceBusMessage):
        pass

    async with make_client() as client:
        sender = client.get_queue_sender(QUEUE)
        untagged, tagged = Tagged(b"no id"), Tagged(b"an id", message_id="given")
        untagged.message_id = None  # the SDK's constructor gave it one
        await sender.send_messages(untagged)
        await sender.send_messages(tagged)
    received = world.namespace(PRIMARY).queue(QUEUE).active_messages()
    assert untagged.message_id not in (None, "given")
    assert [m.message_id for m in received] == [untagged.message_id, "given"]


async def test_a_primary_send_that_loses_the_connection_marks_the_primary_down(world, make_client):
    world.fail(PRIMARY, QUEUE, ServiceBusConnectionError)
    async with make_client() as client:
        sender = client.get_queue_sender(QUEUE)
        with pytest.raises(ServiceBusConnectionError):  # the failover clock runs: the caller's error
            await sender.send_messages(ServiceBusMessage(b"x"))
        assert client.connections.is_down("primary")  # the close/fault rule heard of it
        world.heal(PRIMARY, QUEUE)


async def test_a_batch_rebuilt_for_a_lost_id_keeps_the_callers_transport(world, make_client, monkeypatch):
    from azure.servicebus import ServiceBusMessageBatch

    from pairedbus import sdk

    class Transport(sdk.PyamqpTransport):
        pass

    sent = []
    real_send = fake_sender.ServiceBusSender.send_messages

    async def send(self, message, *, timeout=None, **kwargs):  # noqa: ASYNC109 (the SDK signature)
        sent.append(message)
        return await real_send(self, message, timeout=timeout, **kwargs)

    monkeypatch.setattr(fake_sender.ServiceBusSender, "send_messages", send)
    async with make_client() as client:
        batch = ServiceBusMessageBatch(max_size_in_bytes=contract.MAX_MESSAGE_SIZE_BYTES, amqp_transport=Transport)
        message = ServiceBusMessage(b"x", message_id="given")
        batch.add_message(message)
        message.message_id = None  # after it was encoded into the batch: the batch is rebuilt
        await client.get_queue_sender(QUEUE).send_messages(batch)
    [rebuilt] = sent
    assert rebuilt is not batch and sdk.batch_transport(rebuilt) == {"amqp_transport": Transport}


async def test_making_a_batch_on_the_primary_is_bounded_by_the_operation_timeout(world, make_client, monkeypatch):
    from pairedbus.sender.turns import Turns

    bounds: list[tuple[str, float | None]] = []
    real_call = Turns.call

    async def call(self, handler, work, bound, *, what):
        bounds.append((what, bound))
        return await real_call(self, handler, work, bound, what=what)

    async with make_client(operation_timeout=timedelta(seconds=17)) as client:
        sender = client.get_queue_sender(QUEUE)
        monkeypatch.setattr(Turns, "call", call)
        await sender.create_message_batch()  # it may open the link
        monkeypatch.undo()
    assert bounds == [("the batch for 'orders'", 17.0)]
