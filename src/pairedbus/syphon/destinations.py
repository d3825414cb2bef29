"""Senders to the destination queues and topics in the primary namespace, and batching."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable, Iterable, Iterator
from enum import Enum
from typing import Final, TypeAlias, TypeVar

from azure.servicebus import ServiceBusMessage, ServiceBusMessageBatch

from pairedbus import sdk
from pairedbus.pairing.failures import SERVICE_BUS, Failure, failure_of
from pairedbus.pairing.ports import Sender, SenderSource

T = TypeVar("T")
_log = logging.getLogger("pairedbus.syphon")

#: The partition key messages sharing a batch share (`batch_key`): a session id, a partition key or
#: a message id, as the message carries it; None: unkeyed.
BatchKey: TypeAlias = Hashable | None
#: What one send carries: a batch, or a lone message that did not fit an empty batch.
Sendable: TypeAlias = ServiceBusMessageBatch | ServiceBusMessage


class _Unknown(Enum):
    KEYS_UNKNOWN = "keys unknown"


#: `Destinations.batches`' default: the messages' partition keys are not known to be one.
KEYS_UNKNOWN: Final = _Unknown.KEYS_UNKNOWN
#: A batch key, or KEYS_UNKNOWN.
MaybeKey: TypeAlias = BatchKey | _Unknown
#: A call on a destination's sender failed this way: the sender is gone (its handler shut down, by
#: its owner or its client), so the destination gets fresh senders next time.
_SENDERS_GONE = frozenset({Failure.SHUT_DOWN, Failure.INVALID, Failure.ALREADY_SETTLED})


def batch_key(message: ServiceBusMessage, *, message_id_is_key: bool = False) -> BatchKey:
    """The partition key a partitioned entity routes `message` by (partitioning.md, "Partition
    keys"): the session id; else the partition key; else, when the entity has duplicate detection
    (`message_id_is_key`), the message id; else none (round-robin over fragments). Messages sharing
    a batch must share it. Read off the AMQP sections: the SDK's properties decode through
    exceptions, a measurable cost per message."""
    raw = message.raw_amqp_message
    properties = raw.properties
    session_id = properties.group_id if properties is not None else None
    if session_id:
        return session_id
    annotations = raw.annotations
    partition_key = annotations.get(sdk.ANNOTATION_PARTITION_KEY) if annotations else None
    if partition_key is None and message_id_is_key and properties is not None:
        return properties.message_id
    return partition_key


class SenderPool:
    """One destination's senders, each carrying one send at a time.

    The SDK's aio sender loses track of sends that overlap on it (azure-servicebus 7.15.0,
    `_pyamqp/aio/_sender_async.py`: every task waiting on a send runs `update_pending_deliveries`,
    which transfers each pending delivery not yet marked sent and then assigns its own copy of the
    pending list; a transfer waits for the socket lock a reader holds, so a second task transfers
    the same delivery again and a third drops deliveries another added, whose sends then never
    return; Azure/azure-sdk-for-python#36334 reports the same). Over the wire a 10-queue drain
    stalled that way with messages the primary had stored and the syphon still held. Sends to one
    destination overlap across senders instead: an idle sender is reused (the last freed first), a
    new one is made while fewer than `most` exist, else the send waits for one to be freed."""

    def __init__(self, make: Callable[[], Sender], most: int) -> None:
        self._make = make
        self._most = most
        self.senders: list[Sender] = []
        self._free: asyncio.LifoQueue[Sender] = asyncio.LifoQueue()
        #: A sender whose link size is known: batches are made on it without I/O.
        self.sized: Sender | None = None
        #: Held while a batch opens a sender to learn the link's size.
        self.sizing = asyncio.Lock()

    def sized_sender(self) -> Sender | None:
        return self.sized

    async def take(self) -> Sender:
        if self._free.empty() and len(self.senders) < self._most:
            sender = self._make()
            self.senders.append(sender)
            return sender
        return await self._free.get()

    def give(self, sender: Sender) -> None:
        self._free.put_nowait(sender)

    async def send(self, batch: Sendable, *, seconds: float) -> None:
        """Send on a sender of its own; `seconds`: the SDK's timeout for the send."""
        sender = await self.take()
        try:
            await sender.send_messages(batch, timeout=seconds)
        finally:
            self.give(sender)


class Destinations:
    """Senders to each destination on the primary's client (`SenderPool`: up to
    `senders_per_destination`, made on first use, closed at exit) and batching.

    A parked message records only the destination's name. Over AMQP a queue and a topic are both
    addressed by that name, so a queue sender reaches either on the real service; a destination the
    service reports as not found through a queue sender is tried once as a topic before it counts
    as missing.
    """

    def __init__(
        self,
        client: SenderSource,
        *,
        timeout: float,
        keyed_by_message_id: Callable[[str], Awaitable[bool | None]] | None = None,
        senders_per_destination: int = 1,
    ) -> None:
        self._client = client
        #: Reads whether a destination keys unkeyed messages by message id (partitioned, with
        #: duplicate detection); None when it cannot tell (no right to read entities).
        self._keyed_by_message_id = keyed_by_message_id
        self._described: set[str] = set()
        #: The operation timeout every send and batch creation is bounded by.
        self._timeout = timeout
        self._senders_per_destination = senders_per_destination
        self._pools: dict[str, SenderPool] = {}
        self._topics: set[str] = set()
        #: Destinations known to key unkeyed messages by message id (partitioned, with duplicate
        #: detection): their batches hold one message id each. Given, or learned when such an
        #: entity refused a batch of several.
        self._message_id_keyed: set[str] = set()

    def learn_keyed_by_message_id(self, destination: str) -> None:
        self._message_id_keyed.add(destination)

    def know(self, destination: str, *, keyed_by_message_id: bool) -> None:
        """What a listing of the primary's entities says of `destination`: its first batch then
        needs no read of its properties (a round trip before the first send to it)."""
        self._described.add(destination)
        if keyed_by_message_id:
            self._message_id_keyed.add(destination)

    def pool(self, destination: str) -> SenderPool:
        pool = self._pools.get(destination)
        if pool is None:
            if destination in self._topics:
                pool = SenderPool(lambda: self._client.get_topic_sender(destination), self._senders_per_destination)
            else:
                pool = SenderPool(lambda: self._client.get_queue_sender(destination), self._senders_per_destination)
            self._pools[destination] = pool
        return pool

    async def forget(self, destination: str) -> None:
        pool = self._pools.pop(destination, None)
        if pool is not None:
            await asyncio.gather(*(_close(sender) for sender in pool.senders))

    async def send(self, destination: str, batch: Sendable) -> None:
        """Send one batch (or one message); returns once the broker acknowledged it."""
        await self._on_pool(destination, lambda pool: pool.send(batch, seconds=self._timeout))

    async def _on_pool(self, destination: str, operation: Callable[[SenderPool], Awaitable[T]]) -> T:
        try:
            return await operation(self.pool(destination))
        except Exception as exc:
            failure = failure_of(exc)
            if failure in _SENDERS_GONE:
                await self.forget(destination)  # make fresh senders next time
                raise
            if failure is not Failure.ENTITY_NOT_FOUND:
                raise
            await self.forget(destination)
            if destination in self._topics:
                raise
            self._topics.add(destination)
            try:
                return await operation(self.pool(destination))
            except Exception as again:
                if failure_of(again) is Failure.ENTITY_NOT_FOUND:
                    self._topics.discard(destination)
                    await self.forget(destination)
                raise

    async def batches(
        self, destination: str, messages: list[ServiceBusMessage], *, key: MaybeKey = KEYS_UNKNOWN
    ) -> list[tuple[Sendable, list[int], BatchKey]]:
        """Pack `messages` (in order) into as few sendable units as fit; each unit is a
        ServiceBusMessageBatch, or a lone message that did not fit an empty batch (it may still fit
        the entity's larger single-message limit on Premium). Returns (unit, message indexes, the
        partition key all of the unit's messages share, or None). `key`: the `batch_key` every
        message was grouped by, when the caller knows it (it is then not read again per message)."""
        units: list[tuple[Sendable, list[int], BatchKey]] = []
        if self._keyed_by_message_id is not None and destination not in self._described:
            self._described.add(destination)
            try:
                async with asyncio.timeout(self._timeout):
                    if await self._keyed_by_message_id(destination):
                        self._message_id_keyed.add(destination)
            except Exception as exc:  # the rule is also learned from a refused batch
                _log.info("cannot read destination %r's properties: %r", destination, exc)
        message_id_is_key = destination in self._message_id_keyed
        if key is KEYS_UNKNOWN or (key is None and message_id_is_key):
            groups: Iterable[tuple[BatchKey, list[int]]] = _by_key(messages, message_id_is_key=message_id_is_key)
        else:  # one key: a session or partition key is the batch key whatever the destination
            groups = ((key, list(range(len(messages)))),)
        for key, key_indexes in groups:
            batch = await self._on_pool(destination, self._new_batch)
            members: list[int] = []
            for index in key_indexes:
                # A body larger than the batch's room cannot fit: not encoded only to find that out
                # (a 200 KB message fills a batch, so each of them would be encoded twice).
                fits = (
                    not members or sdk.data_body_size(messages[index]) <= batch.max_size_in_bytes - batch.size_in_bytes
                )
                if fits and sdk.add_to_batch(batch, messages[index]):  # encodes the message once
                    members.append(index)
                    continue
                if members:
                    units.append((batch, members, key))
                    batch = await self._on_pool(destination, self._new_batch)
                    members = []
                    if sdk.add_to_batch(batch, messages[index]):
                        members.append(index)
                        continue
                units.append((messages[index], [index], key))
            if members:
                units.append((batch, members, key))
        return units

    async def _new_batch(self, pool: SenderPool) -> ServiceBusMessageBatch:
        # azure-servicebus opens the link only while it has not learned the link's size
        # (`create_message_batch`: `if not self._max_message_size_on_link`); after that, no I/O, so
        # batches are made on the sized sender while it sends.
        sized = pool.sized_sender()
        if sized is not None:
            return await sized.create_message_batch()
        # The first batch opens a sender, taken from the pool: the SDK's aio sender cannot be
        # opened by two tasks at once (over the wire the second raised AttributeError: 'NoneType'
        # object has no attribute 'create_sender_link', and every pump then backed off). Pumps of
        # other backlog queues wait for the first to open it.
        async with pool.sizing:
            sized = pool.sized_sender()
            if sized is not None:  # opened by the task this one waited for
                return await sized.create_message_batch()
            sender = await pool.take()
            try:
                async with asyncio.timeout(self._timeout):  # it opens the link: bounded like a send
                    batch = await sender.create_message_batch()
            finally:
                pool.give(sender)
            pool.sized = sender
            return batch

    async def close(self) -> None:
        """Close every sender, side by side: over the wire a sender's close waits for the broker's
        detach, end and close answers, so one after another they add up (docs/benchmarks.md)."""
        pools, self._pools = list(self._pools.values()), {}
        await asyncio.gather(*(_close(sender) for pool in pools for sender in pool.senders))


async def _close(sender: Sender) -> None:
    try:
        await sender.close()
    except Exception as exc:
        if failure_of(exc) not in SERVICE_BUS:
            raise
        # already shut down with its error


def _by_key(messages: list[ServiceBusMessage], *, message_id_is_key: bool) -> Iterator[tuple[BatchKey, list[int]]]:
    groups: dict[BatchKey, list[int]] = {}
    for index, message in enumerate(messages):
        groups.setdefault(batch_key(message, message_id_is_key=message_id_is_key), []).append(index)
    yield from groups.items()
