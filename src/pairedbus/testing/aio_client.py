# ruff: noqa: ASYNC109 - the signatures mirror the SDK, whose coroutines take `timeout=`
"""The fake `azure.servicebus.aio` data plane: ServiceBusClient, senders, receivers, sessions.

Signatures follow azure-servicebus 7.x. Every call that would be a network round trip is one
"operation": it sleeps `world.latency` once, then raises any injected fault. The fake does not
retry (the real SDK retries retryable errors `retry_total` times); a fault surfaces at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from typing import Any

from azure.core.async_paging import AsyncItemPaged
from azure.servicebus import NEXT_AVAILABLE_SESSION, ServiceBusReceiveMode, ServiceBusSubQueue
from azure.servicebus._common._connection_string_parser import parse_connection_string
from azure.servicebus.aio._servicebus_session_async import ServiceBusSession as _RealSession
from azure.servicebus.exceptions import (
    MessageAlreadySettled,
    MessageLockLostError,
    MessageNotFoundError,
    MessageSizeExceededError,
    OperationTimeoutError,
    ServiceBusError,
)

from pairedbus.testing.clock import to_datetime, to_seconds
from pairedbus.testing.entities import MessageStore, ReceivableEntity, SendableEntity, SessionLock, Subscription
from pairedbus.testing.messages import (
    Content,
    FakeMessageBatch,
    FakeReceivedMessage,
    Record,
    iter_contents,
    size_within,
)
from pairedbus.testing.world import ServiceBusWorld, _make_error, _not_found, normalize_fqdn

#: The SDK's bound on a receive with no max_wait_time (DEFAULT_RECEIVE_WAIT_TIME_SECS).
DEFAULT_RECEIVE_WAIT_SECONDS = 60.0
_SHUTDOWN = "The handler has already been shutdown. Please use ServiceBusClient to create a new instance."
#: The encoded overhead the SDK adds per message in a batch.
_BATCH_OVERHEAD = 8


def current_world() -> ServiceBusWorld:
    from pairedbus.testing.patching import active_world

    return active_world()


def _wake(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class _Handler:
    """What senders and receivers share: liveness, faults and the per-operation round trip."""

    def __init__(self, client: ServiceBusClient, entity_name: str, fault_keys: tuple[str, ...]) -> None:
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

    async def _operation(self, name: str, timeout: float | None = None) -> None:
        """One round trip: sleep the latency (bounded by `timeout` / the client's `try_timeout`:
        a slower round trip raises OperationTimeoutError), then raise any injected fault."""
        self._check_live()
        world = self._world
        latency = self._latency()
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


class ServiceBusSender(_Handler):
    def __init__(self, client: ServiceBusClient, entity_name: str, **kwargs: Any) -> None:
        super().__init__(client, entity_name, (entity_name,))

    _cached: SendableEntity | None = None

    def _entity(self) -> SendableEntity:
        cached = self._cached
        if cached is not None and cached.alive:
            return cached
        self._cached = entity = self._world.resolve(self.fully_qualified_namespace).sendable(self._entity_name)
        return entity

    def _contents(self, message: Any) -> list[Content]:
        contents = list(iter_contents(message))
        limit = self._world.resolve(self.fully_qualified_namespace).max_message_size_in_bytes
        if isinstance(message, FakeMessageBatch):
            return contents
        if len(contents) == 1 and not isinstance(message, (list, tuple)):
            if not size_within(contents[0], limit):
                raise MessageSizeExceededError(
                    message=f"The received message (size {contents[0].size} bytes) exceeds the limit ({limit} bytes) "
                    "currently allowed on the link."
                )
            return contents
        total = sum(c.size + _BATCH_OVERHEAD for c in contents)
        if total > limit:
            raise MessageSizeExceededError(message=f"ServiceBusMessageBatch has reached its size limit: {limit}")
        return contents

    async def send_messages(self, message: Any, *, timeout: float | None = None, **kwargs: Any) -> None:
        self._check_live()
        if timeout is not None and timeout <= 0:
            raise ValueError("The timeout must be greater than 0.")
        contents = self._contents(message)
        if not contents:
            return
        await self._operation("send", timeout)
        entity = self._entity()
        _check_sessions(entity, contents)
        entity.accept(contents, self._world.clock.time())
        self._world.after_send(self.fully_qualified_namespace, self._entity_name)

    async def schedule_messages(
        self, messages: Any, schedule_time_utc: datetime, *, timeout: float | None = None, **kwargs: Any
    ) -> list[int]:
        self._check_live()
        due = to_seconds(schedule_time_utc)
        contents = []
        for content in self._contents(messages):
            content = content.copy() if content.scheduled != due else content
            content.scheduled = due
            contents.append(content)
        if not contents:
            return []
        await self._operation("schedule", timeout)
        entity = self._entity()
        _check_sessions(entity, contents)
        numbers = entity.accept(contents, self._world.clock.time())
        entity.counts.schedules += len(numbers)
        self._world.after_send(self.fully_qualified_namespace, self._entity_name)
        return numbers

    async def cancel_scheduled_messages(
        self, sequence_numbers: int | list[int], *, timeout: float | None = None, **kwargs: Any
    ) -> None:
        self._check_live()
        numbers = [sequence_numbers] if isinstance(sequence_numbers, int) else list(sequence_numbers)
        await self._operation("cancel_scheduled", timeout)
        entity = self._entity()
        missing = [n for n in numbers if not _is_scheduled(entity, n)]
        if missing:
            raise MessageNotFoundError(
                message=f"The scheduled message with sequence number {missing[0]} was not found."
            )
        entity.cancel_scheduled(numbers)

    async def create_message_batch(self, max_size_in_bytes: int | None = None) -> FakeMessageBatch:
        self._check_live()
        limit = self._world.resolve(self.fully_qualified_namespace).max_message_size_in_bytes
        if max_size_in_bytes and max_size_in_bytes > limit:
            raise ValueError(
                f"Max message size: {max_size_in_bytes} is too large, acceptable max batch size is: {limit} bytes."
            )
        return FakeMessageBatch(max_size_in_bytes or limit)

    def __str__(self) -> str:
        return f"Sender client id: {self.client_identifier}, entity: {self._entity_name}"


def _is_scheduled(entity: SendableEntity, sequence_number: int) -> bool:
    subs = getattr(entity, "subscriptions", None)
    stores = [s.store for s in subs.values()] if subs is not None else [entity.store]  # type: ignore[attr-defined]
    return any(sequence_number in s.scheduled for s in stores)


def _check_sessions(entity: SendableEntity, contents: list[Content]) -> None:
    for c in contents:
        if c.partition_key is not None and c.session_id is not None and c.partition_key != c.session_id:
            raise ServiceBusError(
                f"The PartitionKey '{c.partition_key}' of the message must match its SessionId '{c.session_id}'."
            )
    if getattr(entity, "store", None) is not None and entity.settings.requires_session:
        if any(c.session_id is None for c in contents):
            raise ServiceBusError(
                "The SessionId was not set on a message, and it cannot be sent to the entity. Entities that have "
                "session support enabled can only receive messages that have the SessionId set to a valid value."
            )


class ServiceBusSession(_RealSession):
    """Session state and lock of a session receiver (subclass of the real class so that
    `AutoLockRenewer.register(receiver, receiver.session)` accepts it)."""

    def __init__(self, receiver: ServiceBusReceiver, lock: SessionLock) -> None:
        self._session_id = lock.session_id
        self._receiver = receiver
        self._lock = lock
        self._encoding = "UTF-8"
        self._session_start = receiver._world.clock.now()
        self._lock_lost = False
        self.auto_renew_error: Exception | None = None

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def locked_until_utc(self) -> datetime | None:
        return to_datetime(self._lock.until) if self._lock.until else None

    @property
    def _locked_until_utc(self) -> datetime | None:  # type: ignore[override]
        return self.locked_until_utc

    @_locked_until_utc.setter
    def _locked_until_utc(self, value: Any) -> None:
        pass

    @property
    def _lock_expired(self) -> bool:
        return self._lock.owner is not self._receiver or self._lock.until <= self._receiver._world.clock.time()

    async def get_state(self, *, timeout: float | None = None, **kwargs: Any) -> bytes | None:
        await self._receiver._session_operation("get_session_state")
        return self._lock.state

    async def set_state(
        self, state: str | bytes | bytearray | None, *, timeout: float | None = None, **kwargs: Any
    ) -> Any:
        await self._receiver._session_operation("set_session_state")
        self._lock.state = state.encode(self._encoding) if isinstance(state, str) else (bytes(state) if state else None)
        self._lock.state_updated = self._receiver._world.clock.time()

    async def renew_lock(self, *, timeout: float | None = None, **kwargs: Any) -> datetime:
        receiver = self._receiver
        await receiver._session_operation("renew_session_lock")
        receiver._entity().counts.renewals += 1
        return to_datetime(receiver._store().renew_session(self._lock, receiver._world.clock.time()))


class ServiceBusReceiver(_Handler):
    def __init__(
        self,
        client: ServiceBusClient,
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
        self._session: ServiceBusSession | None = None
        self._opened = False
        self._target: MessageStore | None = None
        self._receivable: ReceivableEntity | None = None
        self._last_received_sequenced_number: int | None = None

    # --- plumbing ---------------------------------------------------------------------------

    @property
    def session(self) -> ServiceBusSession | None:
        return self._session

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
                raise _not_found(ns, self._entity_name)
            self._receivable = entity
            self._target = entity.store_for(self._sub_queue)
        return entity

    def _store(self) -> MessageStore:
        cached = self._receivable
        if cached is None or not cached.alive:
            self._entity()
        return self._target  # type: ignore[return-value]

    async def __aenter__(self) -> ServiceBusReceiver:
        self._check_live()
        await self._open()
        return self

    async def _open(self) -> None:
        if self._opened:
            return
        await self._operation("open")
        entity = self._entity()
        store = self._target
        assert store is not None
        needs_session = entity.settings.requires_session and not store.is_dead_letter
        if needs_session and not self._is_session_receiver:
            raise ServiceBusError(
                "It is not possible for an entity that requires sessions to create a non-sessionful message receiver."
            )
        if self._is_session_receiver and not needs_session:
            raise ServiceBusError(
                "It is not possible for an entity that does not require sessions to create a sessionful receiver."
            )
        if self._is_session_receiver:
            await self._acquire_session(store)
        self._opened = True
        self._running = True
        if self._auto_lock_renewer is not None and self._session is not None:
            self._auto_lock_renewer.register(self, self._session)

    async def _acquire_session(self, store: MessageStore) -> None:
        wanted = None if self._session_id is NEXT_AVAILABLE_SESSION else str(self._session_id)
        wait = self._max_wait_time if self._max_wait_time is not None else DEFAULT_RECEIVE_WAIT_SECONDS
        world = self._world
        deadline = self._deadline(wait)
        while True:
            lock = store.acquire_session(wanted, self, world.clock.time())
            if lock is not None:
                self._session_id = lock.session_id
                self._session = ServiceBusSession(self, lock)
                return
            if not await self._wait(store, deadline):
                raise OperationTimeoutError(
                    message="Failed to initiate the connection due to exception: no session available."
                )

    def _deadline(self, wait: float) -> tuple[float, float]:
        """(fake-clock deadline, event-loop deadline): a wait ends at whichever comes first, so a
        frozen clock advanced past max_wait_time ends a long poll, and real time still bounds it."""
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
        handle = loop.call_later(timeout, _wake, fut) if timeout != float("inf") else None
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

    async def _session_operation(self, name: str) -> None:
        self._check_live()
        await self._operation(name)
        if self._session is not None:
            self._store().check_session(self._session._lock, self, self._world.clock.time())

    # --- receiving --------------------------------------------------------------------------

    async def receive_messages(
        self, max_message_count: int | None = 1, max_wait_time: float | None = None
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
        lock = self._session._lock if self._session is not None else None
        deadline = self._deadline(wait) if wait is not None else None
        entity.counts.receive_calls += 1
        while True:
            now = clock.time()
            if lock is not None:
                store.check_session(lock, self, now)
            records = store.take(count, self, now=now, delete=self._delete, session=lock)
            if records:
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

    def __aiter__(self) -> AsyncIterator[FakeReceivedMessage]:
        return self

    async def __anext__(self) -> FakeReceivedMessage:
        """Iteration waits `max_wait_time` of the receiver (None: forever) for each message."""
        self._check_live()
        await self._open()
        await self._operation("receive")
        messages = await self._receive(1, self._max_wait_time)
        if not messages:
            raise StopAsyncIteration
        return messages[0]

    async def peek_messages(
        self, max_message_count: int = 1, *, sequence_number: int = 0, timeout: float | None = None, **kwargs: Any
    ) -> list[FakeReceivedMessage]:
        self._check_live()
        if max_message_count <= 0:
            raise ValueError("max_message_count must be 1 or greater.")
        await self._open()
        await self._operation("peek", timeout)
        entity = self._entity()
        store = self._target
        assert store is not None
        # As the SDK: without a sequence number, peek continues after the last message this
        # receiver received or peeked (receiver_mixins / _pyamqp_transport keep that number).
        last = self._last_received_sequenced_number
        start = sequence_number or (last + 1 if last else 1)
        records = store.peek(max_message_count, start, self._world.clock.time())
        if self._session is not None:
            records = [r for r in records if (r.content.session_id or "") == self._session_id]
        if records:
            self._last_received_sequenced_number = records[-1].sequence_number
        entity.counts.peeks += len(records)
        return [FakeReceivedMessage(r, self, settled=True, peeked=True) for r in records]

    async def receive_deferred_messages(
        self, sequence_numbers: int | list[int], *, timeout: float | None = None, **kwargs: Any
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
            raise MessageAlreadySettled(action=action)
        if self._closed or not self._running:
            raise ValueError(
                f"Failed to {action} the message as the handler has already been shutdown."
                "Please use ServiceBusClient to create a new instance."
            )

    async def _settle(self, message: FakeReceivedMessage, action: str) -> tuple[MessageStore, SessionLock | None]:
        self._own(message, action)
        await self._operation(action)
        store = self._store()
        lock = self._session._lock if self._session is not None else None
        now = self._world.clock.time()
        if lock is not None:
            store.check_session(lock, self, now)
        store.check_lock(message._record, message._token, now, lock)
        return store, lock

    async def complete_message(self, message: FakeReceivedMessage) -> None:
        store, lock = await self._settle(message, "complete")
        if lock is None and self._world.lock_lost_before_complete(self.fully_qualified_namespace, self._entity_name):
            store.lose_lock(message._record)
            message._settled = False
            raise MessageLockLostError(
                message="The lock supplied is invalid. Either the lock expired, or the message has already "
                "been removed from the queue (injected late lock loss)."
            )
        store.complete(message._record, lock)
        message._settled = True
        store.entity.counts.completes += 1

    async def abandon_message(self, message: FakeReceivedMessage) -> None:
        store, lock = await self._settle(message, "abandon")
        store.abandon(message._record, lock)
        message._settled = True
        store.entity.counts.abandons += 1

    async def defer_message(self, message: FakeReceivedMessage) -> None:
        store, lock = await self._settle(message, "defer")
        store.defer(message._record, lock)
        message._settled = True
        store.entity.counts.defers += 1

    async def dead_letter_message(
        self, message: FakeReceivedMessage, reason: str | None = None, error_description: str | None = None
    ) -> None:
        store, lock = await self._settle(message, "dead-letter")
        store.dead_letter(message._record, lock, reason, error_description)
        message._settled = True

    async def renew_message_lock(
        self, message: FakeReceivedMessage, *, timeout: float | None = None, **kwargs: Any
    ) -> datetime:
        if self._session is not None or self._is_session_receiver:
            raise TypeError(
                "Renewing message lock is an invalid operation when working with sessions."
                "Please renew the session lock instead."
            )
        self._own(message, "renew lock")
        if not message._token:
            raise ValueError("Unable to renew lock - no lock token found.")
        await self._operation("renew_lock", timeout)
        store = self._store()
        now = self._world.clock.time()
        store.check_lock(message._record, message._token, now, None)
        until = store.renew(message._record, now)
        message._locked_until_s = until
        store.entity.counts.renewals += 1
        return to_datetime(until)

    def _lose_locks(self) -> None:
        """A faulted connection loses the receiver's locks: its messages can no longer be settled
        and become available again when their lock times out (a session is released at once)."""
        if self._session is not None and self._target is not None:
            self._target.close_session(self._session._lock, self)

    async def close(self) -> None:
        if self._session is not None and not self._closed:
            try:
                self._store().close_session(self._session._lock, self)
            except ServiceBusError:
                pass  # the entity is gone
        await super().close()

    def __str__(self) -> str:
        return f"Receiver client id: {self.client_identifier}, entity: {self._entity_name}"


class ServiceBusClient:
    """Fake `azure.servicebus.aio.ServiceBusClient` bound to the active `ServiceBusWorld`."""

    def __init__(self, fully_qualified_namespace: str, credential: Any, **kwargs: Any) -> None:
        if credential is None:
            raise ValueError("credential is required")
        self._world = kwargs.pop("_world", None) or current_world()
        self.fully_qualified_namespace = normalize_fqdn(fully_qualified_namespace)
        self._credential = credential
        self._entity_name: str | None = kwargs.get("entity_name")
        self._try_timeout: float | None = kwargs.get("try_timeout")
        if self._try_timeout is not None and self._try_timeout <= 0:
            raise ValueError("try_timeout must be greater than 0.")
        self._handlers: list[_Handler] = []
        self._closed = False
        self._fault_error: BaseException | None = None
        self._world._register(self)

    @classmethod
    def from_connection_string(cls, conn_str: str, **kwargs: Any) -> ServiceBusClient:
        props = parse_connection_string(conn_str)
        if props.entity_path:
            kwargs.setdefault("entity_name", props.entity_path)
        credential = kwargs.pop("credential", None) or _ConnectionStringCredential(props)
        return cls(props.fully_qualified_namespace, credential, **kwargs)

    async def __aenter__(self) -> ServiceBusClient:
        return self

    async def __aexit__(self, *args: Any) -> None:
        await self.close()

    async def close(self) -> None:
        for handler in list(self._handlers):
            await handler.close()
        self._handlers.clear()
        self._closed = True

    def _fault(self, error: Any) -> None:
        for handler in list(self._handlers):
            handler._fault(_make_error(error, self.fully_qualified_namespace))
            if isinstance(handler, ServiceBusReceiver):
                handler._lose_locks()
        self._fault_error = error

    def _add(self, handler: Any) -> Any:
        if self._fault_error is not None:
            handler._fault(_make_error(self._fault_error, self.fully_qualified_namespace))
        self._handlers.append(handler)
        return handler

    def _check_entity(self, name: str) -> None:
        if self._entity_name and name != self._entity_name:
            raise ValueError(
                "The queue name provided does not match the EntityPath in "
                "the connection string used to construct the ServiceBusClient."
            )

    def get_queue_sender(self, queue_name: str, **kwargs: Any) -> ServiceBusSender:
        self._check_entity(queue_name)
        return self._add(ServiceBusSender(self, queue_name, **kwargs))

    def get_topic_sender(self, topic_name: str, **kwargs: Any) -> ServiceBusSender:
        self._check_entity(topic_name)
        return self._add(ServiceBusSender(self, topic_name, **kwargs))

    def get_queue_receiver(self, queue_name: str, **kwargs: Any) -> ServiceBusReceiver:
        self._check_entity(queue_name)
        return self._add(ServiceBusReceiver(self, queue_name, **kwargs))

    def get_subscription_receiver(self, topic_name: str, subscription_name: str, **kwargs: Any) -> ServiceBusReceiver:
        self._check_entity(topic_name)
        return self._add(ServiceBusReceiver(self, topic_name, subscription_name, **kwargs))

    def _session_ids(self, entity_name: str, subscription_name: str | None, state_updated_after: Any) -> list[str]:
        ns = self._world.resolve(self.fully_qualified_namespace)
        self._world.check(self.fully_qualified_namespace, entity_name, "list_sessions")
        entity = ns.receivable(entity_name, subscription_name)
        if not entity.settings.requires_session:
            raise ServiceBusError(
                "It is not possible for an entity that does not require sessions to create a sessionful receiver."
            )
        after = None if state_updated_after is None else to_seconds(state_updated_after)
        return entity.store.session_ids(self._world.clock.time(), after)

    def _check_timeout(self, timeout: float | None) -> None:
        if timeout is not None and timeout <= 0:
            raise ValueError("The timeout must be greater than 0.")

    def list_queue_sessions(
        self, queue_name: str, *, state_updated_after: datetime | None = None, timeout: float | None = None
    ) -> AsyncItemPaged[str]:
        """Session ids with active messages or stored state in a session-enabled queue."""
        self._check_entity(queue_name)
        self._check_timeout(timeout)
        return _async_pages(lambda: self._session_ids(queue_name, None, state_updated_after))

    def list_subscription_sessions(
        self,
        topic_name: str,
        subscription_name: str,
        *,
        state_updated_after: datetime | None = None,
        timeout: float | None = None,
    ) -> AsyncItemPaged[str]:
        """Session ids with active messages or stored state in a session-enabled subscription."""
        self._check_entity(topic_name)
        self._check_timeout(timeout)
        return _async_pages(lambda: self._session_ids(topic_name, subscription_name, state_updated_after))


def _async_pages(fetch: Callable[[], list[str]]) -> AsyncItemPaged[str]:
    """One page, fetched when iteration starts (as the SDK's browser does on the first page)."""

    async def get_next(token: Any) -> list[str]:
        return fetch()

    async def extract(page: list[str]) -> tuple[None, AsyncIterator[str]]:
        async def items() -> AsyncIterator[str]:
            for item in page:
                yield item

        return None, items()

    return AsyncItemPaged(get_next, extract)


class _ConnectionStringCredential:
    """Stands in for the SAS credential a connection string implies."""

    def __init__(self, props: Any) -> None:
        self.key_name = props.shared_access_key_name
        self.key = props.shared_access_key
        self.signature = props.shared_access_signature
