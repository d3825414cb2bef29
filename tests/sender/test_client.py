"""The client: pings while an entity is switched, the return to the primary, and the syphon it
can host."""

from __future__ import annotations

import asyncio
import random
from datetime import timedelta

from azure.servicebus import ServiceBusMessage
from azure.servicebus.exceptions import ServiceBusCommunicationError

from pairedbus.pairing.ping import is_ping

from .conftest import PRIMARY, QUEUE, SECONDARY, SESSION_QUEUE, parked, until


async def test_enable_syphon_moves_parked_messages_to_the_primary(world, make_client):
    world.fail(PRIMARY, QUEUE, ServiceBusCommunicationError)
    client = make_client(failover_interval=0, enable_syphon=True)
    async with client:
        await client.get_queue_sender(QUEUE).send_messages(ServiceBusMessage(b"parked", message_id="p-1"))
        assert client._syphon_task is not None and not client._syphon_task.done()
        world.heal(PRIMARY, QUEUE)
        queue = world.namespace(PRIMARY).queue(QUEUE)
        for _ in range(2000):  # event-loop turns, bounded; the syphon moves it within a few
            if queue.active_messages():
                break
            await asyncio.sleep(0.005)
        [moved] = queue.active_messages()
        assert moved.message_id == "p-1" and b"".join(moved.body) == b"parked"
    assert client._syphon_task.done()
    assert parked(world) == []
    assert world.open_clients() == []


async def test_without_enable_syphon_nothing_moves_parked_messages(world, make_client):
    world.fail(PRIMARY, QUEUE, ServiceBusCommunicationError)
    async with make_client(failover_interval=0) as client:
        await client.get_queue_sender(QUEUE).send_messages(ServiceBusMessage(b"parked"))
        assert client._syphon_task is None
        world.heal(PRIMARY, QUEUE)
        await asyncio.sleep(0.05)
    assert len(parked(world)) == 1


def on_primary(world, name):
    return world.namespace(PRIMARY).queue(name).active_messages()


async def test_pings_every_interval_until_one_succeeds_then_every_sender_returns(world, make_client, gate):
    world.fail(PRIMARY, error=ServiceBusCommunicationError)
    async with make_client(failover_interval=0, ping_primary_interval=7) as client:
        senders = [client.get_queue_sender(QUEUE) for _ in range(3)]
        await senders[0].send_messages(ServiceBusMessage(b"parked"))
        assert all(s.switched for s in senders)  # one entity, every sender of it

        await gate.release()  # a ping while the primary is still down: it fails
        assert gate.requested[0] == 7.0
        assert client.stats.pings_failed == 1 and client.stats.pings_sent == 0
        assert all(s.switched for s in senders)

        world.heal(PRIMARY)
        await gate.release()  # this ping succeeds
        assert client.stats.pings_sent == 1
        assert not any(s.switched for s in senders)
        [ping] = on_primary(world, QUEUE)
        assert is_ping(ping)
        assert ping.content_type == "application/vnd.ms-servicebus-ping"  # the spec's literal
        assert b"".join(ping.body) == b""
        assert ping.time_to_live == timedelta(seconds=1)
        assert ping.session_id is None

        ping_task = next(iter(client._entities.values())).ping_task
        assert ping_task is None  # the pings stopped
        assert len(gate.requested) == 2  # and no further wait was started

        for sender in senders:
            await sender.send_messages(ServiceBusMessage(b"back"))
        assert client.stats.returns_to_primary == 1
    assert len(parked(world)) == 1
    assert [b"".join(m.body) for m in on_primary(world, QUEUE)].count(b"back") == 3


async def test_a_session_entity_is_pinged_with_a_random_session_id(world, make_client, gate):
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(SESSION_QUEUE)
        world.fail(PRIMARY, error=ServiceBusCommunicationError)
        await sender.send_messages(ServiceBusMessage(b"x", session_id="cart-1"))
        world.heal(PRIMARY)
        await gate.release()
        assert not sender.switched
    [ping] = [m for m in on_primary(world, SESSION_QUEUE) if is_ping(m)]
    assert ping.session_id and ping.session_id != "cart-1"


async def test_one_ping_task_per_entity_whatever_the_number_of_senders(world, make_client, gate):
    world.fail(PRIMARY, error=ServiceBusCommunicationError)
    async with make_client(failover_interval=0) as client:
        senders = [client.get_queue_sender(QUEUE) for _ in range(4)]
        await asyncio.gather(*(s.send_messages(ServiceBusMessage(b"x")) for s in senders))
        await asyncio.sleep(0)
        assert client.stats.failovers == 1
        assert len(gate.requested) == 1  # one ping loop waiting, not four
        tasks = [a.ping_task for a in client._entities.values() if a.ping_task is not None]
        assert len(tasks) == 1


# --- close/fault inside the client (paired-namespaces.md, "Close/fault behaviour") -------------


async def test_a_faulted_secondary_is_replaced_and_an_outage_still_parks_and_is_delivered_once(world, make_client):
    from datetime import timedelta

    client = make_client(
        failover_interval=0,
        enable_syphon=True,
        close_fault_grace=timedelta(milliseconds=100),
        reconnect_backoff=timedelta(milliseconds=20),
    )
    async with client:
        sender = client.get_queue_sender(QUEUE)
        await sender.send_messages(ServiceBusMessage(b"healthy"))
        await until(lambda: len(world.open_clients(SECONDARY)) >= 2)  # the syphon is up
        assert world.close_connections(SECONDARY) >= 2  # the client's and its syphon's
        # Past the grace: the embedded syphon faulted its primary and stopped, and is restarted.
        await until(lambda: client.stats.syphon_restarts >= 1)
        assert client.stats.syphon_faults >= 1

        world.fail(PRIMARY, QUEUE, ServiceBusCommunicationError)
        await sender.send_messages(ServiceBusMessage(b"parked", message_id="p-1"))  # an outage: parked
        assert sender.switched
        assert client.stats.parked_messages == 1
        assert client.stats.connection_faults >= 1 and client.stats.connection_replacements >= 1
        world.heal(PRIMARY, QUEUE)
        queue = world.namespace(PRIMARY).queue(QUEUE)
        await until(lambda: any(m.message_id == "p-1" for m in queue.active_messages()))
        await asyncio.sleep(0.1)
    delivered = [m.message_id for m in queue.active_messages()]
    assert delivered.count("p-1") == 1  # exactly once
    assert parked(world) == []
    assert world.open_clients() == []


async def test_a_send_stored_behind_a_timeout_is_parked_too_and_arrives_once(world, make_client):
    # paired-namespaces.md, "Duplicates": a send that times out after the service stored it is
    # parked as well; the destination's duplicate detection drops the syphon's copy.
    deduped = world.namespace(PRIMARY).create_queue("deduped", requires_duplicate_detection=True)
    world.ambiguous_sends(PRIMARY, "deduped", times=1)
    client = make_client(failover_interval=0, enable_syphon=True)
    async with client:
        sender = client.get_queue_sender("deduped")
        await sender.send_messages(ServiceBusMessage(b"x", message_id="once"))  # timed out, parked
        assert client.stats.parked_messages == 1
        await until(lambda: deduped.counts.duplicates_dropped == 1)
    assert [m.message_id for m in deduped.active_messages()] == ["once"]
    assert parked(world) == []


async def test_an_embedded_syphon_that_keeps_faulting_restarts_after_jittered_doubling_waits(
    world, make_client, monkeypatch
):
    """Its restarts wait the runtime's back-off (`pairing.backoff`): the n-th in a row a draw from
    [0, reconnect_backoff * 2**(n-1)]."""
    from pairedbus.syphon import Syphon

    class Draws(random.Random):
        def __init__(self) -> None:
            super().__init__(0)
            self.windows: list[tuple[float, float]] = []

        def uniform(self, a: float, b: float) -> float:
            self.windows.append((a, b))
            return a  # no wait: the test does not sleep

    async def cannot_open(self: Syphon) -> Syphon:
        raise RuntimeError("the secondary is unreachable")

    monkeypatch.setattr(Syphon, "__aenter__", cannot_open)
    draws = Draws()
    client = make_client(enable_syphon=True, reconnect_backoff=timedelta(milliseconds=10), backoff_rng=draws)
    async with client:
        await until(lambda: client.stats.syphon_restarts >= 3)
    assert draws.windows[:3] == [(0.0, 0.01), (0.0, 0.02), (0.0, 0.04)]
    assert client.stats.syphon_faults >= 3
