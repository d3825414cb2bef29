"""Backlog receivers opened while `drain()`'s first listing runs, so the first receives start as it lands.

A receive cannot be sized before the listing reports each queue's depth and bytes (`ReceivePlan`; the byte
bound needs the message size): a receive sized blind either probes and ramps, or may bring more than the
byte bound and hold its slots for `drain_wait` on a queue that turns out empty. But a receiver's first
receive also opens its link (AMQP: authorisation and attach, a round trip or more; the fake's "open"),
and that needs nothing the listing says. Given the pair's backlog queue count
(`SyphonOptions.backlog_queue_count`, the original SDK's BacklogQueueCount, which the senders spread over),
the syphon knows the names (`contract.backlog_queue_names`) before any listing and opens their receivers
beside it: each queue's first receive then starts, at full size, the moment the listing lands.

The listing stays the authority on what exists: a named queue it does not show gets no pump (the spec calls
a missing index below the count drift, which the policy pack and `drift` report); its receiver's failed
attach is its only cost, logged, not an error of the syphon. A receiver whose open failed for any other
reason is closed and the pump opens its own, which meets the error the house way (counted, backed off, the
close/fault rule).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Sequence
from typing import Any, Generic

from pairedbus.pairing.failures import SERVICE_BUS, failure_of
from pairedbus.pairing.ports import M, Receiver, ReceiverSource

log = logging.getLogger("pairedbus.syphon")


class WarmReceivers(Generic[M]):
    """The secondary's client as the pumps see it: `get_queue_receiver` hands out a receiver opened ahead
    for that queue (asked for with the same prefetch count) while one is left, else a new one."""

    def __init__(self, client: ReceiverSource[M], *, timeout: float) -> None:
        self._client = client
        #: The longest `ready` waits for an open (the operation timeout).
        self._timeout = timeout
        #: The prefetch count the receivers opened ahead were made with (None: none opened).
        self._prefetch_count: int | None = None
        #: Receivers still opening, with their open, by queue.
        self._opening: dict[str, list[tuple[Receiver[M], asyncio.Future[object]]]] = {}
        #: Receivers open and not yet handed out, by queue.
        self._open: dict[str, list[Receiver[M]]] = {}

    @property
    def queues(self) -> set[str]:
        """The queues with receivers opening, or open and not handed out."""
        return {*self._opening, *self._open}

    def open(self, queues: Iterable[str], per_queue: int, *, prefetch_count: int) -> None:
        """Start opening `per_queue` receivers on each of `queues` (with `prefetch_count`); returns at once."""
        self._prefetch_count = prefetch_count
        for queue in queues:
            opening = self._opening.setdefault(queue, [])
            for _ in range(per_queue):
                receiver = self._client.get_queue_receiver(queue, prefetch_count=prefetch_count)
                opening.append((receiver, asyncio.ensure_future(receiver.__aenter__())))

    async def ready(self, queue: str, *, halt: asyncio.Event) -> None:
        """Wait until the receivers opening on `queue` are open (or the timeout passed, or `halt` is set): those that opened
        are handed out next; the rest are closed (the pump opens its own, and meets their error itself).
        A receive must not start while its receiver is still opening: the SDK's `_open` would close the
        half-open link and start again."""
        opening = self._opening.pop(queue, [])
        if not opening:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._timeout
        pending: set[asyncio.Future[Any]] = {task for _, task in opening}  # and `halted`, a Task[bool]
        halted = asyncio.ensure_future(halt.wait())
        try:
            while pending and not halted.done() and (left := deadline - loop.time()) > 0:
                _, pending = await asyncio.wait({*pending, halted}, timeout=left, return_when=asyncio.FIRST_COMPLETED)
                pending.discard(halted)
        finally:
            halted.cancel()
        opened = self._open.setdefault(queue, [])
        failed = []
        for receiver, task in opening:
            if task.done() and not task.cancelled() and task.exception() is None:
                opened.append(receiver)
            else:
                failed.append((receiver, task))
        await _close(queue, failed)

    def get_queue_receiver(self, queue_name: str, *, prefetch_count: int = 0) -> Receiver[M]:
        """A receiver opened ahead for `queue_name` while one is left, else a new one (the SDK's default
        prefetch count is 0)."""
        opened = self._open.get(queue_name)
        if opened and prefetch_count == self._prefetch_count:
            return opened.pop()
        return self._client.get_queue_receiver(queue_name, prefetch_count=prefetch_count)

    async def release(self, queue: str) -> None:
        """Close `queue`'s receivers not handed out (its pump ended, or the listing did not show it)."""
        await _close(queue, [*self._opening.pop(queue, []), *((r, None) for r in self._open.pop(queue, []))])

    async def close(self) -> None:
        """Close every receiver not handed out."""
        await asyncio.gather(*(self.release(queue) for queue in self.queues))


async def _close(queue: str, receivers: Sequence[tuple[Receiver[M], asyncio.Future[object] | None]]) -> None:
    """Stop the opens still running and close the receivers (best effort: none of them received anything)."""
    for _, task in receivers:
        if task is not None and not task.done():
            task.cancel()
    for receiver, task in receivers:
        if task is not None:
            error = (await asyncio.gather(task, return_exceptions=True))[0]
            if isinstance(error, Exception):  # not found: a named queue the listing does not show either
                log.debug(
                    "opening a backlog receiver ahead failed", extra={"backlog_queue": queue, "error": repr(error)}
                )
        await close_quietly(receiver, queue)


async def close_quietly(receiver: Receiver[M], queue: str) -> None:
    """Close a backlog receiver, best effort: a Service Bus error is logged, anything else raised."""
    try:
        await receiver.close()
    except Exception as exc:
        if failure_of(exc) not in SERVICE_BUS:
            raise
        log.debug("closing a backlog receiver failed", extra={"backlog_queue": queue, "error": repr(exc)})
