"""Pings (paired-namespaces.md, "Pings"): how a switched entity learns the primary is back, and how
a receiver tells one from an application's message."""

from __future__ import annotations

import uuid
from typing import Any

from azure.servicebus import ServiceBusMessage

from pairedbus import contract


def ping_message(*, session: bool) -> ServiceBusMessage:
    """An empty message with the ping content type and a 1 s time to live; a session entity
    only accepts messages with a session id, so it gets a random one that no receiver waits on."""
    return ServiceBusMessage(
        b"",
        content_type=contract.PING_CONTENT_TYPE,
        time_to_live=contract.PING_TIME_TO_LIVE,
        message_id=str(uuid.uuid4()),
        session_id=str(uuid.uuid4()) if session else None,
    )


def is_ping(message: Any) -> bool:
    """Whether a message is a paired-namespace ping (by content type, nothing else)."""
    return getattr(message, "content_type", None) == contract.PING_CONTENT_TYPE
