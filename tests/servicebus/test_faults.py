"""Injected faults: the duplicate-making ones (ambiguous send outcomes, late lock loss: issue 12), and how
a fault is held by the model and made by the in-process front-end."""

from __future__ import annotations

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient
from azure.servicebus.exceptions import (
    MessageLockLostError,
    OperationTimeoutError,
    ServiceBusQuotaExceededError,
    ServiceBusServerBusyError,
)

from pairedbus.servicebus.errors import ErrorKind, ServiceError
from pairedbus.testing import Namespace, ServiceBusWorld
from tests.testing.conftest import FQDN


async def test_an_ambiguous_send_is_stored_although_the_client_sees_a_timeout(
    ns: Namespace, world: ServiceBusWorld, client: ServiceBusClient
) -> None:
    queue = ns.create_queue("q", requires_duplicate_detection=True)
    world.ambiguous_sends(FQDN, "q", times=1)
    async with client.get_queue_sender("q") as sender:
        with pytest.raises(OperationTimeoutError):
            await sender.send_messages(ServiceBusMessage("x", message_id="m-1"))
        assert queue.message_counts()["active"] == 1  # stored all the same
        await sender.send_messages(ServiceBusMessage("x", message_id="m-1"))  # the caller's retry
    assert queue.message_counts()["active"] == 1
    assert queue.counts.duplicates_dropped == 1
    assert world.injected == {"ambiguous_send": 1}


async def test_without_duplicate_detection_the_retry_of_an_ambiguous_send_is_a_second_copy(
    ns: Namespace, world: ServiceBusWorld, client: ServiceBusClient
) -> None:
    queue = ns.create_queue("q")
    world.ambiguous_sends(FQDN, times=1)
    async with client.get_queue_sender("q") as sender:
        with pytest.raises(OperationTimeoutError):
            await sender.send_messages(ServiceBusMessage("x", message_id="m-1"))
        await sender.send_messages(ServiceBusMessage("x", message_id="m-1"))
    assert queue.message_counts()["active"] == 2


async def test_late_lock_loss_fails_the_complete_and_the_message_comes_back(
    ns: Namespace, world: ServiceBusWorld, client: ServiceBusClient
) -> None:
    ns.create_queue("q")
    async with client.get_queue_sender("q") as sender:
        await sender.send_messages(ServiceBusMessage("x"))
    world.late_lock_loss(FQDN, "q", times=1)
    async with client.get_queue_receiver("q", max_wait_time=1) as receiver:
        [first] = await receiver.receive_messages()
        with pytest.raises(MessageLockLostError):
            await receiver.complete_message(first)
        [again] = await receiver.receive_messages()  # back at once, not after the lock duration
        assert (again.sequence_number, again.delivery_count) == (first.sequence_number, 1)
        await receiver.complete_message(again)
    assert world.injected == {"late_lock_loss": 1}


async def test_fault_rates_are_drawn_from_the_seeded_generator(
    ns: Namespace, world: ServiceBusWorld, client: ServiceBusClient
) -> None:
    queue = ns.create_queue("q")
    world.seed(3)
    world.ambiguous_send_rate = 0.5
    timeouts = 0
    async with client.get_queue_sender("q") as sender:
        for i in range(40):
            try:
                await sender.send_messages(ServiceBusMessage(str(i)))
            except OperationTimeoutError:
                timeouts += 1
    assert 0 < timeouts < 40
    assert queue.message_counts()["active"] == 40  # every one stored
    assert world.injected["ambiguous_send"] == timeouts


async def test_a_fault_injected_as_a_kind_of_the_model_reaches_the_caller_as_the_sdks_error(
    ns: Namespace, world: ServiceBusWorld, client: ServiceBusClient
) -> None:
    ns.create_queue("q")
    world.fail(FQDN, "q", ErrorKind.QUOTA_EXCEEDED, times=1)
    async with client.get_queue_sender("q") as sender:
        with pytest.raises(ServiceBusQuotaExceededError, match="Injected fault on"):
            await sender.send_messages(ServiceBusMessage("x"))
        await sender.send_messages(ServiceBusMessage("x"))  # times=1: healed
    assert ns.queue("q").message_counts()["active"] == 1


def test_the_model_itself_raises_its_own_error_not_the_sdks() -> None:
    world = ServiceBusWorld()  # no front-end started
    world.fail(FQDN, "q", ServiceBusServerBusyError)
    with pytest.raises(ServiceError) as caught:
        world.check(FQDN, "q", "send")
    assert caught.value.kind is ErrorKind.INJECTED and caught.value.injected is ServiceBusServerBusyError
