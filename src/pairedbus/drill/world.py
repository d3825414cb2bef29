"""The one interface between the drill and the namespaces it runs on (`DrillWorld`), and what crosses it.

The scenario, the ledger, the settling and the verdict are the drill's own (run.py, ledger.py,
report.py); a world only says where the namespaces are, makes what the drill plans, injects what it
asks for, and reports what the namespaces hold. Two worlds implement it: the in-process fake
(in_process.py: `mock_servicebus()`, faults raised inside the SDK's stand-in) and the wire
(wire.py: emulators in other processes, the unmodified SDK, faults injected through the
emulators' control endpoint).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Literal, Protocol

from pairedbus import contract, durations, limits
from pairedbus.drill.scenario import SUBSCRIPTIONS, DrillEntity, DrillEntityKind
from pairedbus.pairing.endpoints import NamespaceEndpoint

#: Destinations keep duplicate-detection history for the whole drill.
DESTINATION_DUPLICATE_WINDOW = timedelta(days=1)
#: High enough that random faults on complete never exhaust a message's deliveries.
DESTINATION_MAX_DELIVERY_COUNT = 10_000
#: A consumer whose complete failed (and whose abandon failed too) leaves the message locked:
#: the service minimum brings it back within seconds rather than the default minute.
DESTINATION_LOCK = limits.MIN_LOCK_DURATION

Side = Literal["primary", "secondary"]


@dataclass(frozen=True)
class Creation:
    """One entity the drill needs, with its properties (SDK names; durations as ISO 8601, which
    both the fake and the emulator's control endpoint take)."""

    side: Side
    kind: Literal["queue", "topic", "subscription"]
    name: str
    properties: dict[str, Any] = field(default_factory=dict)
    topic: str | None = None


@dataclass(frozen=True)
class RandomFaults:
    """The faults a world draws at random from the drill's seed, on every operation of both namespaces."""

    seed: int = 0
    #: Operations that fail with a retryable error (server busy).
    fault_rate: float = 0.0
    #: Sends stored by the service whose client sees a failure all the same.
    ambiguous_send_rate: float = 0.0
    #: Completes that find their lock lost after the receiver's work (the message comes back).
    late_lock_loss_rate: float = 0.0
    #: Simulated round trip (in-process only: see wire.py for why the wire refuses it).
    rtt_seconds: float = 0.0


@dataclass(frozen=True)
class InFlight:
    """Messages not yet settled: waiting at the destinations (active, scheduled or deferred, locked
    ones included) and in the backlog queues."""

    destinations: int = 0
    backlog: int = 0

    @property
    def total(self) -> int:
        return self.destinations + self.backlog


@dataclass(frozen=True)
class Seen:
    """A message the audit found in a store."""

    message_id: str
    #: Its sequence number in that store (a consumer's unconfirmed complete is resolved by it).
    sequence_number: int
    ping: bool = False
    #: The `x-ms-path` alias of a parked copy: the entity it is parked for.
    path: str | None = None
    dead_letter_reason: str | None = None


@dataclass
class Held:
    """What one queue or subscription holds: messages not yet settled, and its dead letters."""

    waiting: list[Seen] = field(default_factory=list)
    dead_letters: list[Seen] = field(default_factory=list)


@dataclass
class Contents:
    """What the namespaces hold when the drill stops, for the audit."""

    #: By destination (`queue`, `topic/subscriptions/name`).
    destinations: dict[str, Held] = field(default_factory=dict)
    #: By backlog queue name.
    backlog: dict[str, Held] = field(default_factory=dict)
    #: Copies the destinations' duplicate detection dropped (repeated sends and moves).
    duplicates_dropped: int = 0
    #: How many of each random fault fired: "fault", "ambiguous_send", "late_lock_loss".
    injected: dict[str, int] = field(default_factory=dict)
    #: Connections the world cut on purpose (the wire drill's syphon kills).
    connections_dropped: int = 0


class DrillWorld(Protocol):
    """The world-specific part of a drill (see the module's docstring)."""

    #: "in-process" or "wire": the report says which.
    name: str
    primary: NamespaceEndpoint
    secondary: NamespaceEndpoint
    #: What the drill's clients authenticate with (None: the endpoints' connection strings).
    credential: Any

    def now(self) -> float:
        """The service's clock, epoch seconds (scheduled enqueue times are set on it)."""
        ...

    async def create(self, creations: list[Creation]) -> None:
        """Make the entities (what the Pulumi components would have made)."""
        ...

    async def inject(self, faults: RandomFaults) -> None:
        """Draw these random faults from now on."""
        ...

    async def calm(self) -> None:
        """Every fault off and the primary up: the audit reads without them."""
        ...

    async def outage(self, *, down: bool) -> None:
        """The primary goes down (every operation fails, or its connections are refused and cut),
        or comes back."""
        ...

    async def syphon_killed(self) -> None:
        """The drill is killing the syphon: what a crash does beyond the cancelled task."""
        ...

    async def in_flight(self, entities: list[DrillEntity]) -> InFlight: ...

    async def contents(self, entities: list[DrillEntity]) -> Contents:
        """Everything the audit reads; called once every fault is off."""
        ...


# --- what the drill creates -------------------------------------------------------------------


def creations(
    entities: list[DrillEntity],
    primary: NamespaceEndpoint,
    backlog_queues: int,
    *,
    dedup: bool,
    backlog_lock: timedelta,
) -> list[Creation]:
    """The destinations (duplicate detection on unless `dedup` is off, dead-lettering on expiry) and
    the backlog queues with the table's properties but for their lock (`backlog_lock`)."""
    common = {
        "dead_lettering_on_message_expiration": True,
        "max_delivery_count": DESTINATION_MAX_DELIVERY_COUNT,
        "lock_duration": durations.iso_duration(DESTINATION_LOCK),
    }
    dedup_settings: dict[str, Any] = (
        {
            "requires_duplicate_detection": True,
            "duplicate_detection_history_time_window": durations.iso_duration(DESTINATION_DUPLICATE_WINDOW),
        }
        if dedup
        else {}
    )
    made: list[Creation] = []
    for entity in entities:
        if entity.is_topic:
            made.append(Creation("primary", "topic", entity.name, dedup_settings))
            made.extend(Creation("primary", "subscription", s, common, topic=entity.name) for s in SUBSCRIPTIONS)
        else:
            sessions = {"requires_session": entity.kind is DrillEntityKind.SESSION_QUEUE}
            made.append(Creation("primary", "queue", entity.name, {**sessions, **dedup_settings, **common}))
    properties: dict[str, Any] = {
        contract.ARM_TO_SDK_QUEUE_FIELD[arm]: value for arm, value in contract.BACKLOG_QUEUE_PROPERTIES.items()
    }
    # The table's one-minute lock would make every syphon kill cost the drill a minute before the
    # killed syphon's locked messages come back; the drill shortens it (nothing else differs).
    properties["lock_duration"] = durations.iso_duration(backlog_lock)
    made.extend(
        Creation("secondary", "queue", name, properties)
        for name in contract.backlog_queue_names(primary.name, backlog_queues)
    )
    return made


def receivable_paths(entities: list[DrillEntity]) -> list[tuple[str, str, str | None]]:
    """(destination, entity name, subscription or None) of every queue and subscription the drill reads."""
    return [
        (destination, entity.name, destination.rpartition("/")[2] if entity.is_topic else None)
        for entity in entities
        for destination in entity.destinations
    ]
