"""Settling a locked message: the one rule both front-ends (in-process and wire) apply.

A settlement checks the session lock and the message lock, lets an injected late lock loss
happen, then completes, abandons, defers or dead-letters the record in its store. The caller has
already counted the operation and raised any injected fault (`world.check`).
"""

from __future__ import annotations

from typing import Any, Literal

from pairedbus.servicebus.content import Record
from pairedbus.servicebus.errors import lock_lost_late
from pairedbus.servicebus.sessions import SessionLock
from pairedbus.servicebus.store import MessageStore

__all__ = ["Action", "settle"]

Action = Literal["complete", "abandon", "defer", "dead-letter"]


def settle(
    store: MessageStore,
    record: Record,
    token: int,
    lock: SessionLock | None,
    owner: Any,
    action: Action,
    *,
    fqdn: str,
    entity_name: str,
    reason: str | None = None,
    description: str | None = None,
) -> None:
    """Settle `record` (locked under `token`); raises the model's error when it cannot be."""
    world = store.entity.namespace.world
    now = world.clock.time()
    if lock is not None:
        store.sessions.check(lock, owner, now)
    store.check_lock(record, token, now, lock)
    counts = store.entity.counts
    if action == "complete":
        if lock is None and world.lock_lost_before_complete(fqdn, entity_name):
            store.lose_lock(record)
            raise lock_lost_late()
        store.complete(record, lock)
        counts.completes += 1
    elif action == "abandon":
        store.abandon(record, lock)
        counts.abandons += 1
    elif action == "defer":
        store.defer(record, lock)
        counts.defers += 1
    else:
        store.dead_letter(record, lock, reason, description)
