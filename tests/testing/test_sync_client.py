"""The sync ServiceBusClient twin shares the aio fake's state and semantics."""

from __future__ import annotations

from datetime import timedelta

import pytest
from azure.servicebus import ServiceBusClient, ServiceBusMessage, ServiceBusSubQueue
from azure.servicebus.exceptions import MessageLockLostError, ServiceBusServerBusyError

from pairedbus.testing import Namespace, ServiceBusWorld

from .conftest import FQDN, Credential


def test_sync_send_receive_complete(ns: Namespace) -> None:
    ns.create_queue("q")
    with ServiceBusClient(FQDN, Credential()) as client:
        with client.get_queue_sender("q") as sender:
            sender.send_messages([ServiceBusMessage(b"1"), ServiceBusMessage(b"2")])
            batch = sender.create_message_batch()
            batch.add_message(ServiceBusMessage(b"3"))
            sender.send_messages(batch)
        with client.get_queue_receiver("q") as receiver:
            got = receiver.receive_messages(max_message_count=10, max_wait_time=1)
            assert [b"".join(m.body) for m in got] == [b"1", b"2", b"3"]
            for message in got:
                receiver.complete_message(message)
            assert receiver.receive_messages(max_wait_time=0.01) == []
    assert ns.queue("q").message_counts()["active"] == 0


def test_sync_lock_expiry_and_dead_letter_sub_queue(ns: Namespace, world: ServiceBusWorld) -> None:
    ns.create_queue("q", lock_duration=timedelta(seconds=10))
    with ServiceBusClient(FQDN, Credential()) as client:
        client.get_queue_sender("q").send_messages(ServiceBusMessage(b"x"))
        receiver = client.get_queue_receiver("q")
        [message] = receiver.receive_messages(max_wait_time=1)
        world.clock.advance(10)
        with pytest.raises(MessageLockLostError):
            receiver.complete_message(message)
        [again] = receiver.receive_messages(max_wait_time=1)
        receiver.dead_letter_message(again, reason="bad", error_description="why")
        dlq = client.get_queue_receiver("q", sub_queue=ServiceBusSubQueue.DEAD_LETTER)
        [dead] = dlq.receive_messages(max_wait_time=1)
        assert (dead.dead_letter_reason, dead.dead_letter_error_description) == ("bad", "why")


def test_sync_iteration_and_faults(ns: Namespace, world: ServiceBusWorld) -> None:
    ns.create_queue("q")
    with ServiceBusClient(FQDN, Credential()) as client:
        sender = client.get_queue_sender("q")
        sender.send_messages([ServiceBusMessage(str(i)) for i in range(3)])
        with client.get_queue_receiver("q", max_wait_time=0.01) as receiver:
            assert [str(m) for m in receiver] == ["0", "1", "2"]
        world.fail(FQDN, "q")
        with pytest.raises(ServiceBusServerBusyError):
            sender.send_messages(ServiceBusMessage(b"x"))


def test_sync_session_receiver_and_state(ns: Namespace) -> None:
    from azure.servicebus import NEXT_AVAILABLE_SESSION
    from azure.servicebus import ServiceBusSession as RealSession

    ns.create_queue("orders", requires_session=True)
    with ServiceBusClient(FQDN, Credential()) as client:
        client.get_queue_sender("orders").send_messages(ServiceBusMessage(b"1", session_id="s"))
        with client.get_queue_receiver("orders", session_id=NEXT_AVAILABLE_SESSION) as receiver:
            assert isinstance(receiver.session, RealSession)
            [message] = receiver.receive_messages(max_wait_time=1)
            receiver.session.set_state("half")
            assert receiver.session.get_state() == b"half"
            receiver.complete_message(message)
