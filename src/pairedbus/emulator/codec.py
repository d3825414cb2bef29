"""AMQP 1.0 type encoding (OASIS AMQP 1.0, part 1), written here rather than borrowed from the SDK.

The broker must keep wire types: a string stays a string, a binary a binary, a symbol a symbol
(the SDK's own decoder folds all three into `bytes`, and Node's client times out when a string
correlation id comes back as binary). So decoding returns typed Python values (`Symbol`,
`Described`, `Timestamp`, unsigned wrappers where the type matters on the way back) and encoding
takes them. Message sections are never decoded and re-encoded: `split_sections` and `skip` find
their extents so they pass through byte for byte.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Array",
    "DecodeError",
    "Described",
    "Symbol",
    "Timestamp",
    "UByte",
    "UInt",
    "ULong",
    "UShort",
    "decode",
    "decode_all",
    "encode",
    "encode_described_list",
    "skip",
]


class DecodeError(ValueError):
    """Bytes that are not a valid AMQP encoding (the connection is closed with amqp:decode-error)."""


class Symbol(str):
    """An AMQP symbol (ASCII), as opposed to a string."""


class UByte(int):
    pass


class UShort(int):
    pass


class UInt(int):
    pass


class ULong(int):
    pass


class Timestamp(int):
    """Milliseconds since the Unix epoch."""


@dataclass(frozen=True, slots=True)
class Described:
    descriptor: Any  # ULong code or Symbol name
    value: Any


@dataclass(frozen=True, slots=True)
class Array:
    """An AMQP array: every element of one type, named by its constructor's encoder."""

    element: type
    items: tuple[Any, ...]


# --- encoding -----------------------------------------------------------------------------------

_PACK_I = struct.Struct(">I").pack
_PACK_Q = struct.Struct(">Q").pack
_PACK_q = struct.Struct(">q").pack
_PACK_i = struct.Struct(">i").pack


def _encode_uint_like(value: int, small: int, zero: int | None, wide: int, width: int) -> bytes:
    if value == 0 and zero is not None:
        return bytes((zero,))
    if value < 256:
        return bytes((small, value))
    return bytes((wide,)) + value.to_bytes(width, "big")


def _encode_variable(short: int, long: int, data: bytes) -> bytes:
    if len(data) < 256:
        return bytes((short, len(data))) + data
    return bytes((long,)) + _PACK_I(len(data)) + data


def _encode_compound(short: int, long: int, zero: int | None, count: int, body: bytes) -> bytes:
    if count == 0 and zero is not None:
        return bytes((zero,))
    if len(body) + 1 < 256 and count < 256:
        return bytes((short, len(body) + 1, count)) + body
    return bytes((long,)) + _PACK_I(len(body) + 4) + _PACK_I(count) + body


def encode(value: Any) -> bytes:
    """One value with its constructor (the smallest encoding of its type)."""
    encoder = _ENCODERS.get(value.__class__)
    if encoder is None:
        raise TypeError(f"cannot encode {value.__class__.__name__} as AMQP")
    return encoder(value)


def _encode_int(value: int) -> bytes:
    if -128 <= value <= 127:
        return b"\x55" + value.to_bytes(1, "big", signed=True)
    return b"\x81" + _PACK_q(value)


def _encode_described(value: Described) -> bytes:
    return b"\x00" + encode(value.descriptor) + encode(value.value)


#: The encoder of each Python type, by exact class (a subclass is its own AMQP type, or none).
_ENCODERS: dict[type, Callable[[Any], bytes]] = {
    type(None): lambda value: b"\x40",
    bool: lambda value: b"\x41" if value else b"\x42",
    Symbol: lambda value: _encode_variable(0xA3, 0xB3, value.encode("ascii")),
    str: lambda value: _encode_variable(0xA1, 0xB1, value.encode("utf-8")),
    bytes: lambda value: _encode_variable(0xA0, 0xB0, value),
    bytearray: lambda value: _encode_variable(0xA0, 0xB0, bytes(value)),
    memoryview: lambda value: _encode_variable(0xA0, 0xB0, bytes(value)),
    ULong: lambda value: _encode_uint_like(value, 0x53, 0x44, 0x80, 8),
    UInt: lambda value: _encode_uint_like(value, 0x52, 0x43, 0x70, 4),
    UShort: lambda value: b"\x60" + value.to_bytes(2, "big"),
    UByte: lambda value: bytes((0x50, value)),
    Timestamp: lambda value: b"\x83" + _PACK_q(value),
    int: _encode_int,
    float: lambda value: b"\x82" + struct.pack(">d", value),
    uuid.UUID: lambda value: b"\x98" + value.bytes,
    Described: _encode_described,
    list: lambda value: encode_list(value),
    tuple: lambda value: encode_list(value),
    dict: lambda value: encode_map(value),
    Array: lambda value: _encode_array(value),
}


def encode_list(items: Iterable[Any]) -> bytes:
    parts = [encode(item) for item in items]
    return _encode_compound(0xC0, 0xD0, 0x45, len(parts), b"".join(parts))


def encode_map(mapping: dict[Any, Any]) -> bytes:
    parts = []
    for key, value in mapping.items():
        parts.append(encode(key))
        parts.append(encode(value))
    return _encode_compound(0xC1, 0xD1, None, len(parts), b"".join(parts))


def encode_list_from_raw(count: int, body: bytes) -> bytes:
    """A list from elements already encoded (`count` of them, `body` their bytes)."""
    return _encode_compound(0xC0, 0xD0, 0x45, count, body)


def encode_map_from_raw(count: int, body: bytes) -> bytes:
    """A map from entries already encoded (`count` keys and values, `body` their bytes)."""
    return _encode_compound(0xC1, 0xD1, None, count, body)


_ARRAY_ELEMENT = {
    Symbol: (0xB3, lambda v: _PACK_I(len(v)) + v.encode("ascii")),
    str: (0xB1, lambda v: _PACK_I(len(v.encode("utf-8"))) + v.encode("utf-8")),
    uuid.UUID: (0x98, lambda v: v.bytes),
    Timestamp: (0x83, _PACK_q),
    int: (0x81, _PACK_q),
    UInt: (0x70, _PACK_I),
    ULong: (0x80, _PACK_Q),
    bytes: (0xB0, lambda v: _PACK_I(len(v)) + v),
}


def _encode_array(array: Array) -> bytes:
    constructor, element = _ARRAY_ELEMENT[array.element]
    body = bytes((constructor,)) + b"".join(element(item) for item in array.items)
    return bytes((0xF0,)) + _PACK_I(len(body) + 4) + _PACK_I(len(array.items)) + body


def encode_described_list(code: int, fields: list[Any]) -> bytes:
    """A performative or section: a described list, trailing nulls left out (as peers do)."""
    while fields and fields[-1] is None:
        fields.pop()
    return b"\x00\x53" + bytes((code,)) + encode_list(fields) if code < 256 else encode(Described(ULong(code), fields))


# --- decoding -----------------------------------------------------------------------------------

_FIXED_WIDTH = {0x4: 0, 0x5: 1, 0x6: 2, 0x7: 4, 0x8: 8, 0x9: 16}


def skip(data: bytes | memoryview, offset: int) -> int:
    """The offset just past the value that starts at `offset` (described values included)."""
    try:
        code = data[offset]
        if code == 0x00:
            return skip(data, skip(data, offset + 1))
        width = _FIXED_WIDTH.get(code >> 4)
        if width is not None:
            end = offset + 1 + width
        elif code >> 4 in (0xA, 0xC, 0xE):
            end = offset + 2 + data[offset + 1]
        elif code >> 4 in (0xB, 0xD, 0xF):
            end = offset + 5 + int.from_bytes(data[offset + 1 : offset + 5], "big")
        else:
            raise DecodeError(f"unknown AMQP constructor 0x{code:02x} at byte {offset}")
    except IndexError:
        raise DecodeError(f"truncated AMQP value at byte {offset}") from None
    if end > len(data):
        raise DecodeError(f"truncated AMQP value at byte {offset}")
    return end


def decode(data: bytes | memoryview, offset: int = 0) -> tuple[Any, int]:
    """(value, offset past it)."""
    try:
        return _decode(data, offset)
    except (IndexError, struct.error, UnicodeDecodeError) as exc:
        raise DecodeError(f"malformed AMQP value at byte {offset}: {exc}") from None


def decode_all(data: bytes | memoryview) -> Iterator[tuple[Any, int, int]]:
    """Each value of a sequence with its start and end offsets."""
    offset = 0
    while offset < len(data):
        value, end = decode(data, offset)
        yield value, offset, end
        offset = end


Buffer = bytes | memoryview
#: Decodes the value whose constructor is at `start`; `o` is the offset just past the constructor.
Decoder = Callable[[Buffer, int, int], tuple[Any, int]]


def _decode(data: Buffer, offset: int) -> tuple[Any, int]:
    decoder = _DECODERS.get(data[offset])
    if decoder is None:
        raise DecodeError(f"unknown AMQP constructor 0x{data[offset]:02x} at byte {offset}")
    return decoder(data, offset + 1, offset)


def _constant(value: Any) -> Decoder:
    return lambda data, o, start: (value, o)


def _width(data: Buffer, o: int, width: int) -> Buffer:
    """The `width` bytes at `o` (a value cut short is truncated, not a smaller number)."""
    if o + width > len(data):
        raise IndexError("truncated")
    return data[o : o + width]


def _unsigned(cls: Callable[[int], Any], width: int) -> Decoder:
    return lambda data, o, start: (cls(int.from_bytes(_width(data, o, width), "big")), o + width)


def _signed(width: int, cls: Callable[[int], Any] = int) -> Decoder:
    return lambda data, o, start: (cls(int.from_bytes(_width(data, o, width), "big", signed=True)), o + width)


def _fixed(width: int, convert: Callable[[bytes], Any]) -> Decoder:
    return lambda data, o, start: (convert(bytes(_width(data, o, width))), o + width)


def _described(data: Buffer, o: int, start: int) -> tuple[Any, int]:
    descriptor, o = _decode(data, o)
    value, o = _decode(data, o)
    return Described(descriptor, value), o


def _variable(code: int) -> Decoder:
    """Binary (0xA0/0xB0), string (0xA1/0xB1) or symbol (0xA3/0xB3): a one- or four-byte size."""
    short, kind = code >> 4 == 0xA, code & 0x0F

    def decode_variable(data: Buffer, o: int, start: int) -> tuple[Any, int]:
        if short:
            size, o = data[o], o + 1
        else:
            size, o = int.from_bytes(data[o : o + 4], "big"), o + 4
        raw = bytes(data[o : o + size])
        if len(raw) != size:
            raise IndexError("truncated")
        if kind == 0x0:
            return raw, o + size
        if kind == 0x1:
            return raw.decode("utf-8"), o + size
        return Symbol(raw.decode("ascii")), o + size

    return decode_variable


def _compound(data: Buffer, o: int, start: int) -> tuple[Any, int]:
    """A list (0xC0/0xD0) or a map (0xC1/0xD1)."""
    code = data[start]
    count, o, end = _compound_header(data, code, o)
    if end > len(data):
        raise IndexError("truncated")
    items = []
    for _ in range(count):
        item, o = _decode(data, o)
        items.append(item)
    if o != end:
        raise DecodeError(f"compound value at byte {start} declares {end - start} bytes, holds {o - start}")
    if code & 0x0F == 0:
        return items, o
    if count % 2:
        raise DecodeError(f"map at byte {start} has an odd number of elements")
    return _as_map(items), o


def _array(data: Buffer, o: int, start: int) -> tuple[Any, int]:
    count, o, end = _compound_header(data, data[start], o)
    return _decode_array(data, o, count, end), end


#: The decoder of each constructor (OASIS AMQP 1.0 part 1, 1.6).
_DECODERS: dict[int, Decoder] = {
    0x00: _described,
    0x40: _constant(None),
    0x41: _constant(True),
    0x42: _constant(False),
    0x56: lambda data, o, start: (data[o] != 0, o + 1),
    0x43: _constant(UInt(0)),
    0x44: _constant(ULong(0)),
    0x50: _unsigned(UByte, 1),
    0x52: _unsigned(UInt, 1),
    0x53: _unsigned(ULong, 1),
    0x60: _unsigned(UShort, 2),
    0x70: _unsigned(UInt, 4),
    0x80: _unsigned(ULong, 8),
    0x51: _signed(1),
    0x54: _signed(1),
    0x55: _signed(1),
    0x61: _signed(2),
    0x71: _signed(4),
    0x81: _signed(8),
    0x83: _signed(8, Timestamp),
    0x72: _fixed(4, lambda raw: struct.unpack(">f", raw)[0]),
    0x82: _fixed(8, lambda raw: struct.unpack(">d", raw)[0]),
    0x73: _fixed(4, lambda raw: chr(int.from_bytes(raw, "big"))),
    0x98: _fixed(16, lambda raw: uuid.UUID(bytes=raw)),
    0x74: _fixed(4, bytes),
    0x84: _fixed(8, bytes),
    0x94: _fixed(16, bytes),
    **{code: _variable(code) for code in (0xA0, 0xA1, 0xA3, 0xB0, 0xB1, 0xB3)},
    0x45: lambda data, o, start: ([], o),
    **dict.fromkeys((0xC0, 0xC1, 0xD0, 0xD1), _compound),
    **dict.fromkeys((0xE0, 0xF0), _array),
}


def _compound_header(data: bytes | memoryview, code: int, o: int) -> tuple[int, int, int]:
    """(element count, offset of the first element, offset past the last) of a list, map or
    array: a one-byte size and count (0xC_, 0xE_) or four-byte ones (0xD_, 0xF_)."""
    if code >> 4 in (0xC, 0xE):
        size, count = data[o], data[o + 1]
        return count, o + 2, o + 1 + size
    size = int.from_bytes(data[o : o + 4], "big")
    count = int.from_bytes(data[o + 4 : o + 8], "big")
    return count, o + 8, o + 4 + size


def _as_map(items: list[Any]) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for i in range(0, len(items), 2):
        key = items[i]
        out[key if isinstance(key, (str, bytes, int, uuid.UUID, bool)) or key is None else repr(key)] = items[i + 1]
    return out


def _decode_array(data: bytes | memoryview, o: int, count: int, end: int) -> list[Any]:
    """Array elements share one constructor, written once before them."""
    descriptor = None
    if data[o] == 0x00:
        descriptor, o = _decode(data, o + 1)
    constructor = data[o]
    o += 1
    high = constructor >> 4
    items = []
    for _ in range(count):
        width = _FIXED_WIDTH.get(high)
        if width is None:
            width = 1 + data[o] if high in (0xA, 0xC, 0xE) else 4 + int.from_bytes(data[o : o + 4], "big")
        value, _ = _decode(bytes((constructor,)) + bytes(data[o : o + width]), 0)
        o += width
        items.append(Described(descriptor, value) if descriptor is not None else value)
    if o > end:
        raise DecodeError("array elements run past the array")
    return items
