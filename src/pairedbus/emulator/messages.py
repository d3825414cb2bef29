"""Messages on the wire: what a sender's transfer holds, and what a receiver is sent.

A stored message keeps the bytes its sender transferred. On delivery the broker writes its own
fields into them — the header's delivery count, its message annotations (sequence number, enqueued
time, lock expiry, state, dead-letter source) and, for a dead-lettered message, the reason and
description application properties — and passes every other section and entry through untouched.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from pairedbus import sdk
from pairedbus.emulator.codec import (
    DecodeError,
    Described,
    Symbol,
    Timestamp,
    UInt,
    decode,
    encode,
    encode_described_list,
    encode_map_from_raw,
    skip,
)
from pairedbus.emulator.frames import Code
from pairedbus.testing.content import Content, Record, encode_wire, to_service_bus_message

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


def _header(payload: bytes, span: tuple[int, int] | None, delivery_count: int) -> bytes:
    fields: list[Any] = [None] * 5
    if span is not None:
        value, _ = decode(payload, span[0])
        if isinstance(value, Described) and isinstance(value.value, list):
            fields = (list(value.value) + [None] * 5)[:5]
    fields[4] = UInt(delivery_count)
    return encode_described_list(Code.HEADER, fields)


def broker_annotations(record: Record, locked_until: float | None, dead_letter_source: str | None) -> dict[Any, Any]:
    annotations: dict[Any, Any] = {
        Symbol("x-opt-sequence-number"): record.sequence_number,
        Symbol("x-opt-enqueued-time"): Timestamp(int(record.enqueued * 1000)),
    }
    if locked_until is not None:
        annotations[Symbol("x-opt-locked-until")] = Timestamp(int(locked_until * 1000))
    state = _STATE_CODES.get(getattr(record.state, "name", ""), 0)
    if state:
        annotations[Symbol("x-opt-message-state")] = state
    if dead_letter_source is not None:
        annotations[Symbol("x-opt-deadletter-source")] = dead_letter_source
    return annotations


def delivery_bytes(record: Record, *, delivery_count: int, locked_until: float | None) -> bytes:
    """The stored message with the broker's fields written in, as a receiver is sent it."""
    payload = stored_bytes(record.content)
    spans: dict[int, tuple[int, int]] = {}
    order: list[tuple[int, int, int]] = list(sections(payload))
    for code, start, end in order:
        spans.setdefault(code, (start, end))
    annotations = broker_annotations(record, locked_until, record.dl_source)
    app_added: dict[Any, Any] = {}
    if record.dl_reason is not None:
        app_added["DeadLetterReason"] = record.dl_reason
    if record.dl_description is not None:
        app_added["DeadLetterErrorDescription"] = record.dl_description
    out = [_header(payload, spans.get(Code.HEADER), delivery_count)]
    da = spans.get(Code.DELIVERY_ANNOTATIONS)
    if da is not None:
        out.append(payload[da[0] : da[1]])
    out.append(_merged_map(payload, spans.get(Code.MESSAGE_ANNOTATIONS), Code.MESSAGE_ANNOTATIONS, annotations))
    properties = spans.get(Code.PROPERTIES)
    if properties is not None:
        out.append(payload[properties[0] : properties[1]])
    app = spans.get(Code.APPLICATION_PROPERTIES)
    if app_added:
        out.append(_merged_map(payload, app, Code.APPLICATION_PROPERTIES, app_added))
    elif app is not None:
        out.append(payload[app[0] : app[1]])
    for code, start, end in order:  # the body sections and the footer, in their order
        if code in (Code.DATA, Code.AMQP_SEQUENCE, Code.AMQP_VALUE, Code.FOOTER):
            out.append(payload[start:end])
    return b"".join(out)
