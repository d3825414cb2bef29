"""The fake synchronous `azure.servicebus.ServiceBusClient`: the aio fake's twin.

It shares the aio fake's state and checks; a blocking receive on an empty entity sleeps until
its deadline or the next scheduled/lock-expiry time (nothing else can enqueue while this
thread blocks unless other threads send), and with a frozen clock it returns at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from azure.core.paging import ItemPaged
from azure.servicebus import ServiceBusSession as _RealSyncSession
from azure.servicebus.exceptions import OperationTimeoutError

from pairedbus.testing import aio_client
from pairedbus.testing.aio_client import DEFAULT_RECEIVE_WAIT_SECONDS, _ConnectionStringCredential
from pairedbus.testing.clock import to_datetime
from pairedbus.testing.messages import FakeReceivedMessage

#: Longest single block of a sync wait before it looks at the store again.
_WAIT_SLICE = 0.25


def _operation(handler: aio_client._Handler, name: str) -> None:
    handler._check_live()
    world = handler._world
    latency = handler._latency()
    if latency:
        time.sleep(latency)
        handler._check_live()
    fqdn = handler.fully_qualified_namespace
    for key in handler._fault_keys[:-1]:
        if any(k[1] == key for k in world._faults):
            world.check(fqdn, key, name)
            return
    world.check(fqdn, handler._fault_keys[-1], name)


def _run(coro: Any) -> Any:
    """Drive a fake coroutine that never truly suspends (no latency, no waiting) to completion."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise RuntimeError("the fake sync client cannot wait on asyncio")


class ServiceBusSender(aio_client.ServiceBusSender):
    async def _operation(self, name: str, timeout: float | None = None) -> None:  # noqa: ASYNC109 - the aio signature
        _operation(self, name)

    def send_messages(self, message: Any, *, timeout: float | None = None, **kwargs: Any) -> None:  # type: ignore[override]
        return _run(super().send_messages(message, timeout=timeout, **kwargs))

    def schedule_messages(self, messages: Any, schedule_time_utc: datetime, **kwargs: Any) -> list[int]:  # type: ignore[override]
        return _run(super().schedule_messages(messages, schedule_time_utc, **kwargs))

    def cancel_scheduled_messages(self, sequence_numbers: int | list[int], **kwargs: Any) -> None:  # type: ignore[override]
        return _run(super().cancel_scheduled_messages(sequence_numbers, **kwargs))

    def create_message_batch(self, max_size_in_bytes: int | None = None) -> Any:  # type: ignore[override]
        return _run(super().create_message_batch(max_size_in_bytes))

    def close(self) -> None:  # type: ignore[override]
        _run(super().close())

    def __enter__(self) -> ServiceBusSender:
        self._check_live()
        return self

    def __exit__(self, *args: Any) -> None:
        self.close()


class ServiceBusSession(aio_client.ServiceBusSession, _RealSyncSession):
    """Also the real sync session class, so the sync AutoLockRenewer accepts it."""

    def get_state(self, **kwargs: Any) -> bytes | None:  # type: ignore[override]
        return _run(super().get_state(**kwargs))

    def set_state(self, state: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        return _run(super().set_state(state, **kwargs))

    def renew_lock(self, **kwargs: Any) -> datetime:  # type: ignore[override]
        return _run(super().renew_lock(**kwargs))


class ServiceBusReceiver(aio_client.ServiceBusReceiver):
    async def _operation(self, name: str, timeout: float | None = None) -> None:  # noqa: ASYNC109 - the aio signature
        _operation(self, name)

    async def _wait(self, store: Any, deadline: tuple[float, float]) -> bool:
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

    def _deadline(self, wait: float) -> tuple[float, float]:
        return self._world.clock.time() + wait, time.monotonic() + wait

    async def _acquire_session(self, store: Any) -> None:
        try:
            await super()._acquire_session(store)
        except OperationTimeoutError:
            raise
        if self._session is not None and not isinstance(self._session, ServiceBusSession):
            session = ServiceBusSession(self, self._session._lock)
            self._session = session

    def __enter__(self) -> ServiceBusReceiver:
        self._check_live()
        _run(self._open())
        return self

    def __exit__(self, *args: Any) -> None:
        self.close()

    def __iter__(self) -> Iterator[FakeReceivedMessage]:
        return self

    def __next__(self) -> FakeReceivedMessage:
        self._check_live()
        _run(self._open())
        _operation(self, "receive")
        messages = _run(self._receive(1, self._max_wait_time))
        if not messages:
            raise StopIteration
        return messages[0]

    def receive_messages(self, max_message_count: int | None = 1, max_wait_time: float | None = None) -> list[Any]:  # type: ignore[override]
        return _run(super().receive_messages(max_message_count, max_wait_time))

    def peek_messages(self, max_message_count: int = 1, **kwargs: Any) -> list[Any]:  # type: ignore[override]
        return _run(super().peek_messages(max_message_count, **kwargs))

    def receive_deferred_messages(self, sequence_numbers: int | list[int], **kwargs: Any) -> list[Any]:  # type: ignore[override]
        return _run(super().receive_deferred_messages(sequence_numbers, **kwargs))

    def complete_message(self, message: Any) -> None:  # type: ignore[override]
        return _run(super().complete_message(message))

    def abandon_message(self, message: Any) -> None:  # type: ignore[override]
        return _run(super().abandon_message(message))

    def defer_message(self, message: Any) -> None:  # type: ignore[override]
        return _run(super().defer_message(message))

    def dead_letter_message(
        self, message: Any, reason: str | None = None, error_description: str | None = None
    ) -> None:  # type: ignore[override]
        return _run(super().dead_letter_message(message, reason, error_description))

    def renew_message_lock(self, message: Any, **kwargs: Any) -> datetime:  # type: ignore[override]
        return _run(super().renew_message_lock(message, **kwargs))

    def close(self) -> None:  # type: ignore[override]
        _run(super().close())


def _pages(fetch: Callable[[], list[str]]) -> ItemPaged[str]:
    return ItemPaged(lambda token: fetch(), lambda page: (None, iter(page)))


class ServiceBusClient(aio_client.ServiceBusClient):
    """Fake sync `azure.servicebus.ServiceBusClient`."""

    @classmethod
    def from_connection_string(cls, conn_str: str, **kwargs: Any) -> ServiceBusClient:
        from azure.servicebus._common._connection_string_parser import parse_connection_string

        props = parse_connection_string(conn_str)
        if props.entity_path:
            kwargs.setdefault("entity_name", props.entity_path)
        credential = kwargs.pop("credential", None) or _ConnectionStringCredential(props)
        return cls(props.fully_qualified_namespace, credential, **kwargs)

    def __enter__(self) -> ServiceBusClient:
        return self

    def __exit__(self, *args: Any) -> None:
        self.close()

    def close(self) -> None:  # type: ignore[override]
        for handler in list(self._handlers):
            handler.close()  # type: ignore[unused-coroutine]
        self._handlers.clear()
        self._closed = True

    def list_queue_sessions(  # type: ignore[override]
        self, queue_name: str, *, state_updated_after: datetime | None = None, timeout: float | None = None
    ) -> ItemPaged[str]:
        self._check_entity(queue_name)
        self._check_timeout(timeout)
        return _pages(lambda: self._session_ids(queue_name, None, state_updated_after))

    def list_subscription_sessions(  # type: ignore[override]
        self,
        topic_name: str,
        subscription_name: str,
        *,
        state_updated_after: datetime | None = None,
        timeout: float | None = None,
    ) -> ItemPaged[str]:
        self._check_entity(topic_name)
        self._check_timeout(timeout)
        return _pages(lambda: self._session_ids(topic_name, subscription_name, state_updated_after))

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


__all__ = ["DEFAULT_RECEIVE_WAIT_SECONDS", "ServiceBusClient", "ServiceBusReceiver", "ServiceBusSender", "to_datetime"]
