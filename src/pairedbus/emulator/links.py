"""Links: what a client's sender feeds (`IncomingLink`) and what a client's receiver is fed
(`OutgoingLink`). Each does Service Bus's work through the model and answers in AMQP.

`$cbs` and `$management` are links too: requests arrive on an incoming link to the node, the
answer leaves on the outgoing link the client attached from the same node.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import TYPE_CHECKING, Any

from pairedbus.emulator import conditions, management
from pairedbus.emulator.cbs import audience_path, check_token
from pairedbus.emulator.codec import (
    DecodeError,
    Described,
    Symbol,
    UByte,
    UInt,
    ULong,
)
from pairedbus.emulator.frames import Code, field
from pairedbus.emulator.messages import batch_payloads, content_from_wire, delivery_bytes, lock_token_tag
from pairedbus.emulator.nodes import Node, parse_address
from pairedbus.emulator.requests import Request, parse_request, reply_payload
from pairedbus.servicebus.entities import check_sessions
from pairedbus.servicebus.errors import (
    entity_not_found,
    message_too_large,
    no_session_available,
    sessions_not_supported,
    sessions_required,
    unauthorized,
)
from pairedbus.servicebus.settlement import Action, settle

if TYPE_CHECKING:
    from pairedbus.emulator.ports import SessionPort as Session
    from pairedbus.servicebus.entities import ReceivableEntity
    from pairedbus.servicebus.sessions import SessionLock
    from pairedbus.servicebus.store import MessageStore

__all__ = ["IncomingLink", "Link", "OutgoingLink"]

SESSION_FILTER = Symbol("com.microsoft:session-filter")
LOCKED_UNTIL_UTC = Symbol("com.microsoft:locked-until-utc")
TIMEOUT = Symbol("com.microsoft:timeout")
MAX_BATCH_SIZE = Symbol("com.microsoft:max-message-batch-size")
#: .NET ticks of the Unix epoch (the session lock's expiry is sent in ticks).
EPOCH_TICKS = 621_355_968_000_000_000
#: Credit the broker gives a client's sender, topped up when half is used.
SENDER_CREDIT = 1000
#: How long a session receiver waits for a session when it named no wait (the SDK's default).
DEFAULT_SESSION_WAIT = 60.0

ACCEPTED = Described(ULong(Code.ACCEPTED), [])
RELEASED = Described(ULong(Code.RELEASED), [])


def rejected(error: Described | None) -> Described:
    return Described(ULong(Code.REJECTED), [error] if error is not None else [])


def _address(terminus: Any) -> str | None:
    if isinstance(terminus, Described) and isinstance(terminus.value, list):
        value = field(terminus.value, 0)
        return value if isinstance(value, str) else None
    return None


class Link:
    """State both directions share: the client's handle, name, termini, credit."""

    def __init__(self, session: Session, handle: int, fields: list[Any]) -> None:
        self.session = session
        self.connection = session.connection
        self.broker = self.connection.broker
        self.remote_handle = handle
        self.name = field(fields, 0, "")
        self.snd_settle_mode = int(field(fields, 3, 2))
        self.rcv_settle_mode = int(field(fields, 4, 0))
        self.source = field(fields, 5)
        self.target = field(fields, 6)
        self.properties: dict[Any, Any] = field(fields, 13, {}) or {}
        self.delivery_count = int(field(fields, 9, 0))
        self.credit = 0
        self.drain = False
        self.node: Node | None = None
        self.detached = False

    role_receiver = False  # the broker's role on this link

    @property
    def address(self) -> str | None:
        return _address(self.target if self.role_receiver else self.source)

    @property
    def reply_address(self) -> str | None:
        """The client's own end's address (a receiver's target: where replies are addressed)."""
        return _address(self.source if self.role_receiver else self.target)

    def _attach_fields(self, source: Any, target: Any, properties: dict[Any, Any] | None = None) -> list[Any]:
        limit = self.broker.namespace.max_message_size_in_bytes
        return [
            self.name,
            UInt(self.remote_handle),
            self.role_receiver,
            UByte(self.snd_settle_mode),
            UByte(self.rcv_settle_mode),
            source,
            target,
            None,
            None,
            None if self.role_receiver else UInt(self.delivery_count),
            ULong(limit),
            None,
            None,
            properties,
        ]

    def _node(self) -> Node | None:
        """What the attach's address names; None (the attach refused) when it names nothing."""
        address = self.address
        if address is None:
            self.refuse(entity_not_found(self.broker.fqdn, ""))
            return None
        self.node = parse_address(address)
        return self.node

    def refuse(self, exc: BaseException) -> None:
        """Refuse the attach as the service does: a null terminus, then a detach with the error."""
        source, target = (self.source, None) if self.role_receiver else (None, self.target)
        self.session.send(Code.ATTACH, self._attach_fields(source, target))
        self.detach(conditions.error_of(exc))

    def detach(self, error: Described | None) -> None:
        """The broker ends the link (with an error, the client's SDK raises it)."""
        if self.detached:
            return
        self.session.send(Code.DETACH, [UInt(self.remote_handle), True, error])
        self.session.links.pop(self.remote_handle, None)
        self.closed()

    def closed(self) -> None:
        self.detached = True

    def authorize(self, node: Node) -> None:
        """An entity link needs a put-token that covers it (or the whole namespace)."""
        wanted = node.address.lower()
        for granted in self.connection.authorized:
            if not granted or wanted == granted or wanted.startswith(granted + "/"):
                return
        raise conditions_unauthorized(node.path)

    def on_flow(self, fields: list[Any]) -> None:
        if field(fields, 9, False):
            self.session.send(Code.FLOW, self.session.flow_fields(self))


def conditions_unauthorized(path: str) -> BaseException:
    return unauthorized(f"Unauthorized access to '{path}': no token covers it (put-token).")


class IncomingLink(Link):
    """A client's sender: messages to an entity, or requests to `$cbs` / `$management`."""

    role_receiver = True

    def __init__(self, session: Session, handle: int, fields: list[Any]) -> None:
        super().__init__(session, handle, fields)
        self._partial: list[bytes] | None = None
        self._partial_fields: list[Any] = []

    def attach(self) -> None:
        node = self._node()
        if node is None:
            return
        try:
            if not (node.cbs or node.management):
                self.authorize(node)
                self.broker.faults.check_attach()
                self.broker.world.check(self.broker.fqdn, node.entity, "open")
                self.broker.namespace.sendable(node.entity)
            elif node.management:
                self.broker.namespace.sendable(node.entity)
        except Exception as exc:
            self.refuse(exc)
            return
        props = {MAX_BATCH_SIZE: ULong(self.broker.namespace.max_message_size_in_bytes)}
        self.session.send(Code.ATTACH, self._attach_fields(self.source, self.target, props))
        self.credit = SENDER_CREDIT
        self.session.send(Code.FLOW, self.session.flow_fields(self))

    def on_transfer(self, fields: list[Any], payload: bytes) -> None:
        if self._partial is None:
            self._partial_fields = fields
            self._partial = []
        self._partial.append(payload)
        if field(fields, 5, False):  # more frames follow
            return
        first, data = self._partial_fields, b"".join(self._partial)
        self._partial = None
        if field(fields, 10, False):  # aborted
            return
        self.delivery_count = (self.delivery_count + 1) % 2**32
        self.credit -= 1
        if self.credit < SENDER_CREDIT // 2:
            self.credit = SENDER_CREDIT
            self.session.send(Code.FLOW, self.session.flow_fields(self))
        node = self.node
        assert node is not None
        delivery_id = field(first, 1)
        settled = bool(field(first, 4, False))
        outcome: Described | None
        if node.cbs:
            self._put_token(parse_request(data))
            outcome = ACCEPTED
        elif node.management:
            self._management(parse_request(data))
            outcome = ACCEPTED
        else:
            outcome = self._send(node, data, int(field(first, 3, 0)))
            if outcome is None:
                return  # an ambiguous send: stored, and the connection dropped before the answer
        if not settled and delivery_id is not None:
            self.session.send(Code.DISPOSITION, [True, UInt(delivery_id), None, True, outcome])

    def _send(self, node: Node, data: bytes, message_format: int) -> Described | None:
        broker = self.broker
        try:
            broker.faults.check_send(self)
            broker.world.check(broker.fqdn, node.entity, "send")
            limit = broker.namespace.max_message_size_in_bytes
            if len(data) > limit:
                raise message_too_large(len(data), limit)
            contents = [content_from_wire(p) for p in batch_payloads(data, message_format)]
            entity = broker.namespace.sendable(node.entity)
            check_sessions(entity, contents)
            entity.accept(contents, broker.world.clock.time())
        except DecodeError as exc:
            return rejected(conditions.error_fields(conditions.DECODE_ERROR, str(exc)))
        except Exception as exc:
            if self.detached:
                return None
            return rejected(conditions.error_of(exc))
        try:
            broker.world.after_send(broker.fqdn, node.entity)
        except Exception:
            self.connection.drop()  # stored, but the client never hears it was
            return None
        return ACCEPTED

    def _reply(self, request: Request, status: dict[str, Any], body: Any) -> None:
        link = self.session.find_reply_link(request.reply_to, self.address or "")
        if link is None:
            return
        link.push_reply(reply_payload(request, status, body))

    def _put_token(self, request: Request) -> None:
        broker = self.broker
        token = request.body if isinstance(request.body, str) else ""
        audience = str(request.property("name", ""))
        verdict = check_token(token, broker.keys, accept_entra_tokens=broker.accept_entra_tokens)
        if verdict.ok:
            self.connection.authorized.add(audience_path(audience).lower())
            status = {"status-code": 202, "status-description": "Accepted"}
        else:
            status = {"status-code": 401, "status-description": verdict.description}
        self._reply(request, status, None)

    def _management(self, request: Request) -> None:
        node = self.node
        assert node is not None
        status, body = management.handle(self.connection, node, request)
        self._reply(request, status, body)


class OutgoingLink(Link):
    """A client's receiver: messages of a queue, subscription or sub-queue (peek-lock or
    receive-and-delete, a session's if it asked), or the replies of `$cbs` / `$management`."""

    role_receiver = False

    def __init__(self, session: Session, handle: int, fields: list[Any]) -> None:
        super().__init__(session, handle, fields)
        self.delivery_count = 0
        self.store: MessageStore | None = None
        self.entity: ReceivableEntity | None = None
        self.lock: SessionLock | None = None
        self.delete = self.snd_settle_mode == 1
        self.unsettled: dict[int, tuple[Any, int]] = {}
        self.replies: list[bytes] = []
        self._waiter: asyncio.Future[None] | None = None

    def attach(self) -> None:
        node = self._node()
        if node is None:
            return
        if node.cbs or node.management:
            self.session.send(Code.ATTACH, self._attach_fields(self.source, self.target))
            return
        try:
            self.authorize(node)
            self.broker.faults.check_attach()
            self.broker.world.check(self.broker.fqdn, node.entity, "open")
            entity = self.entity = self.broker.namespace.receivable(node.entity, node.subscription)
            store = self.store = entity.store_for(node.sub_queue)
        except Exception as exc:
            self.refuse(exc)
            return
        filters = field(self.source.value, 7) if isinstance(self.source, Described) else None
        wants_session = isinstance(filters, dict) and SESSION_FILTER in filters
        needs_session = entity.settings.requires_session and not store.is_dead_letter
        if needs_session and not wants_session:
            self.refuse(sessions_required())
        elif wants_session and not needs_session:
            self.refuse(sessions_not_supported())
        elif wants_session:
            wanted = filters[SESSION_FILTER] if isinstance(filters, dict) else None
            self.connection.spawn(self._attach_session(store, None if wanted is None else str(wanted)))
        else:
            self.session.send(Code.ATTACH, self._attach_fields(self.source, self.target))
            self.connection.spawn(self._pump())

    async def _attach_session(self, store: MessageStore, wanted: str | None) -> None:
        wait_ms = self.properties.get(TIMEOUT)
        deadline = time.monotonic() + (wait_ms / 1000 if wait_ms else DEFAULT_SESSION_WAIT)
        world = self.broker.world
        while True:
            try:
                lock = store.acquire_session(wanted, self, world.clock.time())
            except Exception as exc:
                self.refuse(exc)
                return
            if lock is not None:
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.detached:
                self.refuse(no_session_available())
                return
            await self._wait(store, min(remaining, 0.5))
        self.lock = lock
        source = self.source.value
        filters = dict(field(source, 7, {}) or {})
        filters[SESSION_FILTER] = lock.session_id
        source = (list(source) + [None] * 8)[: max(8, len(source))]
        source[7] = filters
        ticks = EPOCH_TICKS + int(lock.until * 10_000_000)
        props = {LOCKED_UNTIL_UTC: ticks}
        self.session.send(
            Code.ATTACH, self._attach_fields(Described(self.source.descriptor, source), self.target, props)
        )
        await self._pump()

    # --- credit and delivery --------------------------------------------------------------------

    def on_flow(self, fields: list[Any]) -> None:
        remote_count = field(fields, 5)
        credit = int(field(fields, 6, 0))
        before = self.credit
        self.credit = credit if remote_count is None else int(remote_count) + credit - self.delivery_count
        self.drain = bool(field(fields, 8, False))
        if self.replies:
            self._send_replies()
        if self.store is not None and self.credit > before:
            try:
                self.broker.world.check(self.broker.fqdn, self.node.entity if self.node else None, "receive")
                self.broker.faults.check_receive()
            except Exception as exc:
                self.detach(conditions.error_of(exc))
                return
        self._poke()
        super().on_flow(fields)

    def _poke(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _wait(self, store: MessageStore, seconds: float | None) -> None:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        self._waiter = fut
        store.waiters.append(fut)
        try:
            await asyncio.wait_for(asyncio.shield(fut), seconds)
        except TimeoutError:
            pass
        finally:
            self._waiter = None
            if fut in store.waiters:
                store.waiters.remove(fut)

    async def _pump(self) -> None:
        store, entity = self.store, self.entity
        assert store is not None and entity is not None
        world = self.broker.world
        while not self.detached:
            if self.credit <= 0:
                if self.drain:  # a drain finds no credit left: answer it all the same
                    self._drained()
                    continue
                await self._wait(store, None)
                continue
            now = world.clock.time()
            if self.lock is not None and not self.lock.held(now):
                self.detach(conditions.error_fields("com.microsoft:session-lock-lost", "The session lock has expired."))
                return
            records = store.take(self.credit, self, now=now, delete=self.delete, session=self.lock)
            if records:
                for record in records:
                    self._transfer(store, record)
                entity.counts.receives += len(records)
                await asyncio.sleep(0)
                continue
            if self.drain:
                self._drained()
                continue
            due = store.next_due()
            await self._wait(store, None if due is None else max(0.0, due - now))

    def _drained(self) -> None:
        """Nothing more to deliver under a drain: the unused credit is consumed (delivery-count
        advanced) and a flow with drain set tells the client (part 2, 2.6.7)."""
        self.delivery_count = (self.delivery_count + max(self.credit, 0)) % 2**32
        self.credit = 0
        self.drain = False
        self.session.send(Code.FLOW, [*self.session.flow_fields(self)[:8], True])

    def _transfer(self, store: MessageStore, record: Any) -> None:
        delivery_id = self.session.new_delivery_id()
        if self.delete:
            tag = uuid.uuid4().bytes_le
            payload = delivery_bytes(record, delivery_count=record.deliveries - 1, locked_until=None)
        else:
            token = record.lock_token
            tag = lock_token_tag(token)
            payload = delivery_bytes(record, delivery_count=record.deliveries - 1, locked_until=record.locked_until)
            self.unsettled[delivery_id] = (record, token)
            self.connection.locks[token] = (store, record, self.lock, self)
        self.session.send_transfer(
            [UInt(self.remote_handle), UInt(delivery_id), tag, UInt(0), self.delete, False], payload
        )
        self.delivery_count = (self.delivery_count + 1) % 2**32
        self.credit -= 1

    # --- settlement -----------------------------------------------------------------------------

    def on_disposition(self, first: int, last: int, state: Any, settled: bool) -> None:
        for delivery_id in range(first, last + 1):
            entry = self.unsettled.pop(delivery_id, None)
            if entry is None:
                continue
            record, token = entry
            echo = self._settle(record, token, state)
            if not settled:
                self.session.send(Code.DISPOSITION, [False, UInt(delivery_id), None, True, echo])

    def _settle(self, record: Any, token: int, state: Any) -> Described:
        """Settle one delivery by its outcome; the outcome to echo (the error, if it failed)."""
        store = self.store
        assert store is not None and self.node is not None
        code = int(state.descriptor) if isinstance(state, Described) else Code.RELEASED
        values = state.value if isinstance(state, Described) and isinstance(state.value, list) else []
        reason = description = None
        action: Action
        if code == Code.ACCEPTED:
            action = "complete"
        elif code == Code.REJECTED:
            action = "dead-letter"
            error = field(values, 0)
            error_fields = error.value if isinstance(error, Described) and isinstance(error.value, list) else []
            info = field(error_fields, 2, {}) or {}
            reason, description = info.get("DeadLetterReason"), info.get("DeadLetterErrorDescription")
        elif code == Code.MODIFIED and field(values, 1, False):
            action = "defer"
        elif code == Code.RELEASED:
            # never reached the application: not a delivery attempt (undone below if the lock was
            # already gone)
            record.deliveries -= 1
            action = "abandon"
        else:
            action = "abandon"
        try:
            # Refused before anything is applied (busy): the message keeps its lock, so the client can
            # still settle it by lock token; before, the lock was forgotten here and every retry found it lost.
            self.broker.faults.check_disposition()
            self.broker.world.check(self.broker.fqdn, self.node.entity, action)
        except Exception as exc:
            if code == Code.RELEASED:
                record.deliveries += 1
            return rejected(conditions.error_of(exc))
        self.connection.locks.pop(token, None)
        try:
            settle(
                store,
                record,
                token,
                self.lock,
                self,
                action,
                fqdn=self.broker.fqdn,
                entity_name=self.node.entity,
                reason=reason,
                description=description,
            )
        except Exception as exc:
            if code == Code.RELEASED:
                record.deliveries += 1  # not released by this disposition: its count stands
            return rejected(conditions.error_of(exc))
        if code == Code.REJECTED:
            return rejected(None)  # the SDK confirms a dead-letter only without an error
        return Described(ULong(code), values) if code != Code.RECEIVED else ACCEPTED

    # --- replies (on $cbs / $management) --------------------------------------------------------

    def push_reply(self, payload: bytes) -> None:
        self.replies.append(payload)
        self._send_replies()

    def _send_replies(self) -> None:
        while self.replies and self.credit > 0:
            payload = self.replies.pop(0)
            delivery_id = self.session.new_delivery_id()
            self.session.send_transfer(
                [UInt(self.remote_handle), UInt(delivery_id), delivery_id.to_bytes(4, "big"), UInt(0), True, False],
                payload,
            )
            self.delivery_count = (self.delivery_count + 1) % 2**32
            self.credit -= 1

    def closed(self) -> None:
        super().closed()
        self._poke()
        if self.lock is not None and self.store is not None:
            self.store.sessions.close(self.lock, self)
