"""JSON logs on stdout: one object per line, the shape Container Apps and Log Analytics parse.

Each line carries `time` (UTC, ISO 8601), `level`, `logger`, `message`, any `extra=` fields the
caller passed, and `exception` when there is one.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

#: Attributes every LogRecord has; anything else on a record came from `extra=`.
_RECORD_ATTRIBUTES = frozenset(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _RECORD_ATTRIBUTES and not key.startswith("_") and key not in entry:
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        # default=str: an extra field that JSON cannot hold is logged as text, never dropped.
        return json.dumps(entry, default=str, ensure_ascii=False)


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
