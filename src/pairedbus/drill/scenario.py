"""What a failover drill does: its configuration, its entities and the messages it sends.

Everything is derived from the seed, so two runs with the same flags send the same messages to
the same entities with the same outage and syphon-kill schedule (timing on a busy machine still
varies: which messages land in the backlog is not fixed, the accounting must hold regardless).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from pairedbus import limits

PRIMARY_FQDN = "drill-primary.servicebus.windows.net"
SECONDARY_FQDN = "drill-secondary.servicebus.windows.net"
SUBSCRIPTIONS = ("audit", "billing")
SESSIONS_PER_QUEUE = 16
#: Short enough that parked copies of some messages expire in the backlog (dead-lettered there),
#: long enough that most are delivered: both outcomes are accounted for.
SHORT_TTL = timedelta(seconds=3)
LONG_TTL = timedelta(hours=6)
#: The longest `--timeout` a drill takes (seconds): a day, far beyond any drill's own limits.
MAX_TIMEOUT_SECONDS = 86_400.0
#: The shortest: the drill needs about a second to stop its consumers and the syphon and to audit.
MIN_TIMEOUT_SECONDS = 1.0


class DrillConfig(BaseModel):
    """The drill's knobs (the CLI flags), validated."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    messages: int = Field(default=2000, ge=1, le=10_000_000)
    entities: int = Field(default=3, ge=1, le=100)
    backlog_queues: int = Field(default=4, ge=1, le=100)
    outages: int = Field(default=2, ge=0, le=100)
    fault_rate: float = Field(default=0.02, ge=0.0, lt=1.0)
    #: Sends that are stored but whose client sees a timeout (the fake's ambiguous outcome).
    ambiguous_send_rate: float = Field(default=0.01, ge=0.0, lt=1.0)
    #: Completes that find the lock already lost after the next hop acknowledged (late lock loss).
    late_lock_loss_rate: float = Field(default=0.01, ge=0.0, lt=1.0)
    syphon_restarts: int = Field(default=2, ge=0, le=1000)
    rtt_ms: float = Field(default=0.0, ge=0.0, le=10_000.0)
    seed: int = 1
    #: The caller's bound on the whole drill in seconds, sending and settling included (None: no
    #: bound but the settle timeout below). The verdict comes within it; a drill it cuts short is
    #: `FAIL (not settled within the timeout)` with the counts it saw.
    timeout: float | None = Field(default=None, ge=MIN_TIMEOUT_SECONDS, le=MAX_TIMEOUT_SECONDS, allow_inf_nan=False)
    senders: int = Field(default=16, ge=1, le=1000)
    #: The send phase lasts at least this long (sends are paced, not slowed): outage windows and
    #: pings then happen on a human time scale even when the fake could send everything at once.
    min_send_time: timedelta = timedelta(seconds=6)
    #: Failover interval of the drill's clients (the option allows 0..60 min; a drill wants it short).
    failover_interval: timedelta = timedelta(milliseconds=50)
    #: Ping interval: the option's minimum (1 s) unless a test makes it shorter through the
    #: client's injectable sleep.
    ping_interval: timedelta = timedelta(seconds=1)
    #: Lock duration of the drill's backlog queues (and so the syphon's renewal timing). The table
    #: says a minute: each syphon kill would then cost the drill a minute before the killed
    #: syphon's messages come back. Not the service minimum (5 s) either: the syphon does not renew
    #: a message while it waits for its partition key's turn, and under the harsh drill's faults
    #: (half the sends ambiguous, 30 % failing) a session's turn took up to 14 s; with a 5 s lock
    #: those messages were redelivered while they waited, queued up again behind the same session,
    #: and the 20,000-message drill never settled (issue 35; the reproducer is
    #: tests/drill/test_syphon_key_turn_locks.py).
    backlog_lock_duration: timedelta = Field(
        default=timedelta(seconds=20), ge=limits.MIN_LOCK_DURATION, le=limits.MAX_LOCK_DURATION
    )
    #: How long the drill waits, after the last send, for everything to be accounted for, when the
    #: caller set no `timeout` (with one, settling may take whatever of it is left).
    settle_timeout: timedelta = timedelta(minutes=10)
    #: Test hook: every n-th delivery the consumer completes but does not record (a consumer that
    #: loses messages), 0 = off. Proves the accounting can fail.
    sabotage_consumer_every: int = Field(default=0, ge=0)
    #: Test hook: False creates the destinations without duplicate detection, which the drill's
    #: promise needs once sends can be ambiguous and locks can be lost late (proves the point).
    destination_duplicate_detection: bool = True


class DrillEntityKind(StrEnum):
    SESSION_QUEUE = "session-queue"
    QUEUE = "queue"
    TOPIC = "topic"


@dataclass(frozen=True)
class DrillEntity:
    name: str
    kind: DrillEntityKind

    @property
    def is_topic(self) -> bool:
        return self.kind is DrillEntityKind.TOPIC

    @property
    def destinations(self) -> tuple[str, ...]:
        """Where a message sent to the entity must be received: the queue, or each subscription."""
        if self.is_topic:
            return tuple(f"{self.name}/subscriptions/{s}" for s in SUBSCRIPTIONS)
        return (self.name,)


def drill_entities(count: int) -> list[DrillEntity]:
    """A session queue, a plain queue and a topic with subscriptions, repeated to `count`."""
    kinds = (DrillEntityKind.SESSION_QUEUE, DrillEntityKind.QUEUE, DrillEntityKind.TOPIC)
    return [DrillEntity(f"drill-{kinds[i % 3].value}-{i}", kinds[i % 3]) for i in range(count)]


@dataclass
class PlannedMessage:
    """One message the drill sends, and everything the consumer must see unchanged."""

    index: int
    entity: DrillEntity
    body: bytes
    properties: dict[str, object]
    message_id: str | None  # None: the failover sender assigns one
    session_id: str | None = None
    ttl: timedelta | None = None
    schedule_in: timedelta | None = None  # scheduled this long after it is sent
    subject: str | None = None
    correlation_id: str | None = None
    content_type: str | None = None
    batch: int | None = None  # messages with the same batch number go in one send call
    assigned_id: str | None = field(default=None, repr=False)


def plan_messages(config: DrillConfig, entities: list[DrillEntity]) -> list[PlannedMessage]:
    rng = random.Random(config.seed)
    planned: list[PlannedMessage] = []
    batch_number = 0
    i = 0
    while i < config.messages:
        entity = entities[rng.randrange(len(entities))]
        # About one send in ten is a list of 2-8 messages for one entity (re-packed when parked).
        size = rng.randint(2, 8) if rng.random() < 0.1 else 1
        size = min(size, config.messages - i)
        batch = batch_number if size > 1 else None
        batch_number += size > 1
        session = (
            f"session-{rng.randrange(SESSIONS_PER_QUEUE)}" if entity.kind is DrillEntityKind.SESSION_QUEUE else None
        )
        for _ in range(size):
            roll = rng.random()
            planned.append(
                PlannedMessage(
                    index=i,
                    entity=entity,
                    body=rng.randbytes(rng.randint(0, 256)),
                    properties={"drill-index": i, "tenant": f"t{rng.randrange(50)}", "weight": rng.random()},
                    message_id=None if rng.random() < 0.3 else f"drill-{config.seed}-{i}",
                    session_id=session,
                    ttl=SHORT_TTL if roll < 0.05 else LONG_TTL if roll < 0.2 else None,
                    schedule_in=(
                        timedelta(milliseconds=rng.randint(50, 800)) if 0.2 <= roll < 0.25 and batch is None else None
                    ),
                    subject=f"subject-{rng.randrange(10)}",
                    correlation_id=f"corr-{rng.randrange(1000)}" if rng.random() < 0.5 else None,
                    content_type="application/octet-stream",
                    batch=batch,
                )
            )
            i += 1
    return planned


def windows(count: int, total: int) -> list[tuple[int, int]]:
    """`count` outage windows over message indices [0, total): equal stretches of outage and
    health, starting and ending healthy."""
    if count == 0 or total == 0:
        return []
    stretch = total / (2 * count + 1)
    return [
        (int((2 * w + 1) * stretch), max(int((2 * w + 2) * stretch), int((2 * w + 1) * stretch) + 1))
        for w in range(count)
    ]


def kill_points(count: int, total: int, rng: random.Random) -> list[int]:
    """Message indices at which the syphon is killed: spread over the run, each a little random."""
    if count == 0:
        return []
    stretch = total / (count + 1)
    return sorted(int(stretch * (k + 1) + rng.uniform(-0.3, 0.3) * stretch) for k in range(count))
