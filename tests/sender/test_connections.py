"""The client's two namespace connections (`sender/connections.py`): a side that goes down is replaced
after a back-off, its generation bumps so handlers of the old client are known stale, and the backlog
senders are renewed with the secondary."""

from __future__ import annotations

import asyncio
import random

from azure.servicebus import ServiceBusMessage
from azure.servicebus.exceptions import ServiceBusCommunicationError, ServiceBusConnectionError

from pairedbus.pairing.endpoints import NamespaceEndpoint
from pairedbus.sender.connections import PairedConnections
from pairedbus.sender.failover import FailoverStats

from .conftest import BACKLOG, CREDENTIAL, PRIMARY, QUEUE, SECONDARY, until


def _connections(stats: FailoverStats) -> PairedConnections:
    return PairedConnections(
        {"primary": NamespaceEndpoint.from_fqdn(PRIMARY), "secondary": NamespaceEndpoint.from_fqdn(SECONDARY)},
        CREDENTIAL,
        stats,
        grace=0.05,
        backoff_initial=0.001,
        backoff_max=0.01,
    )


async def test_a_primary_closed_behind_the_clients_back_is_replaced_and_its_partner_faulted(world, make_client):
    from datetime import timedelta

    client = make_client(close_fault_grace=timedelta(milliseconds=50), reconnect_backoff=timedelta(milliseconds=10))
    async with client:
        sender = client.get_queue_sender(QUEUE)
        await sender.send_messages(ServiceBusMessage(b"before"))
        await client.connections.client("primary").close()  # not by the client: a fault
        await until(lambda: client.stats.connection_replacements >= 2)  # the primary, then the secondary
        assert client.stats.connection_faults == 2  # the secondary did not follow: faulted
        await sender.send_messages(ServiceBusMessage(b"after"))  # on the fresh connection
    assert [b"".join(m.body) for m in world.namespace(PRIMARY).queue(QUEUE).active_messages()] == [b"before", b"after"]


async def test_a_replaced_secondary_gets_a_new_generation_and_fresh_backlog_senders(world) -> None:
    stats = FailoverStats()
    connections = _connections(stats)
    connections.open()
    old_client, old_sender = connections.client("secondary"), connections.backlog_sender(BACKLOG[0])
    assert connections.backlog_sender(BACKLOG[0]) is old_sender  # one per queue, shared
    connections.went_down("secondary", "closed")
    await until(lambda: connections.generation("secondary") == 1)
    assert connections.generation("primary") == 0 and connections.primary_generation == 0
    assert connections.client("secondary") is not old_client
    assert connections.backlog_sender(BACKLOG[0]) is not old_sender
    assert (stats.connection_faults, stats.connection_replacements) == (1, 1)
    assert await connections.close() == []
    assert world.open_clients() == []


async def test_an_error_not_about_the_connection_asks_for_no_retry(world) -> None:
    connections = _connections(FailoverStats())
    connections.open()
    for exc in (ValueError("not a connection error"), ServiceBusCommunicationError(message="one entity's link")):
        assert await connections.replaced("primary", exc, since=0, wait=0.01) is False
    assert connections.generation("primary") == 0 and not connections.is_down("primary")
    await connections.close()


async def test_a_connection_error_waits_for_the_fresh_client(world) -> None:
    connections = _connections(FailoverStats())
    connections.open()
    exc = ServiceBusConnectionError(message="connection lost")
    assert await connections.replaced("primary", exc, since=0, wait=5) is True
    assert connections.generation("primary") == 1
    await connections.client("primary").get_queue_sender(QUEUE).send_messages(ServiceBusMessage(b"x"))
    await connections.close()


class _Draws(random.Random):
    """A jitter source that records each window it is asked to draw from and draws its bottom."""

    def __init__(self) -> None:
        super().__init__(0)
        self.windows: list[tuple[float, float]] = []

    def uniform(self, a: float, b: float) -> float:
        self.windows.append((a, b))
        return a


def _opened_with(draws: _Draws) -> PairedConnections:
    """Open connections whose back-off starts at 1 ms and draws its jitter from `draws`."""
    connections = PairedConnections(
        {"primary": NamespaceEndpoint.from_fqdn(PRIMARY), "secondary": NamespaceEndpoint.from_fqdn(SECONDARY)},
        CREDENTIAL,
        FailoverStats(),
        grace=0.05,
        backoff_initial=0.001,
        backoff_max=60.0,
        backoff_rng=draws,
    )
    connections.open()
    return connections


async def test_each_replacement_waits_a_jittered_draw_from_a_doubling_window(world) -> None:
    """The runtime's back-off (`pairing.backoff`): the n-th fault in a row waits a draw from
    [0, initial * 2**(n-1)], so clients faulted by one outage do not reconnect in step."""
    draws = _Draws()
    connections = _opened_with(draws)
    for generation in (1, 2, 3):
        connections.went_down("secondary", "closed")
        await until(lambda generation=generation: connections.generation("secondary") == generation)
    assert draws.windows == [(0.0, 0.001), (0.0, 0.002), (0.0, 0.004)]
    assert await connections.close() == []


async def test_a_fault_after_the_replacement_worked_is_a_first_fault_again(world) -> None:
    """A connection that carried operations and was then cut (the wire drill's ambiguous sends cut half the
    connections they use) waits the first window again, not one more doubling: counted in a row, the harsh
    wire drill's replacements waited a median 16-23 s (up to 61 s) and 200 sends took 830 s."""
    draws = _Draws()
    connections = _opened_with(draws)
    for generation in (1, 2):  # faults in a row: nothing worked in between
        connections.went_down("secondary", "closed")
        await until(lambda generation=generation: connections.generation("secondary") == generation)
    connections.note_worked("secondary")
    connections.went_down("secondary", "closed")
    await until(lambda: connections.generation("secondary") == 3)
    connections.went_down("secondary", "closed")  # the fresh one has not worked yet: in a row again
    await until(lambda: connections.generation("secondary") == 4)
    assert draws.windows == [(0.0, 0.001), (0.0, 0.002), (0.0, 0.001), (0.0, 0.002)]
    assert await connections.close() == []


class _Longest(_Draws):
    """A jitter source that draws the top of each window."""

    def uniform(self, a: float, b: float) -> float:
        self.windows.append((a, b))
        return b


async def test_a_side_that_works_again_in_its_back_off_is_not_replaced(world) -> None:
    """After an outage the SDK reconnects the old client by itself and a ping on it brings the sender back;
    replaced after that, the client was closed under the first send (the sender's wire test, a CI rehearsal):
    a replacement still in its back-off is called off, and a call waiting for it tries the same client again."""
    stats = FailoverStats()
    connections = PairedConnections(
        {"primary": NamespaceEndpoint.from_fqdn(PRIMARY), "secondary": NamespaceEndpoint.from_fqdn(SECONDARY)},
        CREDENTIAL,
        stats,
        grace=60.0,  # the partner's grace: not what is tested here
        backoff_initial=30.0,
        backoff_rng=_Longest(),
    )
    connections.open()
    old_client = connections.client("primary")
    exc = ServiceBusConnectionError(message="connection lost")
    waiting = asyncio.create_task(connections.replaced("primary", exc, since=0, wait=20))
    await until(lambda: connections.is_down("primary"))
    connections.note_worked("primary")  # a ping on the old client, 30 s before the replacement would close it
    assert await waiting is True
    assert connections.client("primary") is old_client and not connections.is_down("primary")
    assert connections.generation("primary") == 0 and stats.connection_replacements == 0
    assert stats.replacements_called_off == 1
    await old_client.get_queue_sender(QUEUE).send_messages(ServiceBusMessage(b"x"))  # not closed under it
    assert await connections.close() == []
