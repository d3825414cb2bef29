# ruff: noqa: ASYNC109 - the signatures mirror the SDK, whose coroutines take `timeout=`
"""The fake session of a session receiver (aio) and its sync twin."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from azure.servicebus import ServiceBusSession as _RealSyncSession
from azure.servicebus.aio import ServiceBusSession as _RealSession

from pairedbus.testing.clock import to_datetime
from pairedbus.testing.handler import run
from pairedbus.testing.store import SessionLock


class ServiceBusSession(_RealSession):
    """Session state and lock of a session receiver (subclass of the real class so that
    `AutoLockRenewer.register(receiver, receiver.session)` accepts it)."""

    def __init__(self, receiver: Any, lock: SessionLock) -> None:
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


class SyncServiceBusSession(ServiceBusSession, _RealSyncSession):
    """Also the real sync session class, so the sync AutoLockRenewer accepts it."""

    def get_state(self, **kwargs: Any) -> bytes | None:  # type: ignore[override]
        return run(super().get_state(**kwargs))

    def set_state(self, state: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        return run(super().set_state(state, **kwargs))

    def renew_lock(self, **kwargs: Any) -> datetime:  # type: ignore[override]
        return run(super().renew_lock(**kwargs))
