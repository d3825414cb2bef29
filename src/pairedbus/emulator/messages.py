"""Messages on the wire: what a sender's transfer holds, and what a receiver is sent.

A stored message keeps the bytes its sender transferred. On delivery the broker writes its own
fields into them — the header's delivery count, its message annotations (sequence number, enqueued
time, lock expiry, state, dead-letter source) and, for a dead-lettered message, the reason and
description application properties — and passes every other section and entry through untouched.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterator
from typing import Any

from pairedbus import sdk
from pairedbus.emulator.codec import (
    DecodeError,
    Described,
    Symbol,
    UInt,
    decode,
    encode,
    encode_list_from_raw,
    encode_map_from_raw,
    skip,
)
from pairedbus.emulator.frames import Code
from pairedbus.servicebus.content import Content, Record, encode_wire, to_service_bus_message

__all__ = ["BATCH_FORMAT", "batch_payloads", "delivery_bytes", "lock_token_tag", "sections", "split_batch"]

#: Message format of a batch: each data section of the envelope is one encoded message.
BATCH_FORMAT = 0x80013700

_STATE_CODES = {"ACTIVE": 0, "DEFERRED": 1, "SCHEDULED": 2}


def sections(payload: bytes) -> Iterator[tuple[int, int, int]]:
    """(section code, start, end) of each section of an encoded message."""
    offset = 0
    while offset < len(payload):
        if payload[offset] != 0x00:
            raise DecodeError(f"message section at byte {offset} is not a described type")
        descriptor, value_start = decode(payload, offset + 1)
        end = skip(payload, value_start)
        code = int(descriptor) if isinstance(descriptor, int) else -1
        yield code, offset, end
        offset = end


def split_batch(payload: bytes) -> list[bytes]:
    """The messages of a batch transfer: the envelope's data sections."""
    out = []
    for code, start, _end in sections(payload):
        if code == Code.DATA:
            value, _ = decode(payload, start)
            out.append(bytes(value.value))
    return out


def batch_payloads(payload: bytes, message_format: int) -> list[bytes]:
    return split_batch(payload) if message_format == BATCH_FORMAT else [payload]


def lock_token_tag(token: int) -> bytes:
    """The delivery tag the SDK reads the lock token from (a GUID, little-endian layout)."""
    return uuid.UUID(int=token).bytes_le


def stored_bytes(content: Content) -> bytes:
    """The bytes of a stored message (one sent in-process is encoded as the SDK would)."""
    wire = content.wire
    if wire is None:
        wire = content.wire = encode_wire(sdk.raw_amqp_message(to_service_bus_message(content)))
    return wire


def _map_entries(payload: bytes, start: int, end: int) -> tuple[list[tuple[Any, bytes]], int]:
    """The raw (key, bytes of key and value) entries of the map in a section."""
    _, value_start = decode(payload, start + 1)  # past the descriptor
    code = payload[value_start]
    if code == 0xC1:
        offset, count = value_start + 3, payload[value_start + 2]
    elif code == 0xD1:
        offset, count = value_start + 9, int.from_bytes(payload[value_start + 5 : value_start + 9], "big")
    elif code == 0x40:
        return [], 0
    else:
        raise DecodeError(f"section at byte {start} is not a map")
    entries = []
    for _ in range(count // 2):
        key, key_end = decode(payload, offset)
        value_end = skip(payload, key_end)
        entries.append((key, payload[offset:value_end]))
        offset = value_end
    return entries, count // 2


def _map_section(code: int, kept: list[bytes], added: dict[Any, Any]) -> bytes:
    body = b"".join(kept) + b"".join(encode(k) + encode(v) for k, v in added.items())
    return b"\x00\x53" + bytes((code,)) + encode_map_from_raw(2 * (len(kept) + len(added)), body)


def _merged_map(payload: bytes, span: tuple[int, int] | None, code: int, added: dict[Any, Any]) -> bytes:
    kept: list[bytes] = []
    if span is not None:
        entries, _ = _map_entries(payload, *span)
        names = {str(k) for k in added}
        kept = [raw for key, raw in entries if str(key) not in names]
    return _map_section(code, kept, added)


def _header_fields(payload: bytes, span: tuple[int, int] | None) -> bytes:
    """The encoded durable, priority, ttl and first-acquirer of the sender's header (nulls if none)."""
    fields: list[Any] = [None] * 4
    if span is not None:
        value, _ = decode(payload, span[0])
        if isinstance(value, Described) and isinstance(value.value, list):
            fields = (list(value.value) + [None] * 4)[:4]
    return b"".join(encode(f) for f in fields)


class Layout:
    """What a delivery reuses of a stored message: the bytes that never change, cut once."""

    __slots__ = ("annotation_count", "annotations", "app_span", "header", "middle", "payload", "tail")

    def __init__(self, payload: bytes) -> None:
        self.payload = payload
        spans: dict[int, tuple[int, int]] = {}
        order = list(sections(payload))
        for code, start, end in order:
            spans.setdefault(code, (start, end))
        self.header = _header_fields(payload, spans.get(Code.HEADER))
        kept: list[bytes] = []
        span = spans.get(Code.MESSAGE_ANNOTATIONS)
        if span is not None:
            entries, _ = _map_entries(payload, *span)
            kept = [raw for key, raw in entries if str(key) not in _BROKER_KEYS]
        self.annotations = b"".join(kept)
        self.annotation_count = len(kept)
        middle = []
        for code in (Code.DELIVERY_ANNOTATIONS, Code.PROPERTIES):
            span = spans.get(code)
            if span is not None:
                middle.append(payload[span[0] : span[1]])
        self.middle = b"".join(middle)
        self.app_span = spans.get(Code.APPLICATION_PROPERTIES)
        self.tail = b"".join(
            payload[start:end]
            for code, start, end in order
            if code in (Code.DATA, Code.AMQP_SEQUENCE, Code.AMQP_VALUE, Code.FOOTER)
        )


#: The message annotations the broker writes on every delivery (a sender's copy is replaced).
_BROKER_KEYS = frozenset(
    {
        "x-opt-sequence-number",
        "x-opt-enqueued-time",
        "x-opt-locked-until",
        "x-opt-message-state",
        "x-opt-deadletter-source",
    }
)
_SEQUENCE_NUMBER = encode(Symbol("x-opt-sequence-number")) + b"\x81"
_ENQUEUED_TIME = encode(Symbol("x-opt-enqueued-time")) + b"\x83"
_LOCKED_UNTIL = encode(Symbol("x-opt-locked-until")) + b"\x83"
_MESSAGE_STATE = encode(Symbol("x-opt-message-state"))
_DEAD_LETTER_SOURCE = encode(Symbol("x-opt-deadletter-source"))
_LONG = struct.Struct(">q").pack


def delivery_bytes(record: Record, *, delivery_count: int, locked_until: float | None) -> bytes:
    """The stored message with the broker's fields written in, as a receiver is sent it."""
    content = record.content
    layout = getattr(content, "wire_layout", None)
    if layout is None or layout.payload is not content.wire:
        layout = content.wire_layout = Layout(stored_bytes(content))
    header_body = layout.header + encode(UInt(delivery_count))
    annotations = [
        layout.annotations,
        _SEQUENCE_NUMBER,
        _LONG(record.sequence_number),
        _ENQUEUED_TIME,
        _LONG(int(record.enqueued * 1000)),
    ]
    count = layout.annotation_count + 2
    if locked_until is not None:
        annotations += (_LOCKED_UNTIL, _LONG(int(locked_until * 1000)))
        count += 1
    state = _STATE_CODES.get(getattr(record.state, "name", ""), 0)
    if state:
        annotations += (_MESSAGE_STATE, encode(state))
        count += 1
    if record.dl_source is not None:
        annotations += (_DEAD_LETTER_SOURCE, encode(record.dl_source))
        count += 1
    out = [
        b"\x00\x53\x70" + encode_list_from_raw(5, header_body),
        b"\x00\x53\x72" + encode_map_from_raw(2 * count, b"".join(annotations)),
        layout.middle,
    ]
    app = layout.app_span
    if record.dl_reason is not None or record.dl_description is not None:
        added: dict[Any, Any] = {}
        if record.dl_reason is not None:
            added["DeadLetterReason"] = record.dl_reason
        if record.dl_description is not None:
            added["DeadLetterErrorDescription"] = record.dl_description
        out.append(_merged_map(layout.payload, app, Code.APPLICATION_PROPERTIES, added))
    elif app is not None:
        out.append(layout.payload[app[0] : app[1]])
    out.append(layout.tail)
    return b"".join(out)
