# ruff: noqa: ASYNC109 - the signatures mirror the SDK, whose coroutines take `timeout=`
"""What every fake sender and receiver shares, on one core with an aio and a sync twin, as
azure-servicebus keeps `BaseHandler` with its `aio` twin over shared mixins.

`HandlerCore` holds liveness, faults, the link model's cost and the per-operation round trip's
bookkeeping; its I/O is two coroutine hooks, `_operation` and `_arrive`. `AsyncHandler` awaits
them on the event loop; `SyncHandler` blocks its thread in them and drives the shared coroutines
with `run`, which never suspends.

Signatures follow azure-servicebus 7.x. Every call that would be a network round trip is one
"operation": it sleeps `world.latency` once, then raises any injected fault. The fake does not
retry (the real SDK retries retryable errors `retry_total` times); a fault surfaces at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from typing import Any, Protocol, Self, TypeVar

from pairedbus.servicebus.link import INCOMING, OUTGOING, Link, Wire
from pairedbus.servicebus.world import ServiceBusWorld
from pairedbus.testing.active import active_world
from pairedbus.testing.errors import operation_timed_out

T = TypeVar("T")


class ClientLike(Protocol):
    """What a handler needs of the client that opened it (client.py imports the handlers, so
    the handlers know the client only by this shape)."""

    world: ServiceBusWorld
    fully_qualified_namespace: str
    try_timeout: float | None
    #: The client's one connection, whose frames and bytes the world's link model charges.
    wire: Wire


#: The SDK's bound on a receive with no max_wait_time (DEFAULT_RECEIVE_WAIT_TIME_SECS).
DEFAULT_RECEIVE_WAIT_SECONDS = 60.0


_SHUTDOWN = "The handler has already been shutdown. Please use ServiceBusClient to create a new instance."


def current_world() -> ServiceBusWorld:
    return active_world()


def wake(fut: asyncio.Future[None]) -> None:
    """Resolve a waiter's future (a no-op if it is done already)."""
    if not fut.done():
        fut.set_result(None)


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Drive a fake coroutine that never truly suspends (the sync twins' hooks block instead)."""
    try:
        coro.send(None)
    except StopIteration as done:
        result: T = done.value  # StopIteration carries the coroutine's T as Any
        return result
    coro.close()
    raise RuntimeError("the fake sync client cannot wait on asyncio")


class HandlerCore:
    """Liveness, faults and the per-operation round trip; the I/O is the twins' `_operation`
    and `_arrive`."""

    def __init__(self, client: ClientLike, entity_name: str, fault_keys: tuple[str, ...]) -> None:
        self._client = client
        self._world = client.world
        self.fully_qualified_namespace = client.fully_qualified_namespace
        self._entity_name = entity_name
        self._fault_keys = fault_keys
        self._closed = False
        self._fault_error: BaseException | None = None
        self._waiting: set[asyncio.Future[None]] = set()
        self._running = False
        self._try_timeout: float | None = client.try_timeout

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
        return self._client.wire.occupy(link, direction, frames, nbytes, time.monotonic())

    def _outgoing_delay(self, nbytes: int) -> float:
        """An operation's round trip: the latency after its outgoing frame and bytes."""
        latency = self._latency()
        link = self._world.link
        if link is not None:
            latency += self._wire_delay(link, OUTGOING, 1, nbytes)
        return latency

    def _incoming_delay(self, frames: int, nbytes: int) -> float:
        link = self._world.link
        return self._wire_delay(link, INCOMING, frames, nbytes) if link is not None else 0.0

    def _raise_fault(self, name: str) -> None:
        """Count the operation and raise the fault injected on it, if any."""
        self._world.check_first(self.fully_qualified_namespace, self._fault_keys, name)

    def _wire_bytes(self, contents: Any) -> int:
        """The bytes these messages put on the wire, counted only when the link model is on."""
        return sum(content.size for content in contents) if self._world.link is not None else 0

    def inject_fault(self, error: BaseException) -> None:
        """The connection faulted: every later call raises `error`, waiting receives wake up."""
        self._fault_error = error
        for fut in list(self._waiting):
            wake(fut)

    def shut(self) -> None:
        """Close without a round trip: what both twins' `close` does (and the client's, for its
        handlers)."""
        self._closed = True
        self._running = False
        for fut in list(self._waiting):
            wake(fut)

    async def _operation(self, name: str, timeout: float | None = None, *, nbytes: int = 0) -> None:
        """One round trip (bounded by `timeout` / the client's `try_timeout`), then any fault."""
        raise NotImplementedError

    async def _arrive(self, frames: int, nbytes: int) -> None:
        """Messages coming back on the connection: the link model's time for them."""
        raise NotImplementedError


class AsyncHandler(HandlerCore):
    """The aio twin's I/O: round trips and transfers are awaited on the event loop."""

    async def _operation(self, name: str, timeout: float | None = None, *, nbytes: int = 0) -> None:
        """One round trip: sleep the latency, after the link model's time for this operation's
        outgoing frame and bytes (bounded by `timeout` / the client's `try_timeout`: a slower
        round trip raises OperationTimeoutError), then raise any injected fault."""
        self._check_live()
        world = self._world
        latency = self._outgoing_delay(nbytes)
        if latency:
            bound = self._try_timeout if timeout is None else timeout
            if bound is not None and self._try_timeout is not None:
                bound = min(bound, self._try_timeout)
            if bound is not None and latency > bound:
                await world.round_trip(bound)
                world.operations[name] = world.operations.get(name, 0) + 1
                raise operation_timed_out(name, bound)
            await world.round_trip(latency)
            self._check_live()
        self._raise_fault(name)

    async def _arrive(self, frames: int, nbytes: int) -> None:
        delay = self._incoming_delay(frames, nbytes)
        if delay:
            await asyncio.sleep(delay)

    async def close(self) -> None:
        self.shut()

    async def __aenter__(self) -> Self:
        self._check_live()
        return self

    async def __aexit__(self, *args: Any) -> None:
        await self.close()


class SyncHandler(HandlerCore):
    """The sync twin's I/O: round trips and transfers block the calling thread."""

    async def _operation(self, name: str, timeout: float | None = None, *, nbytes: int = 0) -> None:
        self._check_live()
        latency = self._outgoing_delay(nbytes)
        if latency:
            time.sleep(latency)  # noqa: ASYNC251 - the sync twin blocks its thread by design; run() drives it
            self._check_live()
        self._raise_fault(name)

    async def _arrive(self, frames: int, nbytes: int) -> None:
        delay = self._incoming_delay(frames, nbytes)
        if delay:
            time.sleep(delay)  # noqa: ASYNC251 - as above

    def close(self) -> None:
        self.shut()

    def __enter__(self) -> Self:
        self._check_live()
        return self

    def __exit__(self, *args: Any) -> None:
        self.close()
