"""`PairedSender`: the failover sender of one queue or topic (paired-namespaces.md).

What the caller sees:

- Healthy primary: the SDK sender's `send_messages`/`schedule_messages`, nothing added but a
  message id where one is missing and the SessionId/PartitionKey check.
- While the failover clock runs (retryable errors and timeouts, no success yet for less than
  `failover_interval`): the primary's error propagates, exactly as without pairing, and the
  caller retries as it would anyway. Nothing of that call was parked, so a retry cannot
  duplicate it in the backlog (the message id makes a repeat on the primary recognisable).
- The triggering error that finds the interval elapsed switches the entity: that same call is
  parked in the backlog and returns normally, and so do later calls until a ping succeeds.
- Errors that never fail over (size, entity not found, authorization) always reach the caller;
  while switched, the sender raises them itself for what the primary is known to refuse
  (`EntityFailover.refuse_unparkable`): no "sent" for a message that can never arrive. The
  primary's own "SessionId was not set" refusal is such a fact; and a message without a session id
  sent while switched before the queue's metadata was read waits (at most the operation timeout)
  for that read instead of parking blindly.
- While switched, `schedule_messages` parks the messages with their schedule aliased and
  returns an empty list: a parked message has no sequence number in the primary to cancel.
- A list or batch is parked whole when it fits one backlog batch. One that no longer fits once
  aliased is sent as several backlog batches; if a later one fails on every backlog queue, the
  earlier ones stay parked and the error reaches the caller. A retry parks them again under the
  same message ids, and the destination's duplicate detection drops the second copy.

The sender holds its entity's `EntityFailover` (the state machine), the client's `Backlog`
(rotation and backlog sends) and `PairedConnections` (for a fresh primary handler after a
connection was replaced) — never the client itself.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable, Mapping

from azure.servicebus import ServiceBusMessage, ServiceBusMessageBatch
from azure.servicebus.amqp import AmqpAnnotatedMessage
from azure.servicebus.exceptions import MessageSizeExceededError, ServiceBusConnectionError

from pairedbus import contract, sdk
from pairedbus.pairing.aliasing import parked_copy
from pairedbus.pairing.connections import PRIMARY
from pairedbus.pairing.ports import Closable, EntitySender, Outgoing
from pairedbus.sdk import sendable_as_is
from pairedbus.sender.backlog import Backlog
from pairedbus.sender.connections import PairedConnections
from pairedbus.sender.errors import BACKLOG_HOP_NOTE, is_shut_down_handler, may_be_a_closed_handler, raised_by_backlog
from pairedbus.sender.failover import EntityFailover, EntityKind, FailoverStats
from pairedbus.sender.outbound import prepare, prepare_all
from pairedbus.sender.turns import Turns

#: What `send_messages` takes: a message, a list of them (sent as one batch) or a batch.
MessageInput = Outgoing


class _IdAssigningBatch(ServiceBusMessageBatch):
    """A batch made by `PairedSender.create_message_batch`: ids are assigned as messages are
    added, before they are encoded into the batch."""

    def add_message(self, message: ServiceBusMessage | AmqpAnnotatedMessage | Mapping[str, object]) -> None:
        prepare(message)
        super().add_message(message)


class PairedSender:
    """Send to a primary queue or topic, failing over to the backlog. Async context manager."""

    def __init__(
        self,
        failover: EntityFailover,
        backlog: Backlog,
        connections: PairedConnections,
        stats: FailoverStats,
        *,
        backlog_queue: str,
        timeout: float,
        on_close: Callable[[PairedSender], object] = lambda sender: None,
    ) -> None:
        self._failover = failover
        self._backlog = backlog
        self._connections = connections
        self._stats = stats
        self._timeout = timeout
        self._on_close = on_close
        #: The failover clock's time source: a failing call's run starts when the call began.
        self._now = failover.failover_clock.now
        self._primary: EntitySender | None = None
        self._primary_generation = -1
        #: Calls on the primary's SDK sender take turns, each bounded (turns.py): a caller may share
        #: this sender between tasks, and the SDK's aio sender loses track of overlapping calls.
        self._turns = Turns(self._discard_primary, connections.watchdog)
        #: The backlog queue this sender picked at random when created (re-picked if it leaves
        #: the rotation).
        self.backlog_queue = backlog_queue
        self._closed = False

    @property
    def entity_name(self) -> str:
        return self._failover.name

    @property
    def switched(self) -> bool:
        """Whether sends to this entity currently go to the backlog."""
        return self._failover.switched

    async def __aenter__(self) -> PairedSender:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._on_close(self)
            if self._primary is not None and self._primary_generation == self._connections.generation(PRIMARY):
                await self._primary.close()

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError(f"the sender for {self.entity_name!r} is closed")

    def _primary_sender(self) -> EntitySender:
        """The SDK sender on the primary, made again after the connection was replaced."""
        generation = self._connections.generations[PRIMARY]
        primary = self._primary
        if primary is None or generation != self._primary_generation:  # None: at generation -1 too
            client = self._connections.client(PRIMARY)
            kind = self._failover.kind
            primary = self._primary = (
                client.get_queue_sender(self.entity_name)
                if kind is EntityKind.QUEUE
                else client.get_topic_sender(self.entity_name)
            )
            self._primary_generation = generation
        return primary

    def _discard_primary(self, handler: Closable) -> None:
        """The primary's SDK sender had a call cut at its bound: the next call makes a fresh one."""
        if handler is self._primary:
            self._primary = None
            self._primary_generation = -1
        self._connections.discard(handler)

    # --- sending ------------------------------------------------------------------------

    async def send_messages(self, message: MessageInput, *, timeout: float | None = None) -> None:  # noqa: ASYNC109 (the SDK's keyword)
        """Send a message, a list (one batch, as the SDK does) or a batch; see the module doc."""
        if self._closed:
            self._check_open()
        # The common case, a message that has an id and no session id, in one call; anything else
        # (a subclass, a list, a batch) is prepared by `_prepared`.
        if type(message) is not ServiceBusMessage or not sendable_as_is(message):
            prepared = self._prepared(message)
            if prepared is None:
                return
            message = prepared
        failover = self._failover
        if not failover.switched:
            primary = self._primary
            if primary is None or self._primary_generation != self._connections.primary_generation:
                primary = self._primary_sender()
            started = self._now()
            bound = self._timeout if timeout is None else timeout
            turns = self._turns
            try:
                if turns.busy:  # another call on this sender's handler: wait for the turn, within the bound
                    await turns.call(
                        primary,
                        lambda left: primary.send_messages(message, timeout=left),
                        bound,
                        what=f"the send to {self.entity_name!r}",
                    )
                else:  # `Turns.call`'s uncontended case, inlined: no coroutine or closure per send
                    number = turns.enter(primary, bound)
                    try:
                        await primary.send_messages(message, timeout=bound)
                    except asyncio.CancelledError:
                        turns.raise_if_cut(number, f"the send to {self.entity_name!r}")
                        raise
                    finally:
                        turns.leave()
            except Exception as exc:
                self._primary_failed(exc, started)  # raises unless the call is to be parked
            else:
                if failover.listening:
                    self._primary_accepted(message)
                return
        await self._park(_messages_of(message), timeout=self._timeout if timeout is None else timeout)

    def _prepared(self, message: MessageInput) -> MessageInput | None:
        """`message` ready to send: every message with an id, its session id checked (`prepare`),
        a list copied; None for an empty list or batch (nothing to send)."""
        if isinstance(message, ServiceBusMessage):
            if prepare(message):
                self._failover.sends_sessions = True
            return message
        if isinstance(message, ServiceBusMessageBatch):
            message = self._with_ids(message)
            return message if len(message) else None
        message = list(message)
        if not message:
            return None
        if prepare_all(message):
            self._failover.sends_sessions = True
        return message

    async def schedule_messages(
        self,
        messages: ServiceBusMessage | list[ServiceBusMessage],
        schedule_time_utc: dt.datetime,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (the SDK's keyword, passed through)
    ) -> list[int]:
        """Schedule on the primary (its sequence numbers), or park with the schedule aliased ([])."""
        self._check_open()
        batch = [messages] if isinstance(messages, ServiceBusMessage) else list(messages)
        if not batch:
            return []
        if prepare_all(batch):
            self._failover.sends_sessions = True
        bound = self._timeout if timeout is None else timeout
        if not self._failover.switched:
            started = self._now()
            primary = self._primary_sender()
            try:
                numbers = await self._turns.call(
                    primary,
                    lambda left: primary.schedule_messages(messages, schedule_time_utc, timeout=left),
                    bound,
                    what=f"the schedule to {self.entity_name!r}",
                )
            except Exception as exc:
                self._primary_failed(exc, started)  # raises unless the call is to be parked
            else:
                self._primary_accepted(batch)
                return list(numbers)
        for message in batch:
            message.scheduled_enqueue_time_utc = schedule_time_utc
        await self._park(batch, timeout=bound)
        return []

    # --- the primary's answers (the one place they are read, for sends and schedules) ----

    def _primary_failed(self, exc: Exception, started: float) -> None:
        """The primary raised `exc` for a call begun at `started`: returns if the call is to be
        parked, else raises `exc` (or, when the primary's client was closed under the call, the
        connection error that is)."""
        self._connections.note_error(PRIMARY, exc)
        if self._closed_under_the_call(exc):
            # over the wire, a send racing the close/fault rule's close of the primary's client fails
            # with whatever pyamqp tripped on, not a connection error: it is the connection's failure
            lost = ServiceBusConnectionError(message=f"the primary's connection was closed under the send ({exc})")
            lost.__cause__ = exc
            exc = lost
        elif is_shut_down_handler(exc) and self._primary is not None:
            # the SDK shut this handler down after an error of its own (every later call raises
            # ValueError "The handler has already been shutdown"): the next call gets a fresh one, and
            # this one failed as on a lost connection (retryable: the caller may retry, the clock runs)
            self._stats.handlers_renewed += 1
            self._connections.discard(self._primary, cut=False)
            self._primary, self._primary_generation = None, -1
            lost = ServiceBusConnectionError(message=f"the primary's SDK sender was shut down ({exc})")
            lost.__cause__ = exc
            exc = lost
        if not self._failover.failed(exc, started):
            raise exc

    def _closed_under_the_call(self, exc: Exception) -> bool:
        """`exc` may be what a closed handler raises, and the primary's client this sender's handler
        belongs to has been closed (its side is down) or replaced since."""
        connections = self._connections
        return may_be_a_closed_handler(exc) and (
            connections.is_down(PRIMARY) or connections.generation(PRIMARY) != self._primary_generation
        )

    def _primary_accepted(self, sent: MessageInput) -> None:
        """The primary accepted `sent`: the failover clock stops, and an accepted message without
        a session id says the entity does not require sessions."""
        failover = self._failover
        if failover.facts.requires_session is None:
            _learn_from_accepted(failover, sent)
        failover.succeeded()
        self._connections.note_worked(PRIMARY)

    async def create_message_batch(self, max_size_in_bytes: int | None = None) -> ServiceBusMessageBatch:
        """A batch whose messages get their ids as they are added. Sized by the primary's link
        while it is healthy, by the 256 KB message limit while switched."""
        self._check_open()
        if self._failover.switched:
            return _IdAssigningBatch(max_size_in_bytes=max_size_in_bytes or contract.MAX_MESSAGE_SIZE_BYTES)
        primary = self._primary_sender()
        try:
            template = await self._turns.call(  # it may open the link: bounded like a send, in its turn
                primary,
                lambda _left: primary.create_message_batch(max_size_in_bytes),
                self._timeout,
                what=f"the batch for {self.entity_name!r}",
            )
        except Exception as exc:
            if self._closed_under_the_call(exc):
                # the open raced the replacement of the primary's client (wire drill: "Handler failed: ...
                # 'create_sender_link'" reached the caller, not retryable): the connection's loss, retryable
                raise ServiceBusConnectionError(
                    message=f"the primary's connection was closed under the batch's open ({exc})"
                ) from exc
            raise
        # Same transport as the primary's batches, so the SDK sends it as it is.
        return _IdAssigningBatch(max_size_in_bytes=template.max_size_in_bytes, **sdk.batch_transport(template))

    # --- the backlog --------------------------------------------------------------------

    def _with_ids(self, batch: ServiceBusMessageBatch) -> ServiceBusMessageBatch:
        """A batch whose messages all have ids: ids must be set before the messages are encoded,
        so a batch holding a message without one is rebuilt (rare: ours assign them on add)."""
        messages = sdk.batch_messages(batch)
        missing = any(
            m.raw_amqp_message.properties is None or m.raw_amqp_message.properties.message_id is None for m in messages
        )
        has_session = prepare_all(messages)  # assigns the missing ids
        if missing:
            rebuilt = ServiceBusMessageBatch(max_size_in_bytes=batch.max_size_in_bytes, **sdk.batch_transport(batch))
            for message in messages:
                rebuilt.add_message(message)  # a MessageSizeExceededError if the ids overflow it
            batch = rebuilt
        if has_session:
            self._failover.sends_sessions = True
        return batch

    async def _park(self, messages: list[ServiceBusMessage], *, timeout: float | None) -> None:  # noqa: ASYNC109
        """Refuse what the primary would refuse, alias every message and check every size before
        the first backlog send, then send in as few backlog batches as fit."""
        await self._failover.await_session_fact(messages, timeout)
        self._failover.refuse_unparkable(messages)
        parked = [parked_copy(m, self.entity_name) for m in messages]
        payloads: list[ServiceBusMessage] | list[ServiceBusMessageBatch] = parked if len(parked) == 1 else _pack(parked)
        try:
            for payload in payloads:
                self.backlog_queue = await self._backlog.send(payload, self.backlog_queue, timeout=timeout)
        except Exception as exc:
            if not raised_by_backlog(exc):
                exc.add_note(BACKLOG_HOP_NOTE)
            raise
        self._stats.parked_messages += len(parked)


def _learn_from_accepted(failover: EntityFailover, sent: MessageInput) -> None:
    """The primary accepted a message without a session id: the entity does not require sessions."""
    for message in [sent] if isinstance(sent, ServiceBusMessage) else _messages_of(sent):
        if message.session_id is None:
            failover.facts.requires_session = False
            return


def _messages_of(message: MessageInput) -> list[ServiceBusMessage]:
    if isinstance(message, ServiceBusMessage):
        return [message]
    if isinstance(message, ServiceBusMessageBatch):
        return sdk.batch_messages(message)
    return message


def _pack(messages: list[ServiceBusMessage]) -> list[ServiceBusMessageBatch]:
    """Backlog batches of at most the message-size limit each (a batch that fitted the primary
    may not fit once every message carries its aliases)."""
    batches: list[ServiceBusMessageBatch] = []
    current: ServiceBusMessageBatch | None = None
    for message in messages:
        if current is not None:
            try:
                current.add_message(message)
                continue
            except MessageSizeExceededError:
                pass
        current = ServiceBusMessageBatch(max_size_in_bytes=contract.MAX_MESSAGE_SIZE_BYTES)
        current.add_message(message)  # fits: its size was checked when it was parked
        batches.append(current)
    return batches
