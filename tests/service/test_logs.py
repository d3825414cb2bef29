"""JSON log lines: one object per line with time, level, logger, message and the caller's extras."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from datetime import datetime

import pytest

from pairedbus.service.logs import configure_json_logging


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    out = io.StringIO()
    configure_json_logging("INFO", stream=out)
    yield out
    root.handlers[:], root.level = saved[0], saved[1]


def _lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_line_carries_time_level_logger_message_and_extra_fields(stream: io.StringIO) -> None:
    logging.getLogger("pairedbus.test").info("moved %d messages", 3, extra={"queue": "contoso/x-servicebus-transfer/0"})
    (entry,) = _lines(stream)
    assert entry["level"] == "INFO"
    assert entry["logger"] == "pairedbus.test"
    assert entry["message"] == "moved 3 messages"
    assert entry["queue"] == "contoso/x-servicebus-transfer/0"
    assert datetime.fromisoformat(str(entry["time"])).utcoffset() is not None


def test_an_exception_is_one_line_with_its_traceback_as_a_field(stream: io.StringIO) -> None:
    try:
        raise RuntimeError("link detached\nsecond line")
    except RuntimeError:
        logging.getLogger("pairedbus.test").exception("failed")
    (entry,) = _lines(stream)
    assert "RuntimeError: link detached" in str(entry["exception"])


def test_extra_values_json_cannot_hold_are_logged_as_text(stream: io.StringIO) -> None:
    class Opaque:
        def __str__(self) -> str:
            return "opaque thing"

    logging.getLogger("pairedbus.test").warning("odd", extra={"when": datetime(2026, 1, 2), "what": Opaque()})
    (entry,) = _lines(stream)
    assert entry["when"] == "2026-01-02T00:00:00"  # ISO 8601, as every other time on the line
    assert entry["what"] == "opaque thing"


def test_the_time_is_utc_to_the_millisecond_and_text_stays_unescaped(stream: io.StringIO) -> None:
    logging.getLogger("pairedbus.test").info("köln → tokyo")
    line = stream.getvalue()
    assert "köln → tokyo" in line
    (entry,) = _lines(stream)
    assert str(entry["time"]).endswith("+00:00") and len(str(entry["time"]).split(".")[1]) == len("123+00:00")
    assert list(entry)[:4] == ["time", "level", "logger", "message"]


def test_below_the_configured_level_nothing_is_written(stream: io.StringIO) -> None:
    logging.getLogger("pairedbus.test").debug("noise")
    assert stream.getvalue() == ""
