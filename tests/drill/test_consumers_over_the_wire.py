"""The drill's consumers over the wire, with the unmodified SDK (issue 34): a complete the broker applied whose
answer the connection's loss cut off is a delivery, not a lost message.

Default wire drills at load 27-31 counted messages lost. An outage cuts every connection of the primary, the
consumers' too; a complete the broker had applied when the connection went raises in the consumer all the same,
and the consumer recorded a delivery only when its complete returned: the message, gone from its destination,
was found nowhere and counted lost. The fault is injected at that moment: the broker applies the complete, then
cuts the connection before its answer goes out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from azure.servicebus.aio import ServiceBusClient

from pairedbus.drill import consumers
from pairedbus.drill.consumers import Sabotage, consume
from pairedbus.drill.in_process import _held
from pairedbus.drill.ledger import Ledger
from pairedbus.drill.run import audit, message_from_plan
from pairedbus.drill.scenario import DrillConfig, DrillEntity, DrillEntityKind, plan_messages
from pairedbus.drill.world import Contents
from pairedbus.emulator import links
from pairedbus.emulator.emulator import Emulator

pytestmark = pytest.mark.timeout(60)

QUEUE = DrillEntity("orders", DrillEntityKind.QUEUE)


def _cut_after_the_first_complete(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The broker applies the first complete, then cuts the consumer's connection before answering; returns
    the ids it did that to."""
    settle = links.settle
    cut: list[str] = []

    def settle_then_cut(store: Any, record: Any, token: int, lock: Any, owner: Any, action: Any, **kwargs: Any) -> None:
        settle(store, record, token, lock, owner, action, **kwargs)
        if action == "complete" and not cut:
            cut.append(str(record.content.message_id))
            owner.connection.drop()  # the answer is written to a socket already cut

    monkeypatch.setattr(links, "settle", settle_then_cut)
    return cut


def _count_completes(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The outcome of every complete the consumer tried, as `_complete` returns it."""
    outcomes: list[bool] = []
    complete: Callable[..., Any] = consumers._complete

    async def counted(receiver: Any, message: Any) -> bool:
        outcome: bool = await complete(receiver, message)
        outcomes.append(outcome)
        return outcome

    monkeypatch.setattr(consumers, "_complete", counted)
    return outcomes


async def test_a_complete_applied_before_the_connection_was_cut_is_a_delivery_not_a_loss(
    servicebus_emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the code before, the consumer's complete raised (the SDK's retry found the lock gone with the
    connection), nothing was recorded, and the audit, finding the message nowhere, counted it lost."""
    servicebus_emulator.namespace("primary").create_queue(QUEUE.name)
    planned = plan_messages(DrillConfig(messages=1), [QUEUE])[0]
    cut = _cut_after_the_first_complete(monkeypatch)
    outcomes = _count_completes(monkeypatch)
    ledger = Ledger()
    stop = asyncio.Event()
    async with ServiceBusClient.from_connection_string(servicebus_emulator.connection_string("primary")) as client:
        async with client.get_queue_sender(QUEUE.name) as sender:
            message = message_from_plan(planned)
            message.message_id = "m1"
            await sender.send_messages(message)
        ledger.sent(planned, "m1", None)
        task = asyncio.create_task(consume(client, QUEUE, None, ledger, Sabotage(0), stop))
        while not outcomes:  # noqa: ASYNC110 (the consumer signals nothing: pytest-timeout ends a hang)
            await asyncio.sleep(0.01)
        stop.set()
        await task

    queue = servicebus_emulator.namespace("primary").queue(QUEUE.name)
    assert cut == ["m1"] and outcomes == [False]  # applied, and the consumer saw it fail
    audit(ledger, Contents(destinations={QUEUE.name: _held(queue)}), [QUEUE])
    assert queue.message_counts()["active"] == 0
    assert ledger.lost() == []
    assert ledger.delivered_keys() == [(QUEUE.name, "m1")]
    assert ledger.duplicates() == 0 and ledger.mismatches == {}
