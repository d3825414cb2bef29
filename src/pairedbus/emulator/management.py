"""`$management` operations (`com.microsoft:…`), each one small function on the model.

A request names its operation in the application properties and carries its arguments as a map
body; the reply carries `statusCode`, `statusDescription` (and `errorCondition` on failure) and a
map body. Errors are the model's, answered with the status and condition the service sends.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pairedbus.emulator import conditions
from pairedbus.emulator.codec import Array, Symbol, Timestamp
from pairedbus.emulator.messages import content_from_wire, delivery_bytes
from pairedbus.emulator.nodes import Node
from pairedbus.servicebus.entities import check_sessions
from pairedbus.servicebus.errors import lock_lost, scheduled_message_not_found, session_lock_lost
from pairedbus.servicebus.settlement import Action, settle

if TYPE_CHECKING:
    from pairedbus.emulator.ports import ConnectionPort as Connection
    from pairedbus.emulator.requests import Request

__all__ = ["OPERATIONS", "handle"]

_PREFIX = "com.microsoft:"
#: `last-updated-time` at .NET DateTime.MaxValue (ms since the epoch): the session browser's default
#: listing (sessions with messages or state), not a cutoff.
DATETIME_MAX_MS = 253_402_300_800_000
#: The condition the service sends with its 204 when no session matches a session listing.
SESSION_NOT_FOUND = "com.microsoft:session-not-found"
_DISPOSITIONS: dict[str, Action] = {
    "completed": "complete",
    "abandoned": "abandon",
    "defered": "defer",
    "suspended": "dead-letter",
}


class _Context:
    def __init__(self, connection: Connection, node: Node, request: Request) -> None:
        self.connection = connection
        self.broker = connection.broker
        self.node = node
        self.request = request
        self.body: dict[Any, Any] = request.body if isinstance(request.body, dict) else {}
        self.world = self.broker.world

    @property
    def now(self) -> float:
        return self.world.clock.time()

    def store(self) -> Any:
        entity = self.broker.namespace.receivable(self.node.entity, self.node.subscription)
        return entity.store_for(self.node.sub_queue)

    def receiver(self) -> Any:
        """The receiver link the request is for (`associated-link-name`), if still attached."""
        name = self.request.property("associated-link-name")
        for link in self.connection.all_links():
            if link.name == name and not link.role_receiver:
                return link
        return None

    def locked(self, token: Any) -> tuple[Any, Any, Any, Any]:
        """(store, record, session lock, owner) of the message locked under `token` in the request's entity; the
        model's lock-lost when none is. The service keeps a message's lock with the entity: a token is settled
        or renewed from any connection to it (the SDK's `complete_message` falls back to this connection's
        management link for a message another receiver received), never from another entity's. Before, tokens
        were looked up in this connection's table only, and another connection's were answered lock-lost."""
        key = token.int if isinstance(token, uuid.UUID) else -1
        store = self.store()
        entry: tuple[Any, Any, Any, Any] | None = self.connection.locks.get(key)
        if entry is not None and entry[0] is store:
            return entry  # received on this connection: its link's session lock and owner
        record = store.locked_record(key)
        if record is None:
            raise lock_lost()
        session_id = record.content.session_id
        lock = None if session_id is None else store.sessions.locks.get(session_id)
        # A session's message: only the session's holder settles it (`settle` checks `owner` holds `lock`).
        return store, record, lock, self.receiver()

    def session_lock(self) -> Any:
        session_id = self.body.get("session-id")
        link = self.receiver()
        lock = getattr(link, "lock", None)
        if lock is None or (session_id is not None and lock.session_id != session_id):
            lock = self.store().sessions.locks.get(str(session_id))
        if lock is None or not lock.held(self.now):  # a lapsed lock is lost, on its own link too
            raise session_lock_lost()
        return lock


def _renew_lock(ctx: _Context) -> dict[str, Any]:
    expirations = []
    for token in ctx.body.get("lock-tokens", []):
        store, record, _, _ = ctx.locked(token)
        store.check_lock(record, token.int, ctx.now, None)
        if ctx.broker.faults.take_lost_renewal():
            store.lose_lock(record)
            raise lock_lost()
        until = store.renew(record, ctx.now)
        store.entity.counts.renewals += 1
        expirations.append(Timestamp(int(until * 1000)))
    return {"expirations": Array(Timestamp, tuple(expirations))}


def _peek(ctx: _Context) -> dict[str, Any] | None:
    store = ctx.store()
    count = int(ctx.body.get("message-count", 1))
    start = int(ctx.body.get("from-sequence-number", 1))
    records = store.peek(count, start, ctx.now)
    session_id = ctx.body.get("session-id")
    if session_id is not None:
        records = [r for r in records if (r.content.session_id or "") == session_id]
    store.entity.counts.peeks += len(records)
    if not records:
        return None
    return {
        "messages": [{"message": delivery_bytes(r, delivery_count=r.deliveries, locked_until=None)} for r in records]
    }


def _schedule(ctx: _Context) -> dict[str, Any]:
    entity = ctx.broker.namespace.sendable(ctx.node.entity)
    contents = [content_from_wire(bytes(m["message"])) for m in ctx.body.get("messages", [])]
    check_sessions(entity, contents)
    numbers = entity.accept(contents, ctx.now)
    entity.counts.schedules += len(numbers)
    return {"sequence-numbers": Array(int, tuple(numbers))}


def _cancel(ctx: _Context) -> None:
    entity = ctx.broker.namespace.sendable(ctx.node.entity)
    numbers = [int(n) for n in ctx.body.get("sequence-numbers", [])]
    missing = [n for n in numbers if not entity.is_scheduled(n)]
    if missing:
        raise scheduled_message_not_found(missing[0])
    entity.cancel_scheduled(numbers)


def _receive_by_sequence_number(ctx: _Context) -> dict[str, Any]:
    store = ctx.store()
    numbers = [int(n) for n in ctx.body.get("sequence-numbers", [])]
    delete = int(ctx.body.get("receiver-settle-mode", 1)) == 0
    owner = ctx.receiver()
    records = store.take_deferred(numbers, owner, now=ctx.now, delete=delete)
    lock = getattr(owner, "lock", None)
    out = []
    for record in records:
        token = record.lock_token
        if not delete:
            ctx.connection.locks[token] = (store, record, lock, owner)
        locked = None if delete else record.locked_until
        out.append(
            {
                "lock-token": uuid.UUID(int=token) if token else uuid.UUID(int=0),
                "message": delivery_bytes(record, delivery_count=record.deliveries - 1, locked_until=locked),
            }
        )
    store.entity.counts.receives += len(out)
    return {"messages": out}


def _update_disposition(ctx: _Context) -> None:
    action = _DISPOSITIONS.get(str(ctx.body.get("disposition-status", "")))
    if action is None:
        raise ValueError(f"unknown disposition-status {ctx.body.get('disposition-status')!r}")
    for token in ctx.body.get("lock-tokens", []):
        store, record, lock, owner = ctx.locked(token)
        ctx.world.check(ctx.broker.fqdn, ctx.node.entity, action)
        settle(
            store,
            record,
            token.int,
            lock,
            owner,
            action,
            fqdn=ctx.broker.fqdn,
            entity_name=ctx.node.entity,
            reason=ctx.body.get("deadletter-reason"),
            description=ctx.body.get("deadletter-description"),
        )
        ctx.connection.locks.pop(token.int, None)


def _renew_session_lock(ctx: _Context) -> dict[str, Any]:
    lock = ctx.session_lock()
    store = ctx.store()
    until = store.renew_session(lock, ctx.now)
    store.entity.counts.renewals += 1
    return {"expiration": Timestamp(int(until * 1000))}


def _get_session_state(ctx: _Context) -> dict[str, Any]:
    lock = ctx.session_lock()
    return {"session-state": lock.state}


def _set_session_state(ctx: _Context) -> None:
    lock = ctx.session_lock()
    state = ctx.body.get("session-state")
    lock.state = state.encode() if isinstance(state, str) else (bytes(state) if state else None)
    lock.state_updated = ctx.now


def _get_message_sessions(ctx: _Context) -> dict[str, Any] | None:
    """A page of the entity's sessions; None (204, `session-not-found`) when the page is empty, as the
    service answers (the SDK reads no empty array)."""
    store = ctx.store()
    updated = ctx.body.get("last-updated-time")
    cutoff_ms = DATETIME_MAX_MS if updated is None else int(updated)
    ids = store.session_ids(ctx.now, None if cutoff_ms >= DATETIME_MAX_MS else cutoff_ms / 1000)
    skip = int(ctx.body.get("skip", 0))
    top = int(ctx.body.get("top", len(ids)))
    page = ids[skip : skip + top]
    if not page:
        return None
    return {"skip": skip + len(page), "sessions-ids": Array(str, tuple(page))}


OPERATIONS: dict[str, Callable[[_Context], Any]] = {
    "renew-lock": _renew_lock,
    "peek-message": _peek,
    "schedule-message": _schedule,
    "cancel-scheduled-message": _cancel,
    "receive-by-sequence-number": _receive_by_sequence_number,
    "update-disposition": _update_disposition,
    "renew-session-lock": _renew_session_lock,
    "get-session-state": _get_session_state,
    "set-session-state": _set_session_state,
    "get-message-sessions": _get_message_sessions,
}


def handle(connection: Connection, node: Node, request: Request) -> tuple[dict[str, Any], Any]:
    """(application properties, body) of the reply to one request."""
    operation = str(request.property("operation", ""))
    name = operation.removeprefix(_PREFIX)
    run = OPERATIONS.get(name)
    if run is None:
        return _failure(501, "com.microsoft:not-implemented", f"operation {operation!r} is not supported"), None
    ctx = _Context(connection, node, request)
    # Counted by the wire name ("update-disposition"): a test tells a settlement by lock token
    # here from one on the receive link (counted as "complete", "dead-letter", ...).
    ctx.world.operations[name] = ctx.world.operations.get(name, 0) + 1
    try:
        body = run(ctx)
    except Exception as exc:
        condition, status, text = conditions.answer_of(exc)
        return _failure(status, condition, text), None
    if body is None and name == "peek-message":
        return {"statusCode": 204, "statusDescription": "No Content"}, None
    if body is None and name == "get-message-sessions":
        return _failure(204, SESSION_NOT_FOUND, "No Content"), None
    return {"statusCode": 200, "statusDescription": "OK"}, body if body is not None else {}


def _failure(status: int, condition: str, description: str) -> dict[str, Any]:
    return {"statusCode": status, "statusDescription": description, "errorCondition": Symbol(condition)}
