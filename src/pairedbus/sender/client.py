"""`PairedNamespaceClient`: senders with send availability over a primary/secondary pair.

Owns one `azure.servicebus.aio.ServiceBusClient` per namespace, the backlog senders (one per
backlog queue, shared by every sender of the client), the backlog rotation, one ping task per
switched entity and, with `enable_syphon`, a syphon task. `close()` (or leaving the `async with`)
cancels and awaits the ping tasks, stops and awaits the syphon, and closes every sender and
client it opened.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

from azure.servicebus import aio as servicebus_aio  # looked up at call time: the fake patches it

from pairedbus import contract
from pairedbus.sender.availability import EntityAvailability, EntityKind, FailoverStats
from pairedbus.sender.failover_clock import Clock, FailoverClock
from pairedbus.sender.options import SendAvailabilityOptions
from pairedbus.sender.ping import ping_message
from pairedbus.sender.rotation import BacklogRotation
from pairedbus.sender.sender import PairedSender

_log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[object]]


class PairedNamespaceClient:
    """`async with PairedNamespaceClient(primary=..., secondary=..., credential=...) as client:`

    `primary`/`secondary` are fully qualified namespaces (`contoso.servicebus.windows.net`).
    `rng`, `clock` and `sleep` are injectable for tests and drills (the backlog pick, the failover
    clock and the wait between pings); `client_kwargs` go to both ServiceBusClients.
    """

    def __init__(
        self,
        primary: str,
        secondary: str,
        credential: Any,
        *,
        options: SendAvailabilityOptions | None = None,
        rng: random.Random | None = None,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
        client_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if primary == secondary:
            raise ValueError("primary and secondary must be different namespaces")
        self.primary = primary
        self.secondary = secondary
        self.options = options or SendAvailabilityOptions()
        self._credential = credential
        self._client_kwargs = client_kwargs or {}
        self._clock = clock
        self._sleep = sleep
        self.rotation = BacklogRotation(
            contract.backlog_queue_names(contract.namespace_from_fqdn(primary), self.options.backlog_queue_count),
            rng=rng,
        )
        self.stats = FailoverStats()
        self._entities: dict[tuple[EntityKind, str], EntityAvailability] = {}
        self._senders: set[PairedSender] = set()
        #: Every ping task until it has finished (a returning one still closes its sender).
        self._ping_tasks: set[asyncio.Task[None]] = set()
        self._backlog_senders: dict[str, Any] = {}
        self._primary_client: Any = None
        self._secondary_client: Any = None
        self._syphon_stop: asyncio.Event | None = None
        self._syphon_task: asyncio.Task[None] | None = None
        self._closed = False

    # --- lifecycle ----------------------------------------------------------------------

    async def __aenter__(self) -> PairedNamespaceClient:
        self._open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def _open(self) -> None:
        if self._closed:
            raise ValueError("the paired namespace client is closed")
        if self._primary_client is not None:
            return
        self._primary_client = servicebus_aio.ServiceBusClient(self.primary, self._credential, **self._client_kwargs)
        self._secondary_client = servicebus_aio.ServiceBusClient(
            self.secondary, self._credential, **self._client_kwargs
        )
        if self.options.enable_syphon:
            self._syphon_stop = asyncio.Event()
            self._syphon_task = asyncio.create_task(self._run_syphon(self._syphon_stop), name="pairedbus-syphon")

    async def close(self) -> None:
        """Close everything this client opened; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        pings = list(self._ping_tasks)
        for task in pings:
            task.cancel()
        errors: list[BaseException] = []
        for result in await asyncio.gather(*pings, return_exceptions=True):
            if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
                errors.append(result)
        if self._syphon_task is not None:
            assert self._syphon_stop is not None
            self._syphon_stop.set()
            # The syphon settles what it holds and stops; one grace period, then crash semantics.
            done, _ = await asyncio.wait({self._syphon_task}, timeout=contract.CLOSE_FAULT_GRACE.total_seconds())
            if not done:
                self._syphon_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                try:
                    await self._syphon_task
                except Exception as exc:
                    errors.append(exc)
        for sender in list(self._senders):
            await _close_quietly(sender, errors)
        for sender in self._backlog_senders.values():
            await _close_quietly(sender, errors)
        for client in (self._primary_client, self._secondary_client):
            if client is not None:
                await _close_quietly(client, errors)
        if errors:
            _log.warning("errors while closing the paired namespace client: %r", errors)

    async def _run_syphon(self, stop: asyncio.Event) -> None:
        from pairedbus.syphon import Syphon

        async with Syphon(primary=self.primary, secondary=self.secondary, credential=self._credential) as syphon:
            await syphon.run(stop)

    # --- senders ------------------------------------------------------------------------

    def get_queue_sender(self, queue_name: str) -> PairedSender:
        return self._sender(EntityKind.QUEUE, queue_name)

    def get_topic_sender(self, topic_name: str) -> PairedSender:
        return self._sender(EntityKind.TOPIC, topic_name)

    def _sender(self, kind: EntityKind, name: str) -> PairedSender:
        self._open()
        if contract.is_backlog_queue_name(name):
            raise ValueError(f"{name!r} is a backlog queue; send to the entity the message is meant for")
        availability = self._availability(kind, name)
        primary_sender = self._primary_entity_sender(kind, name)
        # Load spreads over clients that do not know each other: a random queue per sender.
        backlog_queue = self.rotation.pick() or self.rotation.queues[0]
        sender = PairedSender(self, availability, primary_sender, backlog_queue)
        self._senders.add(sender)
        return sender

    def _availability(self, kind: EntityKind, name: str) -> EntityAvailability:
        key = (kind, name)
        availability = self._entities.get(key)
        if availability is None:
            clock = FailoverClock(self.options.failover_interval, clock=self._clock)
            availability = self._entities[key] = EntityAvailability(name, kind, clock)
        return availability

    def _primary_entity_sender(self, kind: EntityKind, name: str) -> Any:
        if kind is EntityKind.QUEUE:
            return self._primary_client.get_queue_sender(name)
        return self._primary_client.get_topic_sender(name)

    def _backlog_sender(self, queue: str) -> Any:
        sender = self._backlog_senders.get(queue)
        if sender is None:
            sender = self._backlog_senders[queue] = self._secondary_client.get_queue_sender(queue)
        return sender

    def _forget_sender(self, sender: PairedSender) -> None:
        self._senders.discard(sender)

    def is_switched(self, name: str, *, topic: bool = False) -> bool:
        availability = self._entities.get((EntityKind.TOPIC if topic else EntityKind.QUEUE, name))
        return availability is not None and availability.switched

    # --- failover and return ------------------------------------------------------------

    def _fail_over_now(self, availability: EntityAvailability) -> bool:
        """After a triggering error: True if the entity is (now) switched to the backlog."""
        if availability.switched:
            return True
        if not availability.failover_clock.record_failure():
            return False
        availability.switched = True
        self.stats.failovers += 1
        _log.warning("%s %r switched to the backlog", availability.kind.value, availability.name)
        if not self._closed:
            task = asyncio.create_task(
                self._ping_until_available(availability), name=f"pairedbus-ping:{availability.name}"
            )
            availability.ping_task = task
            self._ping_tasks.add(task)
            task.add_done_callback(self._ping_tasks.discard)
        return True

    def _return_to_primary(self, availability: EntityAvailability) -> None:
        availability.switched = False
        availability.failover_clock.record_success()
        availability.ping_task = None
        self.stats.returns_to_primary += 1
        _log.warning("%s %r is available again: back to the primary", availability.kind.value, availability.name)

    async def _ping_until_available(self, availability: EntityAvailability) -> None:
        """One ping per `ping_primary_interval` until one succeeds; then every sender of the
        entity is back on the primary at once, and the pings stop."""
        interval = self.options.ping_primary_interval.total_seconds()
        sender = self._primary_entity_sender(availability.kind, availability.name)
        try:
            while availability.switched:
                await self._sleep(interval)
                try:
                    # Bounded: a ping that hangs must not outlive its interval.
                    await sender.send_messages(ping_message(session=availability.requires_session), timeout=interval)
                except Exception as exc:
                    self.stats.pings_failed += 1
                    _log.debug("ping of %r failed: %r", availability.name, exc)
                    continue
                self.stats.pings_sent += 1
                self._return_to_primary(availability)
        finally:
            await sender.close()


async def _close_quietly(closable: Any, errors: list[BaseException]) -> None:
    try:
        await closable.close()
    except Exception as exc:
        errors.append(exc)
