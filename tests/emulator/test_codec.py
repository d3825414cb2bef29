"""The emulator's AMQP codec, one type at a time: each value's smallest encoding, the round trip, and
what it refuses (OASIS AMQP 1.0 part 1)."""

from __future__ import annotations

import uuid

import pytest

from pairedbus.emulator.codec import (
    Array,
    DecodeError,
    Described,
    Symbol,
    Timestamp,
    UByte,
    UInt,
    ULong,
    UShort,
    decode,
    encode,
)

ENCODINGS = [
    (None, b"\x40"),
    (True, b"\x41"),
    (False, b"\x42"),
    (UByte(7), b"\x50\x07"),
    (UShort(258), b"\x60\x01\x02"),
    (UInt(0), b"\x43"),
    (UInt(5), b"\x52\x05"),
    (UInt(70000), b"\x70\x00\x01\x11\x70"),
    (ULong(0), b"\x44"),
    (ULong(0x1D), b"\x53\x1d"),
    (ULong(2**40), b"\x80\x00\x00\x01\x00\x00\x00\x00\x00"),
    (-3, b"\x55\xfd"),
    (1000, b"\x81" + (1000).to_bytes(8, "big")),
    (Timestamp(1_700_000_000_000), b"\x83" + (1_700_000_000_000).to_bytes(8, "big")),
    (1.5, b"\x82\x3f\xf8\x00\x00\x00\x00\x00\x00"),
    (uuid.UUID(int=1), b"\x98" + uuid.UUID(int=1).bytes),
    (b"\x00\xff", b"\xa0\x02\x00\xff"),
    ("hé", b"\xa1\x03h\xc3\xa9"),
    (Symbol("amqp:x"), b"\xa3\x06amqp:x"),
    (b"x" * 300, b"\xb0\x00\x00\x01\x2c" + b"x" * 300),
    ([], b"\x45"),
    (["a", 1], b"\xc0\x06\x02\xa1\x01a\x55\x01"),
    ({"k": "v"}, b"\xc1\x07\x02\xa1\x01k\xa1\x01v"),
    (Described(ULong(0x75), b"hi"), b"\x00\x53\x75\xa0\x02hi"),
]


@pytest.mark.parametrize(("value", "encoded"), ENCODINGS, ids=[repr(v)[:30] for v, _ in ENCODINGS])
def test_each_type_has_its_smallest_encoding_and_comes_back_typed(value: object, encoded: bytes) -> None:
    assert encode(value) == encoded
    back, end = decode(encoded)
    assert (back, type(back), end) == (value, type(value), len(encoded))


def test_the_other_encodings_of_a_type_decode_too() -> None:
    assert decode(b"\x56\x01") == (True, 2)  # boolean with a byte
    assert decode(b"\x54\xff") == (-1, 2)  # smallint
    assert decode(b"\x71\xff\xff\xff\xfe") == (-2, 5)  # int
    assert decode(b"\x61\x00\x02") == (2, 3)  # short
    assert decode(b"\x72\x3f\xc0\x00\x00") == (1.5, 5)  # float
    assert decode(b"\x73\x00\x00\x00\x41") == ("A", 5)  # char
    assert decode(b"\xb1\x00\x00\x00\x01a") == ("a", 6)  # str32
    assert decode(b"\xd0\x00\x00\x00\x05\x00\x00\x00\x01\x40") == ([None], 10)  # list32


def test_arrays_round_trip() -> None:
    array = Array(Symbol, (Symbol("a"), Symbol("bc")))
    back, _ = decode(encode(array))
    assert back == ["a", "bc"] and all(type(item) is Symbol for item in back)


@pytest.mark.parametrize(
    "data",
    [b"\x01", b"\xa1\x05ab", b"\xc0\x05\x02\x40", b"\xc1\x03\x01\x40\x40", b"\x81\x00"],
    ids=["unknown constructor", "short string", "short list", "odd map", "short long"],
)
def test_what_is_not_amqp_is_a_decode_error(data: bytes) -> None:
    with pytest.raises(DecodeError):
        decode(data)


def test_a_type_without_an_amqp_encoding_is_refused() -> None:
    with pytest.raises(TypeError, match="cannot encode"):
        encode(object())
