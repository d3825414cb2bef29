"""Bad input on the socket: the offending connection is closed with the AMQP error the service
would send, nothing stored is lost or doubled, and the broker goes on serving everyone else."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import AsyncIterator

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient

from pairedbus.emulator import Emulator
from pairedbus.emulator.codec import Described, UInt, ULong, decode, encode
from pairedbus.emulator.frames import AMQP_HEADER
from tests.load import guard

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
async def emulator() -> AsyncIterator[Emulator]:
    async with Emulator(["primary"]) as emu:
        emu.namespace("primary").create_queue("orders")
        yield emu


async def _raw(emu: Emulator) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", emu.broker("primary").port)
    writer.write(AMQP_HEADER)
    assert await reader.readexactly(8) == AMQP_HEADER
    return reader, writer


def _frame(body: bytes, channel: int = 0) -> bytes:
    return struct.pack(">IBBH", 8 + len(body), 2, 0, channel) + body


async def _close_condition(reader: asyncio.StreamReader) -> str | None:
    """Read frames until a close; its error's condition."""
    while True:
        head = await asyncio.wait_for(reader.readexactly(8), guard(10))
        size = struct.unpack(">I", head[:4])[0]
        body = await reader.readexactly(size - 8)
        if not body:
            continue
        value, _ = decode(body)
        if isinstance(value, Described) and int(value.descriptor) == 0x18:
            error = value.value[0] if value.value else None
            return str(error.value[0]) if isinstance(error, Described) else None


async def _still_serves(emu: Emulator) -> None:
    async with ServiceBusClient.from_connection_string(emu.connection_string("primary"), retry_total=0) as sb:
        async with sb.get_queue_sender("orders") as sender:
            await sender.send_messages(ServiceBusMessage("after"))
    assert emu.namespace("primary").queue("orders").message_counts()["active"] == 1


@pytest.mark.parametrize(
    ("body", "condition"),
    [
        (b"\xff\xff\xff", "amqp:decode-error"),  # not an AMQP value
        (b"\x00\x53\x7f" + encode([]), "amqp:not-implemented"),  # an unknown performative
        (encode("not a performative"), "amqp:decode-error"),
        (b"\x00\x53\x10\xd0\x00\x00\x10\x00", "amqp:decode-error"),  # a list that claims more than it holds
    ],
)
async def test_a_bad_frame_closes_that_connection_with_the_amqp_error(
    emulator: Emulator, body: bytes, condition: str
) -> None:
    reader, writer = await _raw(emulator)
    writer.write(_frame(body))
    assert await _close_condition(reader) == condition
    writer.close()
    await _still_serves(emulator)


async def test_a_frame_larger_than_the_limit_is_a_framing_error(emulator: Emulator) -> None:
    reader, writer = await _raw(emulator)
    writer.write(struct.pack(">IBBH", 1 << 30, 2, 0, 0))
    assert await _close_condition(reader) == "amqp:connection:framing-error"
    writer.close()
    await _still_serves(emulator)


async def test_a_wrong_protocol_header_is_answered_with_ours_and_closed(emulator: Emulator) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", emulator.broker("primary").port)
    writer.write(b"GET / HTTP/1.1\r\n\r\n")
    assert await asyncio.wait_for(reader.readexactly(8), guard(10)) == AMQP_HEADER
    assert await asyncio.wait_for(reader.read(), guard(10)) == b""
    writer.close()
    await _still_serves(emulator)


async def test_a_client_that_vanishes_mid_transfer_stores_nothing(emulator: Emulator) -> None:
    """Open, begin, attach to the queue, then half of a multi-frame transfer and the socket cut."""
    _, writer = await _raw(emulator)
    writer.write(_frame(b"\x00\x53\x10" + encode(["c", None, UInt(65536)])))
    writer.write(_frame(b"\x00\x53\x11" + encode([None, UInt(0), UInt(100), UInt(100)])))
    # no put-token: the attach is refused, and a transfer on that handle is a session error
    target = Described(ULong(0x29), ["orders"])
    writer.write(_frame(b"\x00\x53\x12" + encode(["l", UInt(0), False, None, None, None, target, None, None, UInt(0)])))
    message = b"\x00\x53\x75" + encode(b"x" * 100)
    writer.write(_frame(b"\x00\x53\x14" + encode([UInt(0), UInt(0), b"t", UInt(0), False, True]) + message))
    await writer.drain()
    writer.transport.abort()
    await asyncio.sleep(0.2)
    assert emulator.namespace("primary").queue("orders").message_counts()["active"] == 0
    await _still_serves(emulator)
