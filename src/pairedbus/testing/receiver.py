# ruff: noqa: ASYNC109 - the signatures mirror the SDK, whose coroutines take `timeout=`
"""The fake ServiceBusReceiver (aio) and its sync twin, on one core (`ReceiverCore`): the sync
twin blocks its thread where the aio one awaits (on the world's `arrival` condition)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from typing import Any, Self, cast

from azure.servicebus import NEXT_AVAILABLE_SESSION, ServiceBusReceiveMode, ServiceBusSubQueue

from pairedbus.servicebus.clock import Clock, to_datetime
from pairedbus.servicebus.content import Record
from pairedbus.servicebus.entities import ReceivableEntity, Subscription
from pairedbus.servicebus.errors import (
    ServiceError,
    already_settled,
    entity_not_found,
    no_session_available,
    sessions_not_supported,
    sessions_required,
)
from pairedbus.servicebus.sessions import SessionLock
from pairedbus.servicebus.settlement import Action, settle
from pairedbus.servicebus.store import MessageStore
from pairedbus.testing.errors import raises_sdk_errors
from pairedbus.testing.handler import (
    DEFAULT_RECEIVE_WAIT_SECONDS,
    AsyncHandler,
    ClientLike,
    HandlerCore,
    SyncHandler,
    run,
    wake,
)
from pairedbus.testing.messages import FakeReceivedMessage, lock_of, record_of, relock
from pairedbus.testing.servicebus_session import ServiceBusSession, SessionCore, SyncServiceBusSession


class ReceiverCore(HandlerCore):
    """Receiving, peeking, sessions and settlement, as coroutines both twins drive; the twins
    say how a receive waits (`_wait`, `_deadline`) and which session class they hand out."""

    def __init__(
        self,
        client: ClientLike,
        entity_name: str,
        subscription_name: str | None = None,
        *,
        session_id: str | Any = None,
        sub_queue: ServiceBusSubQueue | str | None = None,
        receive_mode: ServiceBusReceiveMode | str = ServiceBusReceiveMode.PEEK_LOCK,
        max_wait_time: float | None = None,
        auto_lock_renewer: Any = None,
        prefetch_count: int = 0,
        **kwargs: Any,
    ) -> None:
        keys = (
            (f"{entity_name}/Subscriptions/{subscription_name}", entity_name) if subscription_name else (entity_name,)
        )
        super().__init__(client, entity_name, keys)
        if max_wait_time is not None and max_wait_time <= 0:
            raise ValueError("The max_wait_time must be greater than 0.")
        if prefetch_count < 0:
            raise ValueError("prefetch_count must be an integer greater than or equal to 0.")
        self._subscription_name = subscription_name
        self._session_id = session_id
        self._sub_queue = ServiceBusSubQueue(sub_queue).value if sub_queue else None
        self._receive_mode = ServiceBusReceiveMode(receive_mode)
        self._delete = self._receive_mode is ServiceBusReceiveMode.RECEIVE_AND_DELETE
        self._max_wait_time = max_wait_time
        self._auto_lock_renewer = auto_lock_renewer
        self._prefetch_count = prefetch_count
        self._session: SessionCore | None = None
        self._opened = False
        self._target: MessageStore | None = None
        self._receivable: ReceivableEntity | None = None
        self._last_received_sequenced_number: int | None = None

    # --- plumbing ---------------------------------------------------------------------------

    @property
    def clock(self) -> Clock:
        return self._world.clock

    @property
    def _is_session_receiver(self) -> bool:
        return self._session_id is not None

    def _entity(self) -> ReceivableEntity:
        cached = self._receivable
        if cached is not None and cached.alive and (not isinstance(cached, Subscription) or cached.topic.alive):
            return cached
        ns = self._world.resolve(self.fully_qualified_namespace)
        entity = ns.receivable(self._entity_name, self._subscription_name)
        if entity is not self._receivable:
            if self._receivable is not None:  # deleted and re-created: the link is gone
                raise entity_not_found(ns.fqdn, self._entity_name)
            self._receivable = entity
            self._target = entity.store_for(self._sub_queue)
        return entity

    def _store(self) -> MessageStore:
        cached = self._receivable
        if cached is None or not cached.alive:
            self._entity()
        target = self._target
        assert target is not None  # set with the entity
        return target

    async def _open(self) -> None:
        if self._opened:
            return
        await self._operation("open")
        entity = self._entity()
        store = self._store()
        self._check_sessionful(entity.settings.requires_session and not store.is_dead_letter)
        if self._is_session_receiver:
            await self._acquire_session(store)
        self._opened = True
        self._running = True
        if self._auto_lock_renewer is not None and self._session is not None:
            self._auto_lock_renewer.register(self, self._session)

    def _check_sessionful(self, needs_session: bool) -> None:
        """A session entity takes only session receivers, and only it takes them."""
        if needs_session and not self._is_session_receiver:
            raise sessions_required()
        if self._is_session_receiver and not needs_session:
            raise sessions_not_supported()

    async def _acquire_session(self, store: MessageStore) -> None:
        wanted = None if self._session_id is NEXT_AVAILABLE_SESSION else str(self._session_id)
        wait = self._max_wait_time if self._max_wait_time is not None else DEFAULT_RECEIVE_WAIT_SECONDS
        world = self._world
        deadline = self._deadline(wait)
        while True:
            lock = store.acquire_session(wanted, self, world.clock.time())
            if lock is not None:
                self._session_id = lock.session_id
                self._session = self._new_session(lock)
                return
            if not await self._wait(store, deadline):
                raise no_session_available()

    def _new_session(self, lock: SessionLock) -> SessionCore:
        raise NotImplementedError

    def _deadline(self, wait: float) -> tuple[float, float]:
        """(fake-clock deadline, real-time deadline): a wait ends at whichever comes first, so a
        frozen clock advanced past max_wait_time ends a long poll, and real time still bounds it."""
        raise NotImplementedError

    async def _wait(self, store: MessageStore, deadline: tuple[float, float]) -> bool:
        """Wait for an arrival, a clock move or the next due time; False once the deadline passed."""
        raise NotImplementedError

    async def session_round_trip(self, operation: str) -> None:
        self._check_live()
        await self._operation(operation)
        if self._session is not None:
            self._store().sessions.check(self._session.lock, self, self._world.clock.time())

    def renew_session_lock(self, lock: SessionLock) -> float:
        self._entity().counts.renewals += 1
        return self._store().renew_session(lock, self._world.clock.time())

    # --- receiving --------------------------------------------------------------------------

    async def _receive_messages(
        self, max_message_count: int | None, max_wait_time: float | None
    ) -> list[FakeReceivedMessage]:
        self._check_live()
        if max_wait_time is not None and max_wait_time <= 0:
            raise ValueError("The max_wait_time must be greater than 0.")
        if max_message_count is not None and max_message_count <= 0:
            raise ValueError("The max_message_count must be greater than 0")
        if max_wait_time is None:
            max_wait_time = self._max_wait_time if self._max_wait_time is not None else DEFAULT_RECEIVE_WAIT_SECONDS
        count = max_message_count if max_message_count is not None else self._prefetch_count
        await self._open()
        await self._operation("receive")
        if not count:
            return []
        return await self._receive(count, max_wait_time)

    async def _receive(self, count: int, wait: float | None) -> list[FakeReceivedMessage]:
        entity = self._entity()
        store = self._target
        assert store is not None
        clock = self._world.clock
        lock = self._session.lock if self._session is not None else None
        deadline = self._deadline(wait) if wait is not None else None
        entity.counts.receive_calls += 1
        while True:
            now = clock.time()
            if lock is not None:
                store.sessions.check(lock, self, now)
            records = store.take(count, self, now=now, delete=self._delete, session=lock)
            if records:
                # On the wire before they are handed over: a receive cancelled meanwhile leaves
                # them locked until the lock expires, as a lost transfer does.
                await self._arrive(len(records), self._wire_bytes(record.content for record in records))
                return self._deliver(entity, records)
            if deadline is None:
                deadline = (float("inf"), float("inf"))
            if not await self._wait(store, deadline):
                return []
            entity = self._entity()  # the entity may have been deleted meanwhile

    def _deliver(self, entity: ReceivableEntity, records: list[Record]) -> list[FakeReceivedMessage]:
        delete = self._delete
        messages = [FakeReceivedMessage(rec, self, settled=delete) for rec in records]
        self._last_received_sequenced_number = records[-1].sequence_number
        entity.counts.receives += len(messages)
        renewer = self._auto_lock_renewer
        if renewer is not None and self._session is None and not delete:
            for message in messages:
                renewer.register(self, message)
        return messages

    async def _next(self) -> FakeReceivedMessage | None:
        """Iteration waits `max_wait_time` of the receiver (None: forever) for each message."""
        self._check_live()
        await self._open()
        await self._operation("receive")
        messages = await self._receive(1, self._max_wait_time)
        return messages[0] if messages else None

    async def _peek(
        self, max_message_count: int, sequence_number: int, timeout: float | None
    ) -> list[FakeReceivedMessage]:
        self._check_live()
        if max_message_count <= 0:
            raise ValueError("max_message_count must be 1 or greater.")
        await self._open()
        await self._operation("peek", timeout)
        entity = self._entity()
        records = self._store().peek(max_message_count, self._peek_start(sequence_number), self._world.clock.time())
        if self._session is not None:
            records = [r for r in records if (r.content.session_id or "") == self._session_id]
        if records:
            self._last_received_sequenced_number = records[-1].sequence_number
        entity.counts.peeks += len(records)
        await self._arrive(len(records), self._wire_bytes(record.content for record in records))
        return [FakeReceivedMessage(r, self, settled=True, peeked=True) for r in records]

    def _peek_start(self, sequence_number: int) -> int:
        """As the SDK: without a sequence number, peek continues after the last message this
        receiver received or peeked (receiver_mixins / _pyamqp_transport keep that number)."""
        last = self._last_received_sequenced_number
        return sequence_number or (last + 1 if last else 1)

    async def _receive_deferred(
        self, sequence_numbers: int | list[int], timeout: float | None
    ) -> list[FakeReceivedMessage]:
        self._check_live()
        numbers = [sequence_numbers] if isinstance(sequence_numbers, int) else list(sequence_numbers)
        if not numbers:
            return []
        await self._open()
        await self._operation("receive_deferred", timeout)
        entity = self._entity()
        store = self._target
        assert store is not None
        records = store.take_deferred(numbers, self, now=self._world.clock.time(), delete=self._delete)
        await self._arrive(len(records), self._wire_bytes(record.content for record in records))
        messages = [FakeReceivedMessage(rec, self, settled=self._delete, deferred=True) for rec in records]
        entity.counts.receives += len(messages)
        return messages

    # --- settlement -------------------------------------------------------------------------

    def _own(self, message: FakeReceivedMessage, action: str) -> None:
        if not isinstance(message, FakeReceivedMessage):
            raise TypeError("Parameter 'message' must be of type ServiceBusReceivedMessage")
        if message._is_peeked_message:
            raise ValueError(
                f"The operation {action} is not supported for peeked messages."
                "Only messages received using receive methods in PEEK_LOCK mode can be settled."
            )
        if self._delete:
            raise ValueError(f"The operation {action} is not supported in 'RECEIVE_AND_DELETE' receive mode.")
        if message._settled:
            raise already_settled(action)
        if self._closed or not self._running:
            raise ValueError(
                f"Failed to {action} the message as the handler has already been shutdown."
                "Please use ServiceBusClient to create a new instance."
            )

    async def _settle(
        self,
        message: FakeReceivedMessage,
        action: Action,
        reason: str | None = None,
        description: str | None = None,
    ) -> None:
        self._own(message, action)
        await self._operation(action)
        try:
            settle(
                self._store(),
                record_of(message),
                lock_of(message),
                self._session.lock if self._session is not None else None,
                self,
                action,
                fqdn=self.fully_qualified_namespace,
                entity_name=self._entity_name,
                reason=reason,
                description=description,
            )
        except Exception:
            message._settled = False
            raise
        message._settled = True

    async def _complete(self, message: FakeReceivedMessage) -> None:
        await self._settle(message, "complete")

    async def _abandon(self, message: FakeReceivedMessage) -> None:
        await self._settle(message, "abandon")

    async def _defer(self, message: FakeReceivedMessage) -> None:
        await self._settle(message, "defer")

    async def _dead_letter(
        self, message: FakeReceivedMessage, reason: str | None, error_description: str | None
    ) -> None:
        await self._settle(message, "dead-letter", reason, error_description)

    async def _renew_message_lock(self, message: FakeReceivedMessage, timeout: float | None) -> datetime:
        if self._session is not None or self._is_session_receiver:
            raise TypeError(
                "Renewing message lock is an invalid operation when working with sessions."
                "Please renew the session lock instead."
            )
        self._own(message, "renew lock")
        if not lock_of(message):
            raise ValueError("Unable to renew lock - no lock token found.")
        await self._operation("renew_lock", timeout)
        store = self._store()
        now = self._world.clock.time()
        store.check_lock(record_of(message), lock_of(message), now, None)
        until = store.renew(record_of(message), now)
        relock(message, until)
        store.entity.counts.renewals += 1
        return to_datetime(until)

    def lose_locks(self) -> None:
        """A faulted connection loses the receiver's locks: its messages can no longer be settled
        and become available again when their lock times out (a session is released at once)."""
        if self._session is not None and self._target is not None:
            self._target.sessions.close(self._session.lock, self)

    def shut(self) -> None:
        if self._session is not None and not self._closed:
            try:
                self._store().sessions.close(self._session.lock, self)
            except ServiceError:
                pass  # the entity is gone
        super().shut()

    def __str__(self) -> str:
        return f"Receiver client id: {self.client_identifier}, entity: {self._entity_name}"


@raises_sdk_errors
class ServiceBusReceiver(ReceiverCore, AsyncHandler):
    """Fake `azure.servicebus.aio.ServiceBusReceiver`: waits are awaited on the event loop."""

    @property
    def session(self) -> ServiceBusSession | None:
        return cast("ServiceBusSession | None", self._session)

    def _new_session(self, lock: SessionLock) -> ServiceBusSession:
        return ServiceBusSession(self, lock)

    def _deadline(self, wait: float) -> tuple[float, float]:
        return self._world.clock.time() + wait, asyncio.get_running_loop().time() + wait

    async def _wait(self, store: MessageStore, deadline: tuple[float, float]) -> bool:
        """Wait for an arrival, a clock move or the next due time; False once the deadline passed."""
        clock_until, loop_until = deadline
        clock = self._world.clock
        loop = asyncio.get_running_loop()
        now = clock.time()
        timeout = loop_until - loop.time()
        if now >= clock_until or timeout <= 0:
            return False
        if not clock.manual:
            due = store.next_due()
            if due is not None:
                timeout = max(0.0, min(timeout, due - now))
        fut: asyncio.Future[None] = loop.create_future()
        store.waiters.append(fut)
        self._waiting.add(fut)
        handle = loop.call_later(timeout, wake, fut) if timeout != float("inf") else None
        try:
            await fut
        finally:
            if handle is not None:
                handle.cancel()
            self._waiting.discard(fut)
            try:
                store.waiters.remove(fut)
            except ValueError:
                pass
        self._check_live()
        return True

    async def __aenter__(self) -> Self:
        self._check_live()
        await self._open()
        return self

    def __aiter__(self) -> AsyncIterator[FakeReceivedMessage]:
        return self

    async def __anext__(self) -> FakeReceivedMessage:
        message = await self._next()
        if message is None:
            raise StopAsyncIteration
        return message

    async def receive_messages(
        self, max_message_count: int | None = 1, max_wait_time: float | None = None
    ) -> list[FakeReceivedMessage]:
        return await self._receive_messages(max_message_count, max_wait_time)

    async def peek_messages(
        self, max_message_count: int = 1, *, sequence_number: int = 0, timeout: float | None = None, **kwargs: Any
    ) -> list[FakeReceivedMessage]:
        return await self._peek(max_message_count, sequence_number, timeout)

    async def receive_deferred_messages(
        self, sequence_numbers: int | list[int], *, timeout: float | None = None, **kwargs: Any
    ) -> list[FakeReceivedMessage]:
        return await self._receive_deferred(sequence_numbers, timeout)

    async def complete_message(self, message: FakeReceivedMessage) -> None:
        await self._complete(message)

    async def abandon_message(self, message: FakeReceivedMessage) -> None:
        await self._abandon(message)

    async def defer_message(self, message: FakeReceivedMessage) -> None:
        await self._defer(message)

    async def dead_letter_message(
        self, message: FakeReceivedMessage, reason: str | None = None, error_description: str | None = None
    ) -> None:
        await self._dead_letter(message, reason, error_description)

    async def renew_message_lock(
        self, message: FakeReceivedMessage, *, timeout: float | None = None, **kwargs: Any
    ) -> datetime:
        return await self._renew_message_lock(message, timeout)


#: Longest single block of a sync wait before it looks at the store again.
_WAIT_SLICE = 0.25


@raises_sdk_errors
class SyncServiceBusReceiver(ReceiverCore, SyncHandler):
    """Fake `azure.servicebus.ServiceBusReceiver`: a wait blocks its thread on the world's
    `arrival` condition until a message arrives, the receiver closes or the deadline."""

    @property
    def session(self) -> SyncServiceBusSession | None:
        return cast("SyncServiceBusSession | None", self._session)

    def _new_session(self, lock: SessionLock) -> SyncServiceBusSession:
        return SyncServiceBusSession(self, lock)

    def _deadline(self, wait: float) -> tuple[float, float]:
        return self._world.clock.time() + wait, time.monotonic() + wait

    async def _wait(self, store: MessageStore, deadline: tuple[float, float]) -> bool:
        """Block this thread until an arrival (a send from another thread, an abandon, a lock
        expiry, a due scheduled message), the close of this receiver, or the deadline. With no
        max_wait_time the wait is unbounded, as in the SDK. A frozen clock ends a bounded wait at
        once (only the test's own thread could move it)."""
        clock_until, until = deadline
        clock = self._world.clock
        remaining = until - time.monotonic()
        if clock.time() >= clock_until or remaining <= 0:
            return False
        if clock.manual and remaining != float("inf"):
            return False
        due = None if clock.manual else store.next_due()
        if due is not None:
            remaining = max(0.0, min(remaining, due - clock.time()))
        arrival = self._world.arrival
        store.sync_waiters += 1
        try:
            with arrival:
                # Bounded slices: a wake-up that raced the caller's last look is not lost for long.
                arrival.wait(min(remaining, _WAIT_SLICE))
        finally:
            store.sync_waiters -= 1
        self._check_live()
        return True

    def __enter__(self) -> Self:
        self._check_live()
        run(self._open())
        return self

    def __iter__(self) -> Iterator[FakeReceivedMessage]:
        return self

    def __next__(self) -> FakeReceivedMessage:
        message = run(self._next())
        if message is None:
            raise StopIteration
        return message

    def receive_messages(
        self, max_message_count: int | None = 1, max_wait_time: float | None = None
    ) -> list[FakeReceivedMessage]:
        return run(self._receive_messages(max_message_count, max_wait_time))

    def peek_messages(
        self, max_message_count: int = 1, *, sequence_number: int = 0, timeout: float | None = None, **kwargs: Any
    ) -> list[FakeReceivedMessage]:
        return run(self._peek(max_message_count, sequence_number, timeout))

    def receive_deferred_messages(
        self, sequence_numbers: int | list[int], *, timeout: float | None = None, **kwargs: Any
    ) -> list[FakeReceivedMessage]:
        return run(self._receive_deferred(sequence_numbers, timeout))

    def complete_message(self, message: FakeReceivedMessage) -> None:
        run(self._complete(message))

    def abandon_message(self, message: FakeReceivedMessage) -> None:
        run(self._abandon(message))

    def defer_message(self, message: FakeReceivedMessage) -> None:
        run(self._defer(message))

    def dead_letter_message(
        self, message: FakeReceivedMessage, reason: str | None = None, error_description: str | None = None
    ) -> None:
        run(self._dead_letter(message, reason, error_description))

    def renew_message_lock(
        self, message: FakeReceivedMessage, *, timeout: float | None = None, **kwargs: Any
    ) -> datetime:
        return run(self._renew_message_lock(message, timeout))
