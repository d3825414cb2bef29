"""One client connection: SASL, open, sessions and links, read top to bottom.

The connection reads frames and hands each to its session and link; links do Service Bus's
work through the model (`pairedbus.testing`'s world, entities and stores). Everything runs on the
broker's event loop: a frame's handling never awaits between writing the frames of one reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

from pairedbus.emulator import conditions
from pairedbus.emulator.codec import Symbol, UByte, UInt, UShort
from pairedbus.emulator.frames import (
    AMQP_HEADER,
    FRAME_SASL,
    HEARTBEAT,
    MIN_MAX_FRAME_SIZE,
    SASL_HEADER,
    Code,
    Frame,
    FrameError,
    encode_frame,
    field,
    read_frame,
)
from pairedbus.emulator.links import IncomingLink, Link, OutgoingLink

if TYPE_CHECKING:
    from pairedbus.emulator.ports import BrokerPort as Broker

__all__ = ["Connection", "Session"]

_LOG = logging.getLogger("pairedbus.emulator")

#: What the broker declares in its open: frames up to 256 KiB, 256 channels.
MAX_FRAME_SIZE = 262_144
CHANNEL_MAX = 255
#: The broker's session windows: large enough that a client never waits on them.
WINDOW = 2**31 - 1


class Session:
    """One AMQP session: its links by the client's handle, and the deliveries it sent unsettled."""

    def __init__(self, connection: Connection, channel: int) -> None:
        self.connection = connection
        self.channel = channel
        self.links: dict[int, Link] = {}
        self.next_outgoing_id = 0
        self.next_delivery_id = 0
        self.incoming = 0

    def send(self, code: int, fields: list[Any], payload: bytes = b"") -> None:
        self.connection.send(self.channel, code, fields, payload)

    def new_delivery_id(self) -> int:
        delivery_id = self.next_delivery_id
        self.next_delivery_id = (delivery_id + 1) % 2**32
        return delivery_id

    def send_transfer(self, fields: list[Any], payload: bytes) -> None:
        """A transfer, over several frames (`more`) when it is larger than the peer's frames."""
        room = self.connection.peer_max_frame_size - 256
        if len(payload) <= room:
            self.next_outgoing_id = (self.next_outgoing_id + 1) % 2**32
            self.send(Code.TRANSFER, fields, payload)
            return
        first = True
        for start in range(0, len(payload), room):
            chunk = payload[start : start + room]
            more = start + room < len(payload)
            frame_fields = fields if first else [fields[0], None, None, None, fields[4] if len(fields) > 4 else None]
            frame_fields = list(frame_fields) + [None] * (6 - len(frame_fields))
            frame_fields[5] = more
            self.next_outgoing_id = (self.next_outgoing_id + 1) % 2**32
            self.send(Code.TRANSFER, frame_fields, chunk)
            first = False

    def flow_fields(self, link: Link | None = None) -> list[Any]:
        fields: list[Any] = [UInt(self.incoming), UInt(WINDOW), UInt(self.next_outgoing_id), UInt(WINDOW)]
        if link is not None:
            fields += [UInt(link.remote_handle), UInt(link.delivery_count), UInt(link.credit), None, link.drain]
        return fields

    def find_reply_link(self, reply_to: str | None, node_address: str) -> OutgoingLink | None:
        """The client's receiver a reply goes to: the one the request's reply-to names — by its own
        (target) address, its source address, or its link name (Node names its `$cbs` receiver by
        the reply-to and leaves the target empty) — else the one attached from the request's node.
        This session's links first."""
        receivers = [
            link
            for link in [*self.links.values(), *self.connection.all_links()]
            if isinstance(link, OutgoingLink) and not link.detached
        ]
        if reply_to:
            for link in receivers:
                if reply_to in (link.reply_address, link.address, link.name):
                    return link
        for link in receivers:
            if link.address == node_address:
                return link
        return None

    def close_links(self) -> None:
        for link in list(self.links.values()):
            link.closed()
        self.links.clear()


class Connection:
    def __init__(
        self, broker: Broker, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, prefix: bytes = b""
    ) -> None:
        self.broker = broker
        self._prefix = prefix  # the bytes the broker read to tell AMQP from HTTPS
        self.reader = reader
        self.writer = writer
        self.sessions: dict[int, Session] = {}
        self.peer_max_frame_size = MAX_FRAME_SIZE
        self.authorized: set[str] = set()  # entity paths a put-token covered ('' = all)
        self.locks: dict[int, Any] = {}  # lock token -> (store, record, session lock) for $management
        self._tasks: set[asyncio.Task[None]] = set()
        self._closing = False

    # --- writing --------------------------------------------------------------------------------

    def send(self, channel: int, code: int, fields: list[Any], payload: bytes = b"") -> None:
        if self._closing and code != Code.CLOSE:
            return
        self.writer.write(encode_frame(channel, code, fields, payload))

    def spawn(self, coro: Any) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def all_links(self) -> list[Link]:
        return [link for session in self.sessions.values() for link in session.links.values()]

    # --- the connection's life ------------------------------------------------------------------

    async def serve(self) -> None:
        try:
            if not await self._handshake():
                return
            await self._run()
        except FrameError as exc:
            self.close_with(exc.condition, exc.description)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client went away
        finally:
            await self._teardown()

    async def _handshake(self) -> bool:
        header = self._prefix + await self.reader.readexactly(8 - len(self._prefix))
        if header == SASL_HEADER:
            self.writer.write(SASL_HEADER)
            self.writer.write(
                encode_frame(0, Code.SASL_MECHANISMS, [[Symbol("ANONYMOUS"), Symbol("PLAIN")]], frame_type=FRAME_SASL)
            )
            frame = await read_frame(self.reader, MIN_MAX_FRAME_SIZE * 8)
            if frame.type != FRAME_SASL or frame.code != Code.SASL_INIT:
                raise FrameError("amqp:not-allowed", "expected sasl-init")
            self.writer.write(encode_frame(0, Code.SASL_OUTCOME, [UByte(0)], frame_type=FRAME_SASL))
            header = await self.reader.readexactly(8)
        if header != AMQP_HEADER:
            self.writer.write(AMQP_HEADER)
            return False
        self.writer.write(AMQP_HEADER)
        frame = await read_frame(self.reader, MIN_MAX_FRAME_SIZE * 8)
        if frame.code != Code.OPEN:
            raise FrameError("amqp:not-allowed", "expected open")
        self.peer_max_frame_size = max(MIN_MAX_FRAME_SIZE, min(int(field(frame.fields, 2, 2**32 - 1)), 2**31))
        idle = field(frame.fields, 4)
        self.send(
            0,
            Code.OPEN,
            ["pairedbus-emulator", None, UInt(MAX_FRAME_SIZE), UShort(CHANNEL_MAX), None],
        )
        if idle:
            self.spawn(self._heartbeats(int(idle) / 2000))
        return True

    async def _heartbeats(self, every: float) -> None:
        while not self._closing:
            await asyncio.sleep(every)
            self.writer.write(HEARTBEAT)

    async def _run(self) -> None:
        while not self._closing:
            frame = await read_frame(self.reader, MAX_FRAME_SIZE)
            if self.broker.faults.latency:
                await asyncio.sleep(self.broker.faults.latency)
            if frame.code is None:
                continue
            self._dispatch(frame)
            if self.writer.transport.get_write_buffer_size() > 1 << 20:
                await self.writer.drain()

    def _dispatch(self, frame: Frame) -> None:
        code = frame.code
        if code == Code.CLOSE:
            self.send(0, Code.CLOSE, [])
            self._closing = True
            return
        if code == Code.BEGIN:
            self._begin(frame)
            return
        session = self.sessions.get(frame.channel)
        if session is None:
            raise FrameError("amqp:not-found", f"no session on channel {frame.channel}")
        if code == Code.END:
            session.close_links()
            del self.sessions[frame.channel]
            session.send(Code.END, [])
        elif code == Code.ATTACH:
            self._attach(session, frame.fields)
        elif code == Code.FLOW:
            self._flow(session, frame.fields)
        elif code == Code.TRANSFER:
            session.incoming = (session.incoming + 1) % 2**32
            link = session.links.get(int(field(frame.fields, 0, -1)))
            if not isinstance(link, IncomingLink):
                raise FrameError("amqp:session:unattached-handle", "transfer on a handle that is not attached")
            link.on_transfer(frame.fields, frame.payload)
        elif code == Code.DISPOSITION:
            self._disposition(session, frame.fields)
        elif code == Code.DETACH:
            handle = int(field(frame.fields, 0, -1))
            link = session.links.pop(handle, None)
            if link is not None:
                link.closed()
                session.send(Code.DETACH, [UInt(handle), True])
        else:
            raise FrameError("amqp:not-implemented", f"unexpected performative 0x{code:02x}")

    def _begin(self, frame: Frame) -> None:
        if frame.channel in self.sessions or frame.channel > CHANNEL_MAX:
            raise FrameError("amqp:not-allowed", f"channel {frame.channel} is in use or out of range")
        session = self.sessions[frame.channel] = Session(self, frame.channel)
        session.incoming = int(field(frame.fields, 1, 0))
        session.send(
            Code.BEGIN,
            [UShort(frame.channel), UInt(0), UInt(WINDOW), UInt(WINDOW), UInt(2**32 - 1)],
        )

    def _attach(self, session: Session, fields: list[Any]) -> None:
        handle = int(field(fields, 1, -1))
        if handle in session.links:
            raise FrameError("amqp:session:handle-in-use", f"handle {handle} is already attached")
        role_receiver = bool(field(fields, 2, False))
        link: IncomingLink | OutgoingLink = (OutgoingLink if role_receiver else IncomingLink)(session, handle, fields)
        session.links[handle] = link
        link.attach()

    def _flow(self, session: Session, fields: list[Any]) -> None:
        handle = field(fields, 4)
        if handle is None:
            if field(fields, 9, False):
                session.send(Code.FLOW, session.flow_fields())
            return
        link = session.links.get(int(handle))
        if link is None:
            raise FrameError("amqp:session:unattached-handle", f"flow on handle {handle}, not attached")
        link.on_flow(fields)

    def _disposition(self, session: Session, fields: list[Any]) -> None:
        if not field(fields, 0, False):
            return  # the client's sender settling: the broker settled its side already
        first = int(field(fields, 1, 0))
        last = int(field(fields, 2, first))
        state = field(fields, 4)
        settled = bool(field(fields, 3, False))
        for link in session.links.values():
            if isinstance(link, OutgoingLink):
                link.on_disposition(first, last, state, settled)

    def close_with(self, condition: str, description: str) -> None:
        """End the connection with an error (a bad frame, a fault), as the service does."""
        if self._closing:
            return
        self.send(0, Code.CLOSE, [conditions.error_fields(condition, description)])
        self._closing = True

    def drop(self) -> None:
        """Cut the socket with no close frame (a network failure)."""
        self._closing = True
        transport = self.writer.transport
        if transport is not None:
            transport.abort()

    async def _teardown(self) -> None:
        self._closing = True
        for session in self.sessions.values():
            session.close_links()
        self.sessions.clear()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        with contextlib.suppress(Exception):
            if not self.writer.is_closing():
                await asyncio.wait_for(self.writer.drain(), 2)
        self.writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.writer.wait_closed(), 2)
        self.broker.forget(self)
