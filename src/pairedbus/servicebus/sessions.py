"""The sessions of one session-enabled queue or subscription: each session's available messages,
in sequence order, and its lock (owner, expiry, state, the messages locked under it).

A model, like the message store that holds it: synchronous, no clients, no waiting. The store
decides what a released message becomes (back in its session, dead-lettered after its last
delivery); the sessions only say which messages a lock held (`release`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from pairedbus.servicebus.content import Record
from pairedbus.servicebus.errors import session_lock_lost, session_locked


class SessionLock:
    __slots__ = ("owner", "records", "session_id", "state", "state_updated", "until")

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.owner: Any = None
        self.until = 0.0
        self.state: bytes | None = None
        self.state_updated = 0.0  # epoch seconds of the last set_state
        self.records: dict[int, Record] = {}  # lock token -> record locked under this session

    def held(self, now: float) -> bool:
        return self.owner is not None and self.until > now

    def held_by_other(self, owner: Any, now: float) -> bool:
        return self.held(now) and self.owner is not owner


class Sessions:
    """Session queues and session locks; `release` takes back the messages of an ended lock."""

    def __init__(self, release: Callable[[list[Record]], None]) -> None:
        self.queues: dict[str, deque[Record]] = {}
        self.locks: dict[str, SessionLock] = {}
        self._release = release

    # --- messages -----------------------------------------------------------------------------

    def queue(self, session_id: str) -> deque[Record]:
        q = self.queues.get(session_id)
        if q is None:
            q = self.queues[session_id] = deque()
        return q

    def append(self, rec: Record) -> None:
        self.queue(rec.content.session_id or "").append(rec)

    def put_back(self, records: list[Record]) -> None:
        """Released messages go back to the head of their sessions, in sequence order."""
        for rec in reversed(records):
            self.queue(rec.content.session_id or "").appendleft(rec)

    def pending(self) -> Iterator[Record]:
        """Every message waiting in a session or locked under one (what a peek sees)."""
        for q in self.queues.values():
            yield from q
        for lock in self.locks.values():
            yield from lock.records.values()

    # --- locks --------------------------------------------------------------------------------

    def expire(self, now: float) -> None:
        """An expired session lock frees its messages."""
        for lock in list(self.locks.values()):
            if lock.owner is not None and lock.until <= now:
                self.release(lock)

    def acquire(self, session_id: str | None, owner: Any, now: float, lock_seconds: float) -> SessionLock | None:
        """Lock a named session, or the next session with messages when session_id is None."""
        self.expire(now)
        if session_id is None:
            for sid, q in self.queues.items():
                lock = self.locks.get(sid)
                if q and (lock is None or not lock.held(now)):
                    return self._lock(sid, owner, now, lock_seconds)
            return None
        lock = self.locks.get(session_id)
        if lock is not None and lock.held_by_other(owner, now):
            raise session_locked(session_id)
        return self._lock(session_id, owner, now, lock_seconds)

    def _lock(self, session_id: str, owner: Any, now: float, lock_seconds: float) -> SessionLock:
        lock = self.locks.get(session_id)
        if lock is None:
            lock = self.locks[session_id] = SessionLock(session_id)
        elif lock.owner is not None and lock.owner is not owner:
            self.release(lock)  # the previous owner's lock expired
            self.locks[session_id] = lock
        lock.owner = owner
        lock.until = now + lock_seconds
        return lock

    def check(self, lock: SessionLock, owner: Any, now: float) -> None:
        """Raise SessionLockLostError unless `owner` still holds the lock (a lapsed lock ends)."""
        if lock.owner is not owner or lock.until <= now:
            if lock.owner is owner:
                self.release(lock)
            raise session_lock_lost()

    def renew(self, lock: SessionLock, now: float, lock_seconds: float) -> float:
        lock.until = now + lock_seconds
        for rec in lock.records.values():
            rec.locked_until = lock.until
        return lock.until

    def close(self, lock: SessionLock, owner: Any) -> None:
        if lock.owner is owner:
            self.release(lock)

    def release(self, lock: SessionLock) -> None:
        """The session lock ended: every message locked under it is released."""
        records = sorted(lock.records.values(), key=lambda r: r.sequence_number)
        lock.records.clear()
        lock.owner = None
        lock.until = 0.0
        self._release(records)
        self._forget_if_idle(lock.session_id)

    def release_all(self) -> None:
        for lock in list(self.locks.values()):
            self.release(lock)

    def _forget_if_idle(self, session_id: str) -> None:
        q = self.queues.get(session_id)
        lock = self.locks.get(session_id)
        if q is not None and not q:
            del self.queues[session_id]
        if lock is not None and lock.owner is None and lock.state is None and not lock.records:
            del self.locks[session_id]

    # --- the session browser ------------------------------------------------------------------

    def ids(self, state_updated_after: float | None) -> list[str]:
        """What the session browser lists: sessions with active (available or locked) messages or
        with stored state; with `state_updated_after`, only sessions whose state was set after it."""
        if state_updated_after is not None:
            return self._state_set_after(state_updated_after)
        found = [sid for sid, q in self.queues.items() if q]
        for sid, lock in self.locks.items():
            if sid not in found and (lock.records or lock.state is not None):
                found.append(sid)
        return found

    def _state_set_after(self, moment: float) -> list[str]:
        return [sid for sid, lock in self.locks.items() if lock.state is not None and lock.state_updated > moment]
