"""Messages on the wire: what a sender's transfer holds, and what a receiver is sent.

A message the broker receives becomes the model's `Content` here (`content_from_wire`): the bytes
its sender transferred, kept whole, and the properties the model's rules read, decoded from its
sections with this package's codec (wire types kept). On delivery the broker writes its own
fields into them — the header's delivery count, its message annotations (sequence number, enqueued
time, lock expiry, state, dead-letter source) and, for a dead-lettered message, the reason and
description application properties — and passes every other section and entry through untouched.
A message known only by its fields (sent in process, or changed by a rule action) is encoded from
them as the SDK would send it (`encoded_fields`).
"""

from __future__ import annotations

import datetime
import struct
import uuid
from collections.abc import Iterator
from typing import Any

from pairedbus.emulator.codec import (
    DecodeError,
    Symbol,
    Timestamp,
    UInt,
    decode,
    encode,
    encode_described_list,
    encode_list_from_raw,
    encode_map,
    encode_map_from_raw,
    skip,
)
from pairedbus.emulator.frames import Code
from pairedbus.servicebus.content import BodyType, Content, Record

__all__ = [
    "BATCH_FORMAT",
    "batch_payloads",
    "content_from_wire",
    "delivery_bytes",
    "encoded_fields",
    "lock_token_tag",
    "sections",
    "split_batch",
]

#: Message format of a batch: each data section of the envelope is one encoded message.
BATCH_FORMAT = 0x80013700
#: The message annotations a sender's client sets that the model reads.
PARTITION_KEY = Symbol("x-opt-partition-key")
SCHEDULED_ENQUEUE_TIME = Symbol("x-opt-scheduled-enqueue-time")


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


def _text(value: Any) -> Any:
    """A property as the model holds it: a binary's bytes read as UTF-8, anything else as decoded."""
    return value.decode("utf-8") if isinstance(value, bytes) else value


def _decoded_sections(payload: bytes) -> list[tuple[int, int, int, Any]]:
    """(section code, start, end, value) of each section, in one pass of the codec."""
    out = []
    offset = 0
    while offset < len(payload):
        if payload[offset] != 0x00:
            raise DecodeError(f"message section at byte {offset} is not a described type")
        section, end = decode(payload, offset)
        code = int(section.descriptor) if isinstance(section.descriptor, int) else -1
        out.append((code, offset, end, section.value))
        offset = end
    return out


def _body(layout: Layout) -> tuple[BodyType, Any]:
    for body_type, code in _BODY_TYPES:
        values = [value for section, value in layout.body if section == code]
        if values:
            if body_type is BodyType.DATA:
                return body_type, tuple(bytes(v) for v in values)
            return body_type, values if body_type is BodyType.SEQUENCE else values[0]
    return BodyType.VALUE, None


_BODY_TYPES = ((BodyType.DATA, Code.DATA), (BodyType.SEQUENCE, Code.AMQP_SEQUENCE), (BodyType.VALUE, Code.AMQP_VALUE))
_NO_PROPERTIES: list[Any] = [None] * 13


def content_from_wire(payload: bytes) -> Content:
    """A message as a sender's client transferred it: its bytes are kept as sent (wire types and
    all) and are what a receiver gets back, with the broker's fields written in."""
    layout = Layout(payload)
    body_type, body = _body(layout)
    ttl = layout.header_values[2]
    annotations = layout.values.get(Code.MESSAGE_ANNOTATIONS) or {}
    props = layout.values.get(Code.PROPERTIES) or _NO_PROPERTIES
    if len(props) < 13:
        props = props + _NO_PROPERTIES
    scheduled = annotations.get(SCHEDULED_ENQUEUE_TIME)
    return Content(
        body_type,
        body,
        _text(props[0]),
        _text(props[10]),
        _text(annotations.get(PARTITION_KEY)),
        ttl / 1000 if ttl else None,
        scheduled / 1000 if scheduled else None,
        len(payload),
        _text(props[6]),
        _text(props[5]),
        _text(props[3]),
        _text(props[2]),
        _text(props[4]),
        _text(props[12]),
        layout.values.get(Code.APPLICATION_PROPERTIES) or None,
        payload,
        layout,
    )


def _wire_value(value: Any) -> Any:
    """An application property's value as the SDK's encoder puts it on the wire."""
    if isinstance(value, dict) and "TYPE" in value and "VALUE" in value:  # an explicitly typed value
        return _wire_value(value["VALUE"])
    if isinstance(value, datetime.datetime):
        return Timestamp(int(value.timestamp() * 1000))
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")  # the SDK sends bytes as a string (uamqp's parity)
        except UnicodeDecodeError:
            return bytes(value)
    if isinstance(value, (list, tuple)):
        return [_wire_value(v) for v in value]
    if value is None or isinstance(value, (bool, str, int, float, uuid.UUID, dict)):
        return value
    return str(value)  # Decimal and anything else the codec has no type for


def encoded_fields(content: Content) -> bytes:
    """A message known only by its fields, encoded as the SDK encodes a ServiceBusMessage with them
    (but for the creation and expiry times the SDK stamps on a message with a TTL from its own clock)."""
    out: list[bytes] = []
    if content.ttl:
        out.append(encode_described_list(Code.HEADER, [None, None, UInt(int(content.ttl * 1000))]))
    annotations: dict[Any, Any] = {}
    if content.partition_key is not None:
        annotations[PARTITION_KEY] = content.partition_key
    if content.scheduled is not None:
        annotations[SCHEDULED_ENQUEUE_TIME] = Timestamp(int(content.scheduled * 1000))
    if annotations:
        out.append(b"\x00\x53\x72" + encode_map(annotations))
    content_type = None if content.content_type is None else Symbol(content.content_type)
    properties = [content.message_id, None, content.to, content.subject, content.reply_to, content.correlation_id]
    properties += [content_type, None, None, None, content.session_id, None, content.reply_to_session_id]
    out.append(encode_described_list(Code.PROPERTIES, properties))
    if content.props:
        app = {_text(k): _wire_value(v) for k, v in content.props.items()}
        out.append(b"\x00\x53\x74" + encode_map(app))
    out.extend(_encoded_body(content.body_type, content.body))
    return b"".join(out)


def _encoded_body(body_type: BodyType, body: Any) -> list[bytes]:
    if body_type is BodyType.DATA:
        return [b"\x00\x53\x75" + encode(bytes(section)) for section in body]
    if body_type is BodyType.SEQUENCE:
        return [b"\x00\x53\x76" + encode(list(section)) for section in body]
    return [b"\x00\x53\x77" + encode(_wire_value(body))]


def _layout(content: Content) -> Layout:
    """What a delivery reuses of a stored message: cut when the broker received it, or now."""
    cut = content.wire_cut
    if isinstance(cut, Layout) and cut.payload is content.wire:
        return cut
    return Layout(content.wire if content.wire is not None else encoded_fields(content))


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


_BODY_CODES = frozenset({Code.DATA, Code.AMQP_SEQUENCE, Code.AMQP_VALUE})


class Layout:
    """What a delivery reuses of a stored message: the bytes that never change, cut once."""

    __slots__ = (
        "annotation_count",
        "annotations",
        "app_span",
        "body",
        "header",
        "header_values",
        "middle",
        "payload",
        "tail",
        "values",
    )

    def __init__(self, payload: bytes) -> None:
        self.payload = payload
        spans: dict[int, tuple[int, int]] = {}
        #: The first value of each section (what `content_from_wire` reads), decoded once.
        self.values: dict[int, Any] = {}
        decoded = _decoded_sections(payload)
        order = [(code, start, end) for code, start, end, _ in decoded]
        for code, start, end, value in decoded:
            if code not in spans:
                spans[code] = (start, end)
                self.values[code] = value
        self.body = [(code, value) for code, _, _, value in decoded if code in _BODY_CODES]
        header = self.values.get(Code.HEADER)
        self.header_values = (list(header) + [None] * 4)[:4] if isinstance(header, list) else [None] * 4
        self.header = b"".join(encode(f) for f in self.header_values)
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
    layout = _layout(record.content)
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
    state = int(record.state)
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
