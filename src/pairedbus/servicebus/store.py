"""The message store of one queue or subscription (or its dead-letter sub-queue).

Everything here is synchronous and O(1) per message: deques in sequence order, lock expiry kept
in lock order and evaluated lazily when someone looks (a receive, a settlement, a count), as the
service itself only expires messages when a receiver pulls. Async waiting lives in the clients.
The store knows its entity only through the few attributes it reads (settings, counts, the
dead-letter store, forwarding, failed fragments): entities import the store, not the reverse.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import random
import zlib
from collections import deque
from collections.abc import Iterable
from typing import Any

from pairedbus.servicebus.content import (
    STATE_ACTIVE,
    STATE_DEFERRED,
    STATE_SCHEDULED,
    Record,
)
from pairedbus.servicebus.errors import deferred_message_not_found, lock_lost
from pairedbus.servicebus.sessions import SessionLock, Sessions

__all__ = [
    "DEAD_LETTER_REASON_MAX_DELIVERY",
    "DEAD_LETTER_REASON_TTL",
    "NOTHING_DOWN",
    "PARTITION_SHIFT",
    "MessageStore",
    "SessionLock",
    "partition_for_key",
    "partition_of",
]

DEAD_LETTER_REASON_MAX_DELIVERY: str = "MaxDeliveryCountExceeded"


DEAD_LETTER_REASON_TTL: str = "TTLExpiredException"


_TTL_DESCRIPTION = "The message expired and was dead lettered."


#: Lock tokens: a random 64-bit prefix per process and a counter, so tokens are unique UUIDs
#: without an os.urandom call per message.
_TOKEN_PREFIX = random.Random().getrandbits(63) << 64


_token_counter = itertools.count(1)


def _next_token() -> int:
    return _TOKEN_PREFIX | next(_token_counter)


#: A partitioned entity's sequence numbers carry the fragment in their top 16 bits ("for
#: partitioned entities, the topmost 16 bits reflect the partition identifier":
#: https://learn.microsoft.com/azure/service-bus-messaging/message-sequencing).
PARTITION_SHIFT = 48


def partition_of(sequence_number: int) -> int:
    return sequence_number >> PARTITION_SHIFT


def partition_for_key(key: str, partitions: int) -> int:
    """The fragment a partition key pins to (a stable hash; the service's own is internal)."""
    return zlib.crc32(key.encode("utf-8")) % partitions


#: What `fragments_down` answers while every fragment is up (shared, never mutated).
NOTHING_DOWN: frozenset[int] = frozenset()


class MessageStore:
    """The messages of one queue or subscription, or of its dead-letter sub-queue."""

    def __init__(self, entity: Any, *, dead_letter: bool) -> None:  # a ReceivableEntity (it imports this module)
        self.entity = entity
        self.is_dead_letter = dead_letter
        self.available: deque[Record] = deque()
        #: The sessions of a session-enabled entity (its messages wait there, not in `available`).
        self.sessions = Sessions(self._release_many)
        self.locked: deque[tuple[float, Record, int]] = deque()
        #: The records locked now, by lock token: a token is the entity's (the service settles it from any
        #: connection to the entity), and one of another entity names no lock here.
        self.tokens: dict[int, Record] = {}
        self.locked_count = 0
        self.active_count = 0
        self.size_in_bytes = 0
        self.scheduled: dict[int, Record] = {}
        self._schedule_heap: list[tuple[float, int]] = []
        self.deferred: dict[int, Record] = {}
        self.waiters: list[asyncio.Future[None]] = []
        #: Sync receivers blocked on this store (they wait on the world's `arrival` condition).
        self.sync_waiters = 0

    # --- housekeeping -----------------------------------------------------------------------

    def wake(self) -> None:
        waiters = self.waiters
        if waiters:
            self.waiters = []
            for fut in waiters:
                if not fut.done():
                    fut.set_result(None)
        if self.sync_waiters:
            arrival = self.entity.namespace.world.arrival
            with arrival:
                arrival.notify_all()

    def housekeep(self, now: float) -> None:
        """Promote due scheduled messages and release expired message locks."""
        heap = self._schedule_heap
        if heap and heap[0][0] <= now:
            self._promote_scheduled(now)
        locked = self.locked
        if not locked:
            return
        expired: list[Record] = []
        while locked:
            until, rec, token = locked[0]
            if rec.lock_token != token or rec.locked_until != until:
                locked.popleft()  # settled, or renewed (a newer entry follows)
                continue
            if until > now:
                break
            locked.popleft()
            expired.append(rec)
        if expired:
            self._release_many(expired)

    def next_due(self) -> float | None:
        """Epoch seconds of the next time-driven change (schedule or lock expiry), if any."""
        due = self._schedule_heap[0][0] if self._schedule_heap else None
        for until, rec, token in self.locked:
            if rec.lock_token == token and rec.locked_until == until:
                due = until if due is None else min(due, until)
                break
        return due

    def _promote_scheduled(self, now: float) -> None:
        heap = self._schedule_heap
        promoted = False
        while heap and heap[0][0] <= now:
            due, seq = heapq.heappop(heap)
            rec = self.scheduled.pop(seq, None)
            if rec is None:
                continue  # cancelled
            rec.state = STATE_ACTIVE
            rec.enqueued = due
            ttl = self.entity.effective_ttl(rec.content)
            rec.expires = None if ttl is None else due + ttl
            self._enqueue(rec)
            promoted = True
        if promoted:
            self.wake()

    # --- arrival ----------------------------------------------------------------------------

    def _enqueue(self, rec: Record) -> None:
        self.active_count += 1
        if self._by_session():
            self.sessions.append(rec)
        else:
            self.available.append(rec)

    def _by_session(self) -> bool:
        """Messages wait per session (the dead-letter sub-queue of a session entity has none)."""
        return self.entity.settings.requires_session and not self.is_dead_letter

    def add(self, rec: Record) -> None:
        self.size_in_bytes += rec.content.size
        self._enqueue(rec)

    def add_scheduled(self, rec: Record, due: float) -> None:
        rec.state = STATE_SCHEDULED
        self.size_in_bytes += rec.content.size
        self.scheduled[rec.sequence_number] = rec
        heapq.heappush(self._schedule_heap, (due, rec.sequence_number))

    def cancel_scheduled(self, sequence_number: int) -> bool:
        rec = self.scheduled.pop(sequence_number, None)
        if rec is None:
            return False
        self.size_in_bytes -= rec.content.size
        return True

    # --- delivery ---------------------------------------------------------------------------

    def take(
        self,
        max_count: int,
        owner: Any,
        *,
        now: float,
        delete: bool,
        session: SessionLock | None = None,
    ) -> list[Record]:
        """Deliver up to max_count records: lock them for `owner`, or remove them (receive and
        delete). Expired messages met on the way are dead-lettered or dropped."""
        self.housekeep(now)
        if session is not None:
            q = self.sessions.queues.get(session.session_id)
            if q is None:
                return []
        else:
            q = self.available
        out: list[Record] = []
        if not q:
            return out
        down = self.entity.fragments_down()
        if down:
            return self._take_around(q, down, max_count, owner, now=now, delete=delete, session=session)
        return self._deliver_from(q, max_count, owner, now=now, delete=delete, session=session)

    def _deliver_from(
        self,
        q: deque[Record],
        max_count: int,
        owner: Any,
        *,
        now: float,
        delete: bool,
        session: SessionLock | None,
    ) -> list[Record]:
        out: list[Record] = []
        lock_until = now + self.entity.settings.lock_seconds
        popleft = q.popleft
        locked_append = self.locked.append
        tokens = self.tokens
        while q and len(out) < max_count:
            rec = popleft()
            expires = rec.expires
            if expires is not None and expires <= now and not self.is_dead_letter:
                self._expire(rec)
                continue
            rec.deliveries += 1
            if delete:
                self.active_count -= 1
                self.size_in_bytes -= rec.content.size
            else:
                token = _next_token()
                rec.lock_token = token
                rec.lock_owner = owner
                tokens[token] = rec
                self.locked_count += 1
                if session is not None:
                    rec.locked_until = session.until
                    session.records[token] = rec
                else:
                    rec.locked_until = lock_until
                    locked_append((lock_until, rec, token))
            out.append(rec)
        return out

    def _take_around(
        self,
        q: deque[Record],
        down: frozenset[int] | set[int],
        max_count: int,
        owner: Any,
        *,
        now: float,
        delete: bool,
        session: SessionLock | None,
    ) -> list[Record]:
        """`take` while some fragments are down: their messages stay where they are, unseen."""
        popped: list[Record] = []
        ready: deque[Record] = deque()
        while q and len(ready) < max_count:
            rec = q.popleft()
            popped.append(rec)
            if partition_of(rec.sequence_number) not in down:
                ready.append(rec)
        out = self._deliver_from(ready, max_count, owner, now=now, delete=delete, session=session)
        keep = {id(r) for r in ready} | {id(r) for r in popped if partition_of(r.sequence_number) in down}
        q.extendleft(reversed([r for r in popped if id(r) in keep]))
        return out

    def take_deferred(self, sequence_numbers: Iterable[int], owner: Any, *, now: float, delete: bool) -> list[Record]:
        self.housekeep(now)
        out = []
        for seq in sequence_numbers:
            rec = self.deferred.get(seq)
            if rec is None or rec.lock_token:
                raise deferred_message_not_found(seq)
            rec.deliveries += 1
            if delete:
                del self.deferred[seq]
                self.size_in_bytes -= rec.content.size
            else:
                token = _next_token()
                rec.lock_token = token
                rec.lock_owner = owner
                self.tokens[token] = rec
                rec.locked_until = now + self.entity.settings.lock_seconds
                self.locked.append((rec.locked_until, rec, token))
                self.locked_count += 1
            out.append(rec)
        return out

    def peek(self, max_count: int, from_sequence: int | None, now: float) -> list[Record]:
        self.housekeep(now)
        pool: list[Record] = list(self.sessions.pending())
        pool.extend(self.available)
        pool.extend(rec for _, rec, token in self.locked if rec.lock_token == token)
        pool.extend(self.deferred.values())
        pool.extend(self.scheduled.values())
        start = from_sequence or 0
        seen: set[int] = set()
        chosen = []
        for rec in sorted(pool, key=lambda r: r.sequence_number):
            if rec.sequence_number < start or rec.sequence_number in seen:
                continue
            seen.add(rec.sequence_number)
            chosen.append(rec)
            if len(chosen) >= max_count:
                break
        return chosen

    # --- settlement -------------------------------------------------------------------------

    def locked_record(self, token: int) -> Record | None:
        """The record locked under `token` in this store, if any."""
        return self.tokens.get(token)

    def check_lock(self, rec: Record, token: int, now: float, session: SessionLock | None) -> None:
        if not token or rec.lock_token != token or self.tokens.get(token) is not rec:
            raise lock_lost()
        if session is None and rec.locked_until <= now:
            self.housekeep(now)
            raise lock_lost()

    def _unlock(self, rec: Record, session: SessionLock | None) -> None:
        if session is not None:
            session.records.pop(rec.lock_token, None)
        self.tokens.pop(rec.lock_token, None)
        rec.lock_token = 0
        rec.lock_owner = None
        self.locked_count -= 1

    def complete(self, rec: Record, session: SessionLock | None) -> None:
        self._unlock(rec, session)
        self.size_in_bytes -= rec.content.size
        if rec.state is STATE_DEFERRED:
            del self.deferred[rec.sequence_number]
        else:
            self.active_count -= 1

    def abandon(self, rec: Record, session: SessionLock | None) -> None:
        self._unlock(rec, session)
        self._return(rec, front=True)
        self.wake()

    def defer(self, rec: Record, session: SessionLock | None) -> None:
        self._unlock(rec, session)
        rec.state = STATE_DEFERRED
        self.active_count -= 1
        self.deferred[rec.sequence_number] = rec

    def dead_letter(
        self, rec: Record, session: SessionLock | None, reason: str | None, description: str | None
    ) -> None:
        self._unlock(rec, session)
        self._remove_to_dead_letter(rec, reason, description)

    def lose_lock(self, rec: Record) -> None:
        """The lock ran out before a settlement arrived: the message is available again."""
        self._release_many([rec])

    def renew(self, rec: Record, now: float) -> float:
        until: float = now + self.entity.settings.lock_seconds
        rec.locked_until = until
        self.locked.append((until, rec, rec.lock_token))
        return until

    # --- lock loss, expiry, dead-lettering ------------------------------------------------

    def _release_many(self, records: list[Record]) -> None:
        back = []
        for rec in records:
            self.tokens.pop(rec.lock_token, None)
            rec.lock_token = 0
            rec.lock_owner = None
            self.locked_count -= 1
            if rec.state is STATE_DEFERRED:
                continue
            if self._exhausted(rec):
                continue
            back.append(rec)
        self._return_many(back)

    def _exhausted(self, rec: Record) -> bool:
        """Dead-letter a message whose lock was released after its last allowed delivery."""
        if self.is_dead_letter:
            return False
        limit = self.entity.settings.max_delivery_count
        if rec.deliveries < limit:
            return False
        self._remove_to_dead_letter(
            rec,
            DEAD_LETTER_REASON_MAX_DELIVERY,
            f"Message could not be consumed after {limit} delivery attempts.",
        )
        return True

    def _return(self, rec: Record, *, front: bool) -> None:
        if rec.state is STATE_DEFERRED:
            return
        if self._exhausted(rec):
            return
        self._return_many([rec])

    def _return_many(self, records: list[Record]) -> None:
        """Put released messages back near the head, in sequence order."""
        if not records:
            return
        if self._by_session():
            self.sessions.put_back(records)
        else:
            self.available.extendleft(reversed(records))
        self.wake()

    def release_all_locks(self) -> None:
        """Locks are lost when the entity's properties change while messages are locked."""
        live = [rec for until, rec, token in self.locked if rec.lock_token == token and rec.locked_until == until]
        self.locked.clear()
        self._release_many(sorted(live, key=lambda r: r.sequence_number))
        self.sessions.release_all()

    def _expire(self, rec: Record) -> None:
        self.entity.counts.expired += 1
        if self.entity.settings.dead_lettering_on_message_expiration:
            self._remove_to_dead_letter(rec, DEAD_LETTER_REASON_TTL, _TTL_DESCRIPTION)
        else:
            self.active_count -= 1
            self.size_in_bytes -= rec.content.size

    def _remove_to_dead_letter(self, rec: Record, reason: str | None, description: str | None) -> None:
        if rec.state is STATE_DEFERRED:
            self.deferred.pop(rec.sequence_number, None)
        else:
            self.active_count -= 1
        self.size_in_bytes -= rec.content.size
        rec.state = STATE_ACTIVE
        rec.dl_reason = reason
        rec.dl_description = description
        rec.expires = None  # dead-lettered messages do not expire
        self.entity.counts.dead_letters += 1
        if self.is_dead_letter:  # dead-lettering from the dead-letter queue leaves it there
            self.size_in_bytes += rec.content.size
            self._enqueue(rec)
            return
        forward = self.entity.settings.forward_dead_lettered_messages_to
        if forward is not None and self.entity.forward(forward, rec.content, self.entity.now()):
            return
        self.entity.dead_letter_store.add(rec)
        self.entity.dead_letter_store.wake()

    # --- sessions (sessions.py keeps them; the store keeps them current) ---------------------

    def acquire_session(self, session_id: str | None, owner: Any, now: float) -> SessionLock | None:
        """Lock a named session, or the next session with messages when session_id is None."""
        self.housekeep(now)
        return self.sessions.acquire(session_id, owner, now, self.entity.settings.lock_seconds)

    def renew_session(self, lock: SessionLock, now: float) -> float:
        return self.sessions.renew(lock, now, self.entity.settings.lock_seconds)

    def session_ids(self, now: float, state_updated_after: float | None) -> list[str]:
        self.housekeep(now)
        return self.sessions.ids(state_updated_after)

    # --- introspection ----------------------------------------------------------------------

    def all_records(self, now: float) -> list[Record]:
        self.housekeep(now)
        return self.peek(2**62, None, now)

    def queued_records(self, now: float) -> list[Record]:
        """Active messages (available or locked, not deferred or scheduled) in sequence order."""
        return [r for r in self.all_records(now) if r.state is STATE_ACTIVE]
