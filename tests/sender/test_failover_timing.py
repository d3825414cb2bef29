"""When the failover interval is counted from: the first failing call's start."""

from __future__ import annotations

from azure.servicebus import ServiceBusMessage
from azure.servicebus.exceptions import ServiceBusServerBusyError

from .conftest import PRIMARY, QUEUE, parked


async def test_a_send_whose_sdk_retries_outlast_the_interval_is_parked_at_once(world, make_client, clock):
    client = make_client(failover_interval=10.0)

    def busy_after_retries() -> ServiceBusServerBusyError:
        clock.advance(12)  # what the SDK's own retries spend before it raises
        return ServiceBusServerBusyError(message="busy")

    world.fail(PRIMARY, QUEUE, busy_after_retries)
    async with client:
        sender = client.get_queue_sender(QUEUE)
        await sender.send_messages(ServiceBusMessage(b"parked at once", message_id="m1"))
        assert sender.switched
    assert [m.message_id for m in parked(world)] == ["m1"]
    assert client.stats.failovers == 1


async def test_a_disabled_primary_entity_fails_over(world, make_client):
    """The service answers a send to a Disabled entity with com.microsoft:entity-disabled, which the
    SDK raises as MessagingEntityDisabledError (retryable): the entity is unavailable, not gone."""
    world.namespace(PRIMARY).queue(QUEUE).settings.update({"status": "Disabled"})
    client = make_client(failover_interval=0.0)
    async with client:
        sender = client.get_queue_sender(QUEUE)
        await sender.send_messages(ServiceBusMessage(b"x", message_id="dis-1"))
        assert sender.switched
    assert [m.message_id for m in parked(world)] == ["dis-1"]
