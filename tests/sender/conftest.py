"""Fixtures for the failover sender's tests on the Service Bus fake."""

from __future__ import annotations

import asyncio
import random
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from azure.core.credentials import AzureNamedKeyCredential
from azure.core.exceptions import HttpResponseError

from pairedbus import contract
from pairedbus.pairing.backoff import TOP_OF_WINDOW
from pairedbus.sender import PairedNamespaceClient, SendAvailabilityOptions
from pairedbus.testing.admin import AsyncServiceBusAdministrationClient

if TYPE_CHECKING:
    from pairedbus.testing import ServiceBusWorld

PRIMARY = "contoso.servicebus.windows.net"
SECONDARY = "contoso-dr.servicebus.windows.net"
QUEUE = "orders"
SESSION_QUEUE = "carts"
TOPIC = "events"
BACKLOG = contract.backlog_queue_names("contoso", 4)
CREDENTIAL = AzureNamedKeyCredential("test", "key")


async def until(condition, *, turns: int = 3000) -> None:
    for _ in range(turns):  # bounded: event-loop turns of 5 ms at most
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("condition not reached")


class ManualClock:
    """The failover clock's time, moved by the test."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class PingGate:
    """The ping task's sleep: records the interval asked for and waits until the test opens it."""

    def __init__(self) -> None:
        self.requested: list[float] = []
        self._opened = asyncio.Queue[None]()
        self.waiting = asyncio.Event()

    async def __call__(self, seconds: float) -> None:
        self.requested.append(seconds)
        self.waiting.set()
        await self._opened.get()
        self.waiting.clear()

    async def release(self) -> None:
        """Let one ping go, and wait until the ping task is back asleep (or finished)."""
        await self.waiting.wait()
        self._opened.put_nowait(None)
        for _ in range(50):
            await asyncio.sleep(0)


@pytest.fixture
def metadata_unreadable(monkeypatch):
    """The credential may send but not read entities (no Manage right): every metadata read fails."""

    async def refuse(self, queue_name, **kwargs):
        raise HttpResponseError(message="Unauthorized: Manage claim required")

    monkeypatch.setattr(AsyncServiceBusAdministrationClient, "get_queue", refuse)


@pytest.fixture
def world(servicebus_world: ServiceBusWorld) -> ServiceBusWorld:
    """The package's `servicebus_world` with the pair's entities: the primary's queues, topic and
    subscription, and the secondary's backlog queues."""
    primary = servicebus_world.namespace(PRIMARY)
    primary.create_queue(QUEUE)
    primary.create_queue(SESSION_QUEUE, requires_session=True)
    primary.create_topic(TOPIC)
    primary.create_subscription(TOPIC, "all")
    secondary = servicebus_world.namespace(SECONDARY)
    for name in BACKLOG:
        secondary.create_queue(name)
    return servicebus_world


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def gate() -> PingGate:
    return PingGate()


@pytest.fixture
def make_client(clock: ManualClock, gate: PingGate):
    def make(*, failover_interval: float = 10.0, seed: int = 1, **options: Any) -> PairedNamespaceClient:
        options.setdefault("backlog_queue_count", len(BACKLOG))
        client_kwargs = {
            k: options.pop(k) for k in ("close_fault_grace", "reconnect_backoff", "backoff_rng") if k in options
        }
        client_kwargs.setdefault("backoff_rng", TOP_OF_WINDOW)  # replacements wait the top of each window
        return PairedNamespaceClient(
            PRIMARY,
            SECONDARY,
            CREDENTIAL,
            options=SendAvailabilityOptions(failover_interval=timedelta(seconds=failover_interval), **options),
            **client_kwargs,
            rng=random.Random(seed),
            clock=clock,
            sleep=gate,
        )

    return make


def backlog_messages(world: Any) -> dict[str, list[Any]]:
    """Active messages of each backlog queue."""
    secondary = world.namespace(SECONDARY)
    return {name: secondary.queue(name).active_messages() for name in BACKLOG}


def parked(world: Any) -> list[Any]:
    return [m for messages in backlog_messages(world).values() for m in messages]


def props(message: Any) -> dict[str, Any]:
    """Application properties with str keys and str values (the SDK hands back bytes)."""
    return {
        (k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
        for k, v in (message.application_properties or {}).items()
    }
