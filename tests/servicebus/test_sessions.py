"""The sessions of a session-enabled entity (`testing/sessions.py`), as a synchronous model: which session
a receiver gets, who holds a lock, and what an ended lock gives back."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from pairedbus.servicebus.errors import ErrorKind, ServiceError
from pairedbus.servicebus.sessions import Sessions


def _record(session_id: str, sequence_number: int) -> Any:
    return SimpleNamespace(content=SimpleNamespace(session_id=session_id), sequence_number=sequence_number)


def _sessions() -> tuple[Sessions, list[list[Any]]]:
    released: list[list[Any]] = []
    return Sessions(released.append), released


def test_the_next_session_is_the_first_with_messages_not_locked_by_another() -> None:
    sessions, _ = _sessions()
    sessions.append(_record("a", 1))
    sessions.append(_record("b", 2))
    first = sessions.acquire(None, owner="r1", now=0.0, lock_seconds=60)
    second = sessions.acquire(None, owner="r2", now=0.0, lock_seconds=60)
    assert (first.session_id, second.session_id) == ("a", "b")
    assert sessions.acquire(None, owner="r3", now=0.0, lock_seconds=60) is None


def test_a_named_session_held_by_another_cannot_be_locked_until_its_lock_lapses() -> None:
    sessions, _ = _sessions()
    sessions.acquire("a", owner="r1", now=0.0, lock_seconds=60)
    with pytest.raises(ServiceError) as refused:
        sessions.acquire("a", owner="r2", now=59.0, lock_seconds=60)
    assert refused.value.kind is ErrorKind.SESSION_CANNOT_BE_LOCKED
    assert sessions.acquire("a", owner="r2", now=60.0, lock_seconds=60).owner == "r2"


def test_a_lapsed_lock_is_lost_and_its_messages_go_back_in_sequence_order() -> None:
    sessions, released = _sessions()
    lock = sessions.acquire("a", owner="r1", now=0.0, lock_seconds=60)
    lock.records = {"t2": _record("a", 2), "t1": _record("a", 1)}
    sessions.check(lock, "r1", now=59.0)
    with pytest.raises(ServiceError) as lost:
        sessions.check(lock, "r1", now=60.0)
    assert lost.value.kind is ErrorKind.SESSION_LOCK_LOST
    assert [[r.sequence_number for r in batch] for batch in released] == [[1, 2]]
    assert lock.owner is None and "a" not in sessions.locks  # idle: forgotten


def test_renewing_extends_the_session_and_every_message_locked_under_it() -> None:
    sessions, _ = _sessions()
    lock = sessions.acquire("a", owner="r1", now=0.0, lock_seconds=60)
    record = _record("a", 1)
    lock.records = {"t1": record}
    assert sessions.renew(lock, now=30.0, lock_seconds=60) == 90.0
    assert record.locked_until == 90.0


def test_the_browser_lists_sessions_with_messages_or_state() -> None:
    sessions, _ = _sessions()
    sessions.append(_record("with-messages", 1))
    stated = sessions.acquire("with-state", owner="r1", now=0.0, lock_seconds=60)
    stated.state, stated.state_updated = b"s", 10.0
    sessions.acquire("empty", owner="r1", now=0.0, lock_seconds=60)
    assert sessions.ids(None) == ["with-messages", "with-state"]
    assert sessions.ids(5.0) == ["with-state"] and sessions.ids(10.0) == []
