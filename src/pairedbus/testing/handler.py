# ruff: noqa: ASYNC109 - the signatures mirror the SDK, whose coroutines take `timeout=`
"""What every fake sender and receiver shares: liveness, faults and the per-operation round trip,
and how a sync twin drives the shared async code (`run`, `sync_operation`).

Signatures follow azure-servicebus 7.x. Every call that would be a network round trip is one
"operation": it sleeps `world.latency` once, then raises any injected fault. The fake does not
retry (the real SDK retries retryable errors `retry_total` times); a fault surfaces at once.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Protocol

from azure.servicebus.exceptions import OperationTimeoutError

from pairedbus.testing.active import active_world
from pairedbus.testing.link import INCOMING, OUTGOING, Link, Wire
from pairedbus.testing.world import ServiceBusWorld, normalize_fqdn


class ClientLike(Protocol):
    """What a handler needs of the client that opened it (client.py imports the handlers, so
    the handlers know the client only by this shape)."""

    _world: ServiceBusWorld
    fully_qualified_namespace: str
    _try_timeout: float | None
    #: The client's one connection, whose frames and bytes the world's link model charges.
    _wire: Wire


#: The SDK's bound on a receive with no max_wait_time (DEFAULT_RECEIVE_WAIT_TIME_SECS).
DEFAULT_RECEIVE_WAIT_SECONDS = 60.0


_SHUTDOWN = "The handler has already been shutdown. Please use ServiceBusClient to create a new instance."


def current_world() -> ServiceBusWorld:
    return active_world()


def _wake(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class _Handler:
    """What senders and receivers share: liveness, faults and the per-operation round trip."""

    def __init__(self, client: ClientLike, entity_name: str, fault_keys: tuple[str, ...]) -> None:
        self._client = client
        self._world = client._world
        self.fully_qualified_namespace = client.fully_qualified_namespace
        self._entity_name = entity_name
        self._fault_keys = fault_keys
        self._closed = False
        self._fault_error: BaseException | None = None
        self._waiting: set[asyncio.Future[None]] = set()
        self._running = False
        self._try_timeout: float | None = client._try_timeout

    @property
    def entity_name(self) -> str:
        return self._entity_name

    @property
    def client_identifier(self) -> str:
        return f"{type(self).__name__}-{id(self):x}"

    def _check_live(self) -> None:
        if self._closed:
            raise ValueError(_SHUTDOWN)
        if self._fault_error is not None:
            raise self._fault_error

    def _latency(self) -> float:
        ns = self._world.namespaces.get(self.fully_qualified_namespace)
        if ns is not None and ns.latency is not None:
            return ns.latency
        return self._world.latency

    def _wire_delay(self, link: Link, direction: int, frames: int, nbytes: int) -> float:
        """Seconds the link model adds for these frames on the client's connection."""
        # time.monotonic is the event loop's clock too, so sync and async twins share one wire.
        return self._client._wire.occupy(link, direction, frames, nbytes, time.monotonic())

    async def _operation(self, name: str, timeout: float | None = None, *, nbytes: int = 0) -> None:
        """One round trip: sleep the latency, after the link model's time for this operation's
        outgoing frame and bytes (bounded by `timeout` / the client's `try_timeout`: a slower
        round trip raises OperationTimeoutError), then raise any injected fault."""
        self._check_live()
        world = self._world
        latency = self._latency()
        if world.link is not None:
            latency += self._wire_delay(world.link, OUTGOING, 1, nbytes)
        if latency:
            bound = self._try_timeout if timeout is None else timeout
            if bound is not None and self._try_timeout is not None:
                bound = min(bound, self._try_timeout)
            if bound is not None and latency > bound:
                await world.round_trip(bound)
                world.operations[name] = world.operations.get(name, 0) + 1
                raise OperationTimeoutError(message=f"The {name} operation timed out after {bound} seconds.")
            await world.round_trip(latency)
            self._check_live()
        fqdn = self.fully_qualified_namespace
        keys = self._fault_keys
        if world._faults:
            for key in keys[:-1]:
                if (normalize_fqdn(fqdn), key) in world._faults:
                    world.check(fqdn, key, name)
                    return
        world.check(fqdn, keys[-1], name)

    def _wire_bytes(self, contents: Any) -> int:
        """The bytes these messages put on the wire, counted only when the link model is on."""
        return sum(content.size for content in contents) if self._world.link is not None else 0

    async def _arrive(self, frames: int, nbytes: int) -> None:
        """Messages coming back on the connection: wait out the link model's time for them."""
        link = self._world.link
        if link is not None:
            delay = self._wire_delay(link, INCOMING, frames, nbytes)
            if delay:
                await asyncio.sleep(delay)

    def _fault(self, error: BaseException) -> None:
        self._fault_error = error
        for fut in list(self._waiting):
            _wake(fut)

    async def close(self) -> None:
        self._closed = True
        self._running = False
        for fut in list(self._waiting):
            _wake(fut)

    async def __aenter__(self) -> Any:
        self._check_live()
        return self

    async def __aexit__(self, *args: Any) -> None:
        await self.close()


#: Longest single block of a sync wait before it looks at the store again.
_WAIT_SLICE = 0.25


def sync_operation(handler: _Handler, name: str, *, nbytes: int = 0) -> None:
    handler._check_live()
    world = handler._world
    latency = handler._latency()
    if world.link is not None:
        latency += handler._wire_delay(world.link, OUTGOING, 1, nbytes)
    if latency:
        time.sleep(latency)
        handler._check_live()
    fqdn = handler.fully_qualified_namespace
    for key in handler._fault_keys[:-1]:
        if any(k[1] == key for k in world._faults):
            world.check(fqdn, key, name)
            return
    world.check(fqdn, handler._fault_keys[-1], name)


def sync_arrive(handler: _Handler, frames: int, nbytes: int) -> None:
    """The sync twin of `_Handler._arrive`: block for the link model's time."""
    link = handler._world.link
    if link is not None:
        delay = handler._wire_delay(link, INCOMING, frames, nbytes)
        if delay:
            time.sleep(delay)


def run(coro: Any) -> Any:
    """Drive a fake coroutine that never truly suspends (no latency, no waiting) to completion."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise RuntimeError("the fake sync client cannot wait on asyncio")
