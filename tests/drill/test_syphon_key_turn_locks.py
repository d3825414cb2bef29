"""A reproducer, filed from the drill (issue 35, item 4), of what kept the 20,000-message harsh drill from
settling: the syphon does not renew the locks of backlog messages waiting for their partition key's turn
(`LockKeeper` keeps only messages being worked on; `KeyOrder` queues a key's deliveries one after
another). When one key's queue of deliveries takes longer than the backlog lock, the waiting messages'
locks lapse: the broker redelivers them, the syphon still sends them (duplicate detection drops the
copies) and fails to complete them (MessageLockLostError), and the redelivered copies queue up behind
the same key again. In the harsh drill (5 s backlog lock, 16 session ids, 65 % of sends failing) the
in-flight budget filled with such deliveries and moves fell to a few a second.

Fixed in the syphon: `LockKeeper` holds every message of a batch from its receive until it is settled or
left, so what waits for its key's turn is renewed too (tests/syphon/test_lock_keeper.py pins it on the
syphon's own terms)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from azure.core.credentials import AzureNamedKeyCredential
from azure.servicebus import ServiceBusMessage

from pairedbus import contract
from tests.load import guard

PRIMARY = "turns-primary.servicebus.windows.net"
SECONDARY = "turns-secondary.servicebus.windows.net"
LOCK = timedelta(seconds=5)
MESSAGES = 600


async def test_one_sessions_backlog_moves_without_losing_a_lock_while_it_waits_for_its_turn(servicebus_world):
    import azure.servicebus.aio as servicebus_aio

    from pairedbus.syphon import Syphon

    servicebus_world.namespace(PRIMARY).create_queue(
        "orders",
        requires_session=True,
        requires_duplicate_detection=True,
        duplicate_detection_history_time_window=timedelta(hours=1),
    )
    backlog = contract.backlog_queue_names(contract.namespace_from_fqdn(PRIMARY), 1)[0]
    servicebus_world.namespace(SECONDARY).create_queue(backlog, lock_duration=LOCK, max_delivery_count=10_000)
    async with servicebus_aio.ServiceBusClient(SECONDARY, object()) as client, client.get_queue_sender(backlog) as s:
        await s.send_messages(
            [
                ServiceBusMessage(
                    b"x",
                    message_id=f"m{i}",
                    application_properties={contract.ALIAS_PATH: "orders", contract.ALIAS_SESSION_ID: "one"},
                )
                for i in range(MESSAGES)
            ]
        )
    # Each send to the primary takes a quarter of a second: 30 deliveries of 20 messages for the one
    # session take 7.5 s in turn, longer than the 5 s lock the later ones wait under.
    servicebus_world.namespace(PRIMARY).latency = 0.25
    async with Syphon(
        primary=PRIMARY,
        secondary=SECONDARY,
        credential=AzureNamedKeyCredential("k", "v"),
        lock_duration=LOCK,
        receive_batch_size=20,
        drain_wait=timedelta(milliseconds=200),
        retry_hold=timedelta(seconds=1),
    ) as syphon:
        stats = await asyncio.wait_for(syphon.drain(), guard(60))
    orders = servicebus_world.namespace(PRIMARY).sendable("orders")
    assert stats.moved == MESSAGES
    assert stats.errors.get("MessageLockLostError", 0) == 0, dict(stats.errors)
    assert orders.counts.duplicates_dropped == 0  # no message was moved twice
