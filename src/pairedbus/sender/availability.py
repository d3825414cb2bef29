"""The availability of one primary entity as one client sees it, shared by all its senders."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from enum import StrEnum

from pairedbus.sender.failover_clock import FailoverClock


class EntityKind(StrEnum):
    QUEUE = "queue"
    TOPIC = "topic"


@dataclass(eq=False)
class EntityAvailability:
    """`switched` is read on every send: flipping it moves every sender of the entity at once."""

    name: str
    kind: EntityKind
    failover_clock: FailoverClock
    switched: bool = False
    #: Learned from the messages sent: a session entity only takes pings with a session id.
    requires_session: bool = False
    ping_task: asyncio.Task[None] | None = field(default=None, repr=False)


@dataclass
class FailoverStats:
    """What one client did off the healthy path (for logs, metrics and the drill's report)."""

    failovers: int = 0
    returns_to_primary: int = 0
    pings_sent: int = 0
    pings_failed: int = 0
    parked_messages: int = 0
    backlog_send_failures: int = 0
