"""JSON logs on stdout: one object per line, the shape Container Apps and Log Analytics parse.

Each line carries `time` (UTC, ISO 8601), `level`, `logger`, `message`, any `extra=` fields the
caller passed, and `exception` when there is one.
"""

from __future__ import annotations

import logging
import sys
from datetime import UTC, datetime
from typing import TextIO

from pythonjsonlogger.json import JsonFormatter as LibraryJsonFormatter

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
#: python-json-logger's names for the record's fields -> the names the log queries read.
FIELD_NAMES = {
    "asctime": "time",
    "levelname": "level",
    "name": "logger",
    "exc_info": "exception",
    "stack_info": "stack",
}


class JsonFormatter(LibraryJsonFormatter):
    """python-json-logger's formatter (extras as fields; a value JSON cannot hold as its text, never
    dropped), with this service's field names and the time in UTC to the millisecond."""

    def __init__(self) -> None:
        super().__init__(
            "{asctime}{levelname}{name}{message}", style="{", rename_fields=FIELD_NAMES, json_ensure_ascii=False
        )

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")


def configure_json_logging(level: str = "INFO", stream: TextIO | None = None) -> logging.Handler:
    """Route the root logger to one JSON handler on `stream` (stdout by default)."""
    handler = logging.StreamHandler(stream if stream is not None else sys.stdout)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(level.upper())
    # The AMQP stack logs every frame at INFO; keep it to warnings unless debugging.
    if level.upper() != "DEBUG":
        for noisy in ("azure", "uamqp", "aiohttp.access"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
    return handler
