"""Documented Service Bus / azure-servicebus behaviour the fake must reproduce, one test each.

Each test names the page that documents the behaviour; each failed on the fake before issue 12.
"""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from azure.servicebus import ServiceBusClient as SyncServiceBusClient
from azure.servicebus import ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient
from azure.servicebus.amqp import AmqpAnnotatedMessage, AmqpMessageBodyType
from azure.servicebus.exceptions import MessagingEntityNotFoundError
from azure.servicebus.management import SqlRuleAction, SqlRuleFilter

from pairedbus.testing import Namespace, ServiceBusWorld
from tests.testing.conftest import FQDN, Credential

# --- session listing ---------------------------------------------------------------------------
# https://learn.microsoft.com/python/api/azure-servicebus/azure.servicebus.servicebusclient
#   #azure-servicebus-servicebusclient-list-queue-sessions: "List session IDs with active messages
#   or stored session state ... If state_updated_after is specified, only sessions whose session
#   state was set or updated after that time are returned ... Sessions with neither are excluded."


async def test_list_queue_sessions_lists_sessions_with_messages_or_state(ns: Namespace, world: ServiceBusWorld) -> None:
    ns.create_queue("sq", requires_session=True)
    async with ServiceBusClient(FQDN, Credential()) as client:
        async with client.get_queue_sender("sq") as sender:
            await sender.send_messages([ServiceBusMessage("a", session_id="with-messages")])
            await sender.send_messages([ServiceBusMessage("b", session_id="drained")])
        async with client.get_queue_receiver("sq", session_id="drained") as receiver:
            [msg] = await receiver.receive_messages(max_wait_time=1)
            await receiver.complete_message(msg)
        async with client.get_queue_receiver("sq", session_id="with-state") as receiver:
            await receiver.session.set_state("checkpoint")
        listed = [sid async for sid in client.list_queue_sessions("sq")]
        assert sorted(listed) == ["with-messages", "with-state"]
        cutoff = world.clock.now() - timedelta(seconds=1)
        recent = [sid async for sid in client.list_queue_sessions("sq", state_updated_after=cutoff)]
        assert recent == ["with-state"]
        later = world.clock.now() + timedelta(days=1)
        assert [sid async for sid in client.list_queue_sessions("sq", state_updated_after=later)] == []


def test_list_subscription_sessions_sync(ns: Namespace) -> None:
    ns.create_topic("t")
    ns.create_subscription("t", "s", requires_session=True)
    with SyncServiceBusClient(FQDN, Credential()) as client:
        client.get_topic_sender("t").send_messages(ServiceBusMessage("x", session_id="s1"))
        assert list(client.list_subscription_sessions("t", "s")) == ["s1"]
        with pytest.raises(MessagingEntityNotFoundError):  # raised when the page is fetched, as the SDK's
            list(client.list_subscription_sessions("t", "missing"))


# --- AMQP annotated messages ------------------------------------------------------------------
# https://learn.microsoft.com/azure/service-bus-messaging/service-bus-amqp-request-response and the
# SDK's samples/send_and_receive_amqp_annotated_message.py: data (one or more sections), sequence
# and value bodies, header, footer, message and delivery annotations, properties and application
# properties travel as AMQP sections and come back as the SDK's decoder reads them.


async def test_amqp_annotated_messages_round_trip(ns: Namespace) -> None:
    ns.create_queue("q")
    sent = [
        AmqpAnnotatedMessage(
            value_body={b"key": [-123, b"data", False]},
            header={"priority": 10},
            annotations={"annotation_key": "value"},
            delivery_annotations={"delivery_annotation_key": "value"},
            footer={"footer_key": "footer_value"},
            properties={"subject": "value", "content_encoding": "gzip", "user_id": b"me", "message_id": "m-1"},
            application_properties={"body_type": "value"},
        ),
        AmqpAnnotatedMessage(data_body=[b"aa", b"bb", b"cc"]),
        AmqpAnnotatedMessage(sequence_body=[[1, 2], ["x"]]),
    ]
    async with ServiceBusClient(FQDN, Credential()) as client:
        async with client.get_queue_sender("q") as sender:
            await sender.send_messages(sent)
        async with client.get_queue_receiver("q") as receiver:
            value, data, sequence = await receiver.receive_messages(3, max_wait_time=1)
    raw = value.raw_amqp_message
    assert raw.body_type == AmqpMessageBodyType.VALUE
    assert raw.body == {b"key": [-123, b"data", False]}
    assert raw.header.priority == 10 and raw.header.delivery_count == 0
    assert raw.footer == {b"footer_key": b"footer_value"}
    assert raw.delivery_annotations == {b"delivery_annotation_key": b"value"}
    assert raw.annotations[b"annotation_key"] == b"value"
    assert raw.annotations[b"x-opt-sequence-number"] == value.sequence_number
    assert (raw.properties.subject, raw.properties.content_encoding, raw.properties.user_id) == (
        b"value",
        b"gzip",
        b"me",
    )
    assert raw.application_properties == {b"body_type": b"value"}
    assert (value.subject, value.message_id) == ("value", "m-1")
    assert data.body_type == AmqpMessageBodyType.DATA and list(data.body) == [b"aa", b"bb", b"cc"]
    assert sequence.body_type == AmqpMessageBodyType.SEQUENCE and list(sequence.body) == [[1, 2], [b"x"]]


# --- blocking receives ------------------------------------------------------------------------
# https://learn.microsoft.com/python/api/azure-servicebus/azure.servicebus.servicebusreceiver:
# "max_wait_time: The timeout in seconds between received messages after which the receiver will
# automatically stop receiving. The default value is None, meaning no timeout." Iterating a
# receiver without it waits for the next message; a receive returns as soon as one arrives.


def _send_later(delay: float) -> threading.Thread:
    def send() -> None:
        time.sleep(delay)
        with SyncServiceBusClient(FQDN, Credential()) as client:
            client.get_queue_sender("q").send_messages(ServiceBusMessage("late"))

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


def test_sync_iterator_without_max_wait_time_blocks_until_a_message_arrives(servicebus_world: ServiceBusWorld) -> None:
    servicebus_world.namespace(FQDN).create_queue("q")
    sender = _send_later(0.3)
    with SyncServiceBusClient(FQDN, Credential()) as client, client.get_queue_receiver("q") as receiver:
        for message in receiver:  # an empty queue: the iterator waits instead of ending
            assert str(message) == "late"
            receiver.complete_message(message)
            break
        else:
            pytest.fail("the iterator ended on an empty queue")
    sender.join()


def test_sync_receive_wakes_when_a_message_arrives(servicebus_world: ServiceBusWorld) -> None:
    servicebus_world.namespace(FQDN).create_queue("q")
    sender = _send_later(0.3)
    with SyncServiceBusClient(FQDN, Credential()) as client, client.get_queue_receiver("q") as receiver:
        start = time.monotonic()
        [message] = receiver.receive_messages(max_wait_time=60)
        assert str(message) == "late"
        assert time.monotonic() - start < 30  # woken by the arrival, not by the 60 s deadline
    sender.join()


async def test_async_receive_wakes_when_a_message_arrives(servicebus_world: ServiceBusWorld) -> None:
    """The aio twin of the test above (this one already held before issue 12)."""
    import asyncio

    servicebus_world.namespace(FQDN).create_queue("q")
    async with ServiceBusClient(FQDN, Credential()) as client:

        async def send_later() -> None:
            await asyncio.sleep(0.2)
            async with client.get_queue_sender("q") as sender:
                await sender.send_messages(ServiceBusMessage("late"))

        task = asyncio.create_task(send_later())
        async with client.get_queue_receiver("q") as receiver:
            start = time.monotonic()
            async for message in receiver:  # no max_wait_time: waits for the arrival
                assert str(message) == "late"
                await receiver.complete_message(message)
                break
            assert time.monotonic() - start < 30
        await task


# --- peek cursor --------------------------------------------------------------------------------
# https://learn.microsoft.com/azure/service-bus-messaging/message-browsing: "the receiver keeps
# track of the last peeked message ... the next Peek call continues from there"; the SDK starts a
# peek without sequence_number after the last message the receiver received or peeked.


async def test_peek_continues_after_the_last_received_or_peeked_message(ns: Namespace) -> None:
    ns.create_queue("q")
    async with ServiceBusClient(FQDN, Credential()) as client:
        async with client.get_queue_sender("q") as sender:
            await sender.send_messages([ServiceBusMessage(str(i)) for i in range(5)])
        async with client.get_queue_receiver("q") as receiver:
            [first] = await receiver.receive_messages(1, max_wait_time=1)
            assert first.sequence_number == 1
            peeked = await receiver.peek_messages(2)
            assert [m.sequence_number for m in peeked] == [2, 3]
            assert [m.sequence_number for m in await receiver.peek_messages(5)] == [4, 5]
            assert [m.sequence_number for m in await receiver.peek_messages(1, sequence_number=1)] == [1]


# --- SQL rule actions -------------------------------------------------------------------------
# https://learn.microsoft.com/azure/service-bus-messaging/service-bus-messaging-sql-rule-action:
# "A SQL action is used to manipulate message metadata after a message has been selected by a
# filter of a subscription rule": SET <property> = <expression>, REMOVE <property>.


async def test_sql_rule_actions_modify_the_subscription_copy(ns: Namespace) -> None:
    ns.create_topic("t")
    ns.create_subscription("t", "s")
    ns.create_subscription("t", "untouched")
    from azure.servicebus.aio.management import ServiceBusAdministrationClient

    async with ServiceBusAdministrationClient(FQDN, Credential()) as admin:
        await admin.delete_rule("t", "s", "$Default")
        await admin.create_rule(
            "t",
            "s",
            "relabel",
            filter=SqlRuleFilter("user.kind = 'order'"),
            action=SqlRuleAction("SET sys.Label = 'routed'; SET user.total = user.amount * 2; REMOVE user.secret"),
        )
    async with ServiceBusClient(FQDN, Credential()) as client:
        async with client.get_topic_sender("t") as sender:
            await sender.send_messages(
                ServiceBusMessage(
                    "o", subject="orig", application_properties={"kind": "order", "amount": 21, "secret": "x"}
                )
            )
        async with client.get_subscription_receiver("t", "s") as receiver:
            [got] = await receiver.receive_messages(max_wait_time=1)
        async with client.get_subscription_receiver("t", "untouched") as receiver:
            [plain] = await receiver.receive_messages(max_wait_time=1)
    assert got.subject == "routed"
    assert got.application_properties == {b"kind": b"order", b"amount": 21, b"total": 42}
    assert plain.subject == "orig"
    assert plain.application_properties == {b"kind": b"order", b"amount": 21, b"secret": b"x"}
