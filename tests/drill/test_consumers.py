"""The drill's consumers on the primary: receive and record, complete, and record whether the complete returned;
pings are completed and never recorded; a complete is retried while a retry can help; a sabotaged consumer
completes without recording."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from azure.core.credentials import AzureNamedKeyCredential
from azure.servicebus import ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient
from azure.servicebus.exceptions import MessageLockLostError, ServiceBusCommunicationError

from pairedbus.drill.consumers import COMPLETE_TRIES, Sabotage, _complete, consume
from pairedbus.drill.ledger import Ledger
from pairedbus.drill.scenario import DrillEntity, DrillEntityKind

FQDN = "drill.servicebus.windows.net"


def test_sabotage_off_never_drops_and_every_third_drops_every_third() -> None:
    assert not any(Sabotage(0).drops() for _ in range(10))
    third = Sabotage(3)
    assert [third.drops() for _ in range(6)] == [False, False, True, False, False, True]


class Receiver:
    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def complete_message(self, message: Any) -> None:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)


async def test_a_complete_is_retried_while_a_retry_can_help() -> None:
    receiver = Receiver(ServiceBusCommunicationError(message="blip"), ServiceBusCommunicationError(message="blip"))
    assert await _complete(receiver, object()) is True
    assert receiver.calls == 3


async def test_a_complete_gives_up_after_three_tries() -> None:
    assert COMPLETE_TRIES == 3
    receiver = Receiver(*(ServiceBusCommunicationError(message="down") for _ in range(5)))
    assert await _complete(receiver, object()) is False
    assert receiver.calls == 3


@pytest.mark.parametrize("error", [MessageLockLostError(message="lock lost"), RuntimeError("bug")])
async def test_a_complete_that_a_retry_cannot_help_is_not_settled_at_once(error: BaseException) -> None:
    receiver = Receiver(error)
    assert await _complete(receiver, object()) is False
    assert receiver.calls == 1


async def _consume_until(ledger: Ledger, sabotage: Sabotage, expected_completes: int, world: Any) -> None:
    stop = asyncio.Event()
    entity = DrillEntity("orders", DrillEntityKind.QUEUE)
    async with ServiceBusClient(FQDN, AzureNamedKeyCredential("test", "key")) as client:
        task = asyncio.create_task(consume(client, entity, None, ledger, sabotage, stop))
        queue = world.namespace(FQDN).queue("orders")
        # The fake counts completes but signals none: poll it, without a deadline (pytest-timeout ends a hang).
        while queue.counts.completes < expected_completes:  # noqa: ASYNC110
            await asyncio.sleep(0.005)
        stop.set()
        await task


async def _send(*messages: ServiceBusMessage) -> None:
    async with ServiceBusClient(FQDN, AzureNamedKeyCredential("test", "key")) as client:
        async with client.get_queue_sender("orders") as sender:
            await sender.send_messages(list(messages))


async def test_messages_are_recorded_with_their_completes_and_pings_are_not(servicebus_world) -> None:
    servicebus_world.namespace(FQDN).create_queue("orders")
    ping = ServiceBusMessage(b"", content_type="application/vnd.ms-servicebus-ping", message_id="ping")
    await _send(ServiceBusMessage("a", message_id="m1"), ping, ServiceBusMessage("b", message_id="m2"))
    ledger = Ledger()

    await _consume_until(ledger, Sabotage(0), 3, servicebus_world)

    assert ledger.deliveries == {("orders", "m1"): {1}, ("orders", "m2"): {3}}  # the ping was number 2
    assert ledger.unconfirmed == set()
    assert ledger.pings_skipped == 1
    assert servicebus_world.namespace(FQDN).queue("orders").message_counts()["active"] == 0


async def test_a_sabotaged_consumer_completes_but_does_not_record(servicebus_world) -> None:
    servicebus_world.namespace(FQDN).create_queue("orders")
    await _send(*(ServiceBusMessage(str(i), message_id=f"m{i}") for i in range(4)))
    ledger = Ledger()

    await _consume_until(ledger, Sabotage(2), 4, servicebus_world)

    assert len(ledger.deliveries) == 2  # every second completed message is not recorded
    assert servicebus_world.namespace(FQDN).queue("orders").message_counts()["active"] == 0
