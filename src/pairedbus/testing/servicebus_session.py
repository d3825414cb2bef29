# ruff: noqa: ASYNC109 - the signatures mirror the SDK, whose coroutines take `timeout=`
"""The fake session of a session receiver (aio) and its sync twin, on one core (`SessionCore`).

Each twin is also the real SDK class of its kind, so that `AutoLockRenewer.register(receiver,
receiver.session)` (aio or sync) accepts it; the state and lock live in the session model
(sessions.py), reached through the receiver that holds the session (`SessionHost`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from azure.servicebus import ServiceBusSession as _RealSyncSession
from azure.servicebus.aio import ServiceBusSession as _RealSession

from pairedbus.servicebus.clock import Clock, to_datetime
from pairedbus.servicebus.sessions import SessionLock
from pairedbus.testing.errors import raises_sdk_errors
from pairedbus.testing.handler import run


class SessionHost(Protocol):
    """What a session needs of its receiver (receiver.py imports the sessions, not the reverse)."""

    @property
    def clock(self) -> Clock: ...

    async def session_round_trip(self, operation: str) -> None:
        """One round trip for a session operation; raises if the session lock was lost."""
        ...

    def renew_session_lock(self, lock: SessionLock) -> float:
        """Renew the session's lock; epoch seconds of its new expiry."""
        ...


class SessionCore:
    """Session state and lock, read from the session model: what both twins share."""

    def __init__(self, receiver: SessionHost, lock: SessionLock) -> None:
        self._host = receiver
        self._lock = lock
        # The SDK's own fields, as its BaseSession sets them (AutoLockRenewer reads some).
        self._session_id = lock.session_id
        self._receiver: Any = receiver
        self._encoding = "UTF-8"
        self._session_start: Any = receiver.clock.now()
        self._locked_until_utc: Any = self.locked_until_utc  # as the SDK: set on open and renew
        self._lock_lost = False
        self.auto_renew_error: Any = None

    @property
    def lock(self) -> SessionLock:
        """The session's lock in the session model."""
        return self._lock

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def locked_until_utc(self) -> datetime | None:
        return to_datetime(self._lock.until) if self._lock.until else None

    @property
    def _lock_expired(self) -> bool:
        return self._lock.owner is not self._host or self._lock.until <= self._host.clock.time()

    async def _get_state(self) -> bytes | None:
        await self._host.session_round_trip("get_session_state")
        return self._lock.state

    async def _set_state(self, state: str | bytes | bytearray | None) -> None:
        await self._host.session_round_trip("set_session_state")
        self._lock.state = state.encode(self._encoding) if isinstance(state, str) else (bytes(state) if state else None)
        self._lock.state_updated = self._host.clock.time()

    async def _renew_lock(self) -> datetime:
        await self._host.session_round_trip("renew_session_lock")
        until = to_datetime(self._host.renew_session_lock(self._lock))
        self._locked_until_utc = until
        return until


@raises_sdk_errors
class ServiceBusSession(SessionCore, _RealSession):
    """Fake `azure.servicebus.aio.ServiceBusSession`."""

    async def get_state(self, *, timeout: float | None = None, **kwargs: Any) -> bytes:
        # The SDK annotates bytes, yet returns None for a session without state, as the service does.
        return await self._get_state()  # type: ignore[return-value]  # None, as the SDK returns it

    async def set_state(
        self, state: str | bytes | bytearray | None, *, timeout: float | None = None, **kwargs: Any
    ) -> Any:
        await self._set_state(state)

    async def renew_lock(self, *, timeout: float | None = None, **kwargs: Any) -> datetime:
        return await self._renew_lock()


@raises_sdk_errors
class SyncServiceBusSession(SessionCore, _RealSyncSession):
    """Fake `azure.servicebus.ServiceBusSession`."""

    def get_state(self, *, timeout: float | None = None, **kwargs: Any) -> bytes:
        # The SDK annotates bytes, yet returns None for a session without state, as the service does.
        return run(self._get_state())  # type: ignore[return-value]  # None, as the SDK returns it

    def set_state(self, state: str | bytes | bytearray | None, *, timeout: float | None = None, **kwargs: Any) -> Any:
        run(self._set_state(state))

    def renew_lock(self, *, timeout: float | None = None, **kwargs: Any) -> datetime:
        return run(self._renew_lock())
