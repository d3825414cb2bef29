"""ISO 8601 durations <-> .NET ticks (100 ns), exact.

Service Bus writes durations the way .NET's `XmlConvert.ToString(TimeSpan)` does
(TimeSpan.MaxValue is `contract.TIMESPAN_MAX_ISO`), to the tick. Python's `timedelta` holds microseconds only, and
`isodate` (which the azure-servicebus serializer uses) rounds the seventh fractional digit to the
nearest microsecond: TimeSpan.MaxValue becomes `...5.477581S`, 3 ticks *above* the maximum, which the
service refuses (azure-servicebus documents it in `_model_workaround.avoid_timedelta_overflow`).
Everything here rounds toward zero instead, so a value never grows on its way to the wire.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Final

TICKS_PER_SECOND: Final = 10_000_000
TICKS_PER_MICROSECOND: Final = 10
#: .NET TimeSpan.MaxValue (Int64.MaxValue ticks): the largest duration the service stores.
TIMESPAN_MAX_TICKS: Final = 9_223_372_036_854_775_807

_ISO_DURATION = re.compile(
    r"^P(?:(?P<days>\d+)D)?(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?"
    r"(?:(?P<seconds>\d+)(?:\.(?P<fraction>\d{1,7}))?S)?)?$"
)


def duration_ticks(value: str | timedelta) -> int:
    """An ISO 8601 duration (days and time parts, as Service Bus writes them) or a timedelta, in
    100 ns ticks. Raises ValueError for anything else."""
    if isinstance(value, timedelta):
        return ((value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds) * TICKS_PER_MICROSECOND
    match = _ISO_DURATION.match(value) if isinstance(value, str) and value != "P" else None
    if match is None or value.endswith("T"):
        raise ValueError(f"not an ISO 8601 duration: {value!r}")
    seconds = (
        int(match["days"] or 0) * 86_400
        + int(match["hours"] or 0) * 3_600
        + int(match["minutes"] or 0) * 60
        + int(match["seconds"] or 0)
    )
    fraction = (match["fraction"] or "").ljust(7, "0")
    return seconds * TICKS_PER_SECOND + int(fraction)


def duration_timedelta(value: str | timedelta) -> timedelta:
    """A duration as a timedelta, rounded *down* to the microsecond: TimeSpan.MaxValue becomes
    `...5.477580`, never above what the service accepts."""
    return timedelta(microseconds=duration_ticks(value) // TICKS_PER_MICROSECOND)


def wire_duration(value: str | timedelta) -> timedelta:
    """The value to hand to azure-servicebus for a duration property.

    The SDK serializes a `str` by parsing it with isodate (which rounds up to the microsecond) and
    applies its own overflow workaround only to timedeltas, so an ISO string at TimeSpan.MaxValue
    reaches the wire 3 ticks too large. A timedelta rounded down serializes at or below the input,
    and at most 0.9 us below it. Values above TimeSpan.MaxValue are refused here, before any call.
    """
    ticks = duration_ticks(value)
    if ticks > TIMESPAN_MAX_TICKS:
        raise ValueError(f"duration {value!r} exceeds TimeSpan.MaxValue ({iso_duration(TIMESPAN_MAX_TICKS)})")
    return timedelta(microseconds=ticks // TICKS_PER_MICROSECOND)


def iso_duration(value: str | timedelta | int) -> str:
    """A duration (ISO string, timedelta or ticks) as Service Bus writes it: `P{d}DT{h}H{m}M{s}S`."""
    ticks = value if isinstance(value, int) else duration_ticks(value)
    seconds, fraction = divmod(ticks, TICKS_PER_SECOND)
    days, seconds = divmod(seconds, 86_400)
    hours, seconds = divmod(seconds, 3_600)
    minutes, seconds = divmod(seconds, 60)
    time = "".join(f"{n}{unit}" for n, unit in ((hours, "H"), (minutes, "M")) if n)
    if seconds or fraction:
        time += f"{seconds}.{fraction:07d}".rstrip("0").rstrip(".") + "S"
    text = "P" + (f"{days}D" if days else "") + (f"T{time}" if time else "")
    return text if text != "P" else "PT0S"


def durations_equal(a: str | timedelta, b: str | timedelta) -> bool:
    """Equal to within the microsecond that Python's timedelta can represent."""
    return abs(duration_ticks(a) - duration_ticks(b)) < TICKS_PER_MICROSECOND
