"""AMQP 1.0 frames and the performatives the broker speaks (OASIS AMQP 1.0, part 2 and part 5).

A frame is a 4-byte size, a data offset, a type (0 AMQP, 1 SASL) and a channel; its body is one
performative (a described list) and, for a transfer, the payload after it. An empty body is a
heartbeat.
"""

from __future__ import annotations

import asyncio
import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from pairedbus.emulator.codec import DecodeError, Described, Symbol, decode, encode_described_list

__all__ = [
    "AMQP_HEADER",
    "MIN_MAX_FRAME_SIZE",
    "SASL_HEADER",
    "Code",
    "Frame",
    "FrameError",
    "encode_frame",
    "field",
    "read_frame",
]

AMQP_HEADER = b"AMQP\x00\x01\x00\x00"
SASL_HEADER = b"AMQP\x03\x01\x00\x00"
#: The smallest max-frame-size a peer may declare (part 2, 2.7.1).
MIN_MAX_FRAME_SIZE = 512
FRAME_AMQP = 0
FRAME_SASL = 1
_HEADER = struct.Struct(">IBBH")


class Code(IntEnum):
    """Descriptor codes of the performatives, sections, outcomes and SASL frames used here."""

    OPEN = 0x10
    BEGIN = 0x11
    ATTACH = 0x12
    FLOW = 0x13
    TRANSFER = 0x14
    DISPOSITION = 0x15
    DETACH = 0x16
    END = 0x17
    CLOSE = 0x18
    ERROR = 0x1D
    RECEIVED = 0x23
    ACCEPTED = 0x24
    REJECTED = 0x25
    RELEASED = 0x26
    MODIFIED = 0x27
    SOURCE = 0x28
    TARGET = 0x29
    SASL_MECHANISMS = 0x40
    SASL_INIT = 0x41
    SASL_OUTCOME = 0x44
    HEADER = 0x70
    DELIVERY_ANNOTATIONS = 0x71
    MESSAGE_ANNOTATIONS = 0x72
    PROPERTIES = 0x73
    APPLICATION_PROPERTIES = 0x74
    DATA = 0x75
    AMQP_SEQUENCE = 0x76
    AMQP_VALUE = 0x77
    FOOTER = 0x78


#: Symbolic descriptors a peer may use instead of the numeric codes.
_SYMBOLIC = {
    "amqp:open:list": Code.OPEN,
    "amqp:begin:list": Code.BEGIN,
    "amqp:attach:list": Code.ATTACH,
    "amqp:flow:list": Code.FLOW,
    "amqp:transfer:list": Code.TRANSFER,
    "amqp:disposition:list": Code.DISPOSITION,
    "amqp:detach:list": Code.DETACH,
    "amqp:end:list": Code.END,
    "amqp:close:list": Code.CLOSE,
}


_PERFORMATIVES = frozenset(range(Code.OPEN, Code.CLOSE + 1)) | {Code.SASL_MECHANISMS, Code.SASL_INIT, Code.SASL_OUTCOME}


class FrameError(Exception):
    """A frame the broker cannot read: the connection ends with `condition`."""

    def __init__(self, condition: str, description: str) -> None:
        super().__init__(description)
        self.condition = condition
        self.description = description


@dataclass(slots=True)
class Frame:
    type: int
    channel: int
    code: int | None  # None: a heartbeat
    fields: list[Any]
    payload: bytes = b""


def descriptor_code(descriptor: Any) -> int | None:
    if isinstance(descriptor, Symbol):
        return _SYMBOLIC.get(descriptor)
    return int(descriptor) if isinstance(descriptor, int) else None


def field(fields: list[Any], index: int, default: Any = None) -> Any:
    """A performative's field; absent trailing fields are null."""
    if index < len(fields):
        value = fields[index]
        return default if value is None else value
    return default


def encode_frame(
    channel: int, code: int, fields: list[Any], payload: bytes = b"", frame_type: int = FRAME_AMQP
) -> bytes:
    body = encode_described_list(code, list(fields)) + payload
    return _HEADER.pack(8 + len(body), 2, frame_type, channel) + body


HEARTBEAT = _HEADER.pack(8, 2, FRAME_AMQP, 0)


async def read_frame(reader: asyncio.StreamReader, max_frame_size: int) -> Frame:
    """The next frame; FrameError for one that breaks the framing rules."""
    head = await reader.readexactly(8)
    size, doff, frame_type, channel = _HEADER.unpack(head)
    if size < 8 or doff < 2 or doff * 4 > size:
        raise FrameError("amqp:connection:framing-error", f"bad frame header (size {size}, doff {doff})")
    if size > max_frame_size:
        raise FrameError(
            "amqp:connection:framing-error", f"frame of {size} bytes exceeds max-frame-size {max_frame_size}"
        )
    body = await reader.readexactly(size - 8)
    body = body[doff * 4 - 8 :]
    if not body:
        return Frame(frame_type, channel, None, [])
    try:
        value, end = decode(body)
    except DecodeError as exc:
        raise FrameError("amqp:decode-error", str(exc)) from None
    if not isinstance(value, Described):
        raise FrameError("amqp:decode-error", "frame body is not a performative")
    code = descriptor_code(value.descriptor)
    if code not in _PERFORMATIVES or not isinstance(value.value, list):
        raise FrameError("amqp:not-implemented", f"unknown performative {value.descriptor!r}")
    return Frame(frame_type, channel, code, value.value, body[end:])
