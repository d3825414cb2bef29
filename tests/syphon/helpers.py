"""Helpers for the syphon tests on the Service Bus fake: two namespaces, backlog queues as the spec makes them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import azure.servicebus.aio as servicebus_aio
from azure.servicebus import ServiceBusMessage

from pairedbus import contract, durations
from pairedbus.pairing.aliasing import park_message
from pairedbus.pairing.backoff import TOP_OF_WINDOW
from pairedbus.servicebus.world import ServiceBusWorld
from pairedbus.syphon import Syphon

PRIMARY_NAME = "contoso-primary"
PRIMARY = contract.service_bus_fqdn(PRIMARY_NAME)
SECONDARY = contract.service_bus_fqdn("contoso-secondary")
CREDENTIAL = object()

#: Quick settings for tests: short receives, back-offs and grace (the defaults are minutes).
FAST: dict[str, Any] = {
    "drain_wait": timedelta(milliseconds=50),
    "relist_interval": timedelta(milliseconds=50),
    "backoff_initial": timedelta(milliseconds=10),
    "backoff_max": timedelta(milliseconds=80),
    "retry_hold": timedelta(milliseconds=30),
    "close_fault_grace": timedelta(milliseconds=100),
}


def backlog_settings(**overrides: Any) -> dict[str, Any]:
    """The spec's backlog queue table as administration-client keywords."""
    settings: dict[str, Any] = {}
    for prop, value in contract.BACKLOG_QUEUE_PROPERTIES.items():
        field = contract.ARM_TO_SDK_QUEUE_FIELD[prop]
        settings[field] = durations.duration_timedelta(value) if prop in contract.DURATION_PROPERTIES else value  # type: ignore[arg-type]
    settings.update(overrides)
    return settings


def create_backlog_queues(
    world: ServiceBusWorld, count: int = 3, *, prefix: str = PRIMARY_NAME, **overrides: Any
) -> list[str]:
    names = contract.backlog_queue_names(prefix, count)
    for name in names:
        world.namespace(SECONDARY).create_queue(name, **backlog_settings(**overrides))
    return names


async def send_raw(queue: str, *messages: ServiceBusMessage, namespace: str = SECONDARY) -> None:
    async with servicebus_aio.ServiceBusClient(namespace, CREDENTIAL) as client:
        async with client.get_queue_sender(queue) as sender:
            await sender.send_messages(list(messages))


async def park(destination: str, *messages: ServiceBusMessage, backlog: int = 0, prefix: str = PRIMARY_NAME) -> None:
    """What the failover sender does: park each message in a backlog queue."""
    parked = [park_message(m, destination) for m in messages]
    await send_raw(contract.backlog_queue_name(prefix, backlog), *parked)


def bodies(entity: Any) -> list[bytes]:
    """The bodies of an entity's active messages in the fake, sorted."""
    return sorted(b"".join(m.body) for m in entity.active_messages())


def make_syphon(world: ServiceBusWorld, **overrides: Any) -> Syphon:
    """A syphon on the fake with the FAST settings; its back-offs wait the top of each window
    (no jitter), as the tests' timings assume, unless a test passes its own `rng`."""
    options = {**FAST, "clock": world.clock.now, "rng": TOP_OF_WINDOW, **overrides}
    return Syphon(primary=PRIMARY, secondary=SECONDARY, credential=CREDENTIAL, **options)


async def eventually(condition: Callable[[], bool], *, attempts: int = 2_000) -> None:
    """Yield to the loop until `condition` holds (bounded by attempts, not by a clock)."""
    for _ in range(attempts):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("condition never held")


def backlog_depth(world: ServiceBusWorld, prefix: str = PRIMARY_NAME) -> int:
    ns = world.namespace(SECONDARY)
    return sum(
        q.message_counts()["active"]
        for q in ns.queues()
        if (contract.parse_backlog_queue_name(q.name) or ("",))[0] == prefix
    )


class FastForward:
    """Runs the fake's clock ahead of real time (`step` of fake time every `every` real seconds),
    so locks lapse and receives time out quickly without the test depending on wall time."""

    def __init__(self, world: ServiceBusWorld, *, step: float = 0.25, every: float = 0.005) -> None:
        self._world = world
        self._step = step
        self._every = every
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._every)
            self._world.clock.advance(self._step)

    async def __aenter__(self) -> FastForward:
        self._task = asyncio.create_task(self._run())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
