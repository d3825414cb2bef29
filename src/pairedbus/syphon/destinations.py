"""Senders to the destination queues and topics in the primary namespace, and batching."""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Any, TypeVar

from azure.servicebus import ServiceBusMessage
from azure.servicebus.exceptions import MessageSizeExceededError, MessagingEntityNotFoundError, ServiceBusError

from pairedbus import sdk

T = TypeVar("T")
_log = logging.getLogger("pairedbus.syphon")

#: `Destinations.batches`' default: the messages' partition keys are not known to be one.
KEYS_UNKNOWN: Any = object()


def batch_key(message: ServiceBusMessage, *, message_id_is_key: bool = False) -> Any:
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


class Destinations:
    """One sender per destination on the primary's client, created on first use, closed at exit.

    A parked message records only the destination's name. Over AMQP a queue and a topic are both
    addressed by that name, so a queue sender reaches either on the real service; a destination the
    service reports as not found through a queue sender is tried once as a topic before it counts
    as missing.
    """

    def __init__(
        self, client: Any, *, timeout: float, describe: Callable[[str], Awaitable[bool | None]] | None = None
    ) -> None:
        self._client = client
        #: Reads whether a destination keys unkeyed messages by message id (partitioned, with
        #: duplicate detection); None when it cannot tell (no right to read entities).
        self._describe = describe
        self._described: set[str] = set()
        #: The operation timeout every send and batch creation is bounded by.
        self._timeout = timeout
        self._senders: dict[str, Any] = {}
        #: Senders that made a batch: their link is open, so the next batches need no bound (a
        #: timer per batch, and a large message is a batch of its own).
        self._sized: weakref.WeakSet[Any] = weakref.WeakSet()
        #: Held while a sender's link is being opened by its first batch.
        self._opening: weakref.WeakKeyDictionary[Any, asyncio.Lock] = weakref.WeakKeyDictionary()
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

    def sender(self, destination: str) -> Any:
        sender = self._senders.get(destination)
        if sender is None:
            if destination in self._topics:
                sender = self._client.get_topic_sender(destination)
            else:
                sender = self._client.get_queue_sender(destination)
            self._senders[destination] = sender
        return sender

    async def forget(self, destination: str) -> None:
        sender = self._senders.pop(destination, None)
        if sender is not None:
            try:
                await sender.close()
            except (ServiceBusError, ValueError):
                pass  # already shut down with its error

    async def send(self, destination: str, batch: Any) -> None:
        """Send one batch (or one message); returns once the broker acknowledged it."""
        await self._on_sender(destination, lambda sender: sender.send_messages(batch, timeout=self._timeout))

    async def _on_sender(self, destination: str, operation: Callable[[Any], Awaitable[T]]) -> T:
        try:
            return await operation(self.sender(destination))
        except MessageSizeExceededError:
            raise
        except ValueError:
            # "The handler has already been shutdown": make a fresh sender next time.
            await self.forget(destination)
            raise
        except MessagingEntityNotFoundError:
            await self.forget(destination)
            if destination in self._topics:
                raise
            self._topics.add(destination)
            try:
                return await operation(self.sender(destination))
            except MessagingEntityNotFoundError:
                self._topics.discard(destination)
                await self.forget(destination)
                raise

    async def batches(
        self, destination: str, messages: list[Any], *, key: Any = KEYS_UNKNOWN
    ) -> list[tuple[Any, list[int], Any]]:
        """Pack `messages` (in order) into as few sendable units as fit; each unit is a
        ServiceBusMessageBatch, or a lone message that did not fit an empty batch (it may still fit
        the entity's larger single-message limit on Premium). Returns (unit, message indexes, the
        partition key all of the unit's messages share, or None). `key`: the `batch_key` every
        message was grouped by, when the caller knows it (it is then not read again per message)."""
        units: list[tuple[Any, list[int], Any]] = []
        if self._describe is not None and destination not in self._described:
            self._described.add(destination)
            try:
                async with asyncio.timeout(self._timeout):
                    if await self._describe(destination):
                        self._message_id_keyed.add(destination)
            except Exception as exc:  # the rule is also learned from a refused batch
                _log.info("cannot read destination %r's properties: %r", destination, exc)
        message_id_is_key = destination in self._message_id_keyed
        if key is KEYS_UNKNOWN or (key is None and message_id_is_key):
            groups: Iterable[tuple[Any, list[int]]] = _by_key(messages, message_id_is_key=message_id_is_key)
        else:  # one key: a session or partition key is the batch key whatever the destination
            groups = ((key, list(range(len(messages)))),)
        for key, key_indexes in groups:
            batch = await self._on_sender(destination, self._new_batch)
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
                    batch = await self._on_sender(destination, self._new_batch)
                    members = []
                    if sdk.add_to_batch(batch, messages[index]):
                        members.append(index)
                        continue
                units.append((messages[index], [index], key))
            if members:
                units.append((batch, members, key))
        return units

    async def _new_batch(self, sender: Any) -> Any:
        # azure-servicebus opens the link only while it has not learned the link's size
        # (`create_message_batch`: `if not self._max_message_size_on_link`); after that, no I/O.
        if sender in self._sized:
            return await sender.create_message_batch()
        # The first batch opens the link, and the SDK's aio sender cannot be opened by two tasks at
        # once: over the wire the second raised AttributeError ('NoneType' object has no attribute
        # 'create_sender_link') and every pump then backed off. Pumps of other backlog queues wait
        # for the first to open it.
        opening = self._opening.get(sender)
        if opening is None:
            opening = self._opening[sender] = asyncio.Lock()
        async with opening:
            if sender in self._sized:
                return await sender.create_message_batch()
            async with asyncio.timeout(self._timeout):  # it may open the link: bounded like a send
                batch = await sender.create_message_batch()
            self._sized.add(sender)
        return batch

    async def close(self) -> None:
        for destination in list(self._senders):
            await self.forget(destination)


def _by_key(messages: list[Any], *, message_id_is_key: bool) -> Iterator[tuple[Any, list[int]]]:
    groups: dict[Any, list[int]] = {}
    for index, message in enumerate(messages):
        groups.setdefault(batch_key(message, message_id_is_key=message_id_is_key), []).append(index)
    yield from groups.items()
