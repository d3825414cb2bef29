"""The drill's in-process world: `mock_servicebus()`, the SDK's stand-in, faults raised inside it.

Quick (no sockets, no second process) and exact about what it injects: an outage is every
operation of the primary failing with `ServiceBusCommunicationError`, a random fault is the model's
`ServiceBusServerBusyError` raised before the operation, an ambiguous send is stored and then
reported as a timeout. What it cannot show is what the SDK's own transport and retries do with a
real broker's answers: that is the wire world's (wire.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from azure.core.credentials import AzureNamedKeyCredential
from azure.servicebus.exceptions import ServiceBusCommunicationError

from pairedbus import contract
from pairedbus.drill.progress import DrillProgress
from pairedbus.drill.report import DrillReport
from pairedbus.drill.scenario import PRIMARY_FQDN, SECONDARY_FQDN, DrillConfig, DrillEntity
from pairedbus.drill.world import Contents, Creation, Held, InFlight, RandomFaults, Seen, receivable_paths
from pairedbus.pairing.endpoints import NamespaceEndpoint
from pairedbus.pairing.ping import is_ping

__all__ = ["InProcessWorld", "run_drill_on_fake"]


class InProcessWorld:
    """A `DrillWorld` on the fake's `ServiceBusWorld` (the one `mock_servicebus()` made)."""

    name = "in-process"

    def __init__(self, world: Any) -> None:
        self.world = world
        self.primary = NamespaceEndpoint.from_fqdn(PRIMARY_FQDN)
        self.secondary = NamespaceEndpoint.from_fqdn(SECONDARY_FQDN)
        self.credential = AzureNamedKeyCredential("drill", "fake-key")

    def now(self) -> float:
        return float(self.world.clock.time())

    async def create(self, creations: list[Creation]) -> None:
        for made in creations:
            ns = self.world.namespace(self._fqdn(made.side))
            if made.kind == "topic":
                ns.create_topic(made.name, **made.properties)
            elif made.kind == "subscription":
                ns.create_subscription(made.topic, made.name, **made.properties)
            else:
                ns.create_queue(made.name, **made.properties)

    async def inject(self, faults: RandomFaults) -> None:
        self.world.seed(faults.seed)
        self.world.latency = faults.rtt_seconds
        self.world.fault_rate = faults.fault_rate
        self.world.ambiguous_send_rate = faults.ambiguous_send_rate
        self.world.late_lock_loss_rate = faults.late_lock_loss_rate

    async def calm(self) -> None:
        for name in ("fault_rate", "ambiguous_send_rate", "late_lock_loss_rate"):
            setattr(self.world, name, 0.0)
        self.world.heal_all()

    async def outage(self, *, down: bool) -> None:
        if down:
            self.world.fail(PRIMARY_FQDN, error=ServiceBusCommunicationError)
        else:
            self.world.heal(PRIMARY_FQDN)

    async def syphon_killed(self) -> None:
        """Nothing beyond the cancelled task: the fake has no sockets to cut."""

    def _fqdn(self, side: str) -> str:
        return PRIMARY_FQDN if side == "primary" else SECONDARY_FQDN

    def _receivables(self, entities: list[DrillEntity]) -> list[tuple[str, Any]]:
        primary = self.world.namespace(PRIMARY_FQDN)
        return [
            (destination, primary.subscription(name, sub) if sub else primary.queue(name))
            for destination, name, sub in receivable_paths(entities)
        ]

    def _backlog(self) -> list[Any]:
        prefix = self.primary.name + "/"
        return [q for q in self.world.namespace(SECONDARY_FQDN).queues() if q.name.startswith(prefix)]

    async def in_flight(self, entities: list[DrillEntity]) -> InFlight:
        return InFlight(
            destinations=sum(_unsettled(e.message_counts()) for _, e in self._receivables(entities)),
            backlog=sum(_unsettled(q.message_counts()) for q in self._backlog()),
        )

    async def contents(self, entities: list[DrillEntity]) -> Contents:
        primary = self.world.namespace(PRIMARY_FQDN)
        return Contents(
            destinations={destination: _held(entity) for destination, entity in self._receivables(entities)},
            backlog={queue.name: _held(queue) for queue in self._backlog()},
            duplicates_dropped=sum(primary.sendable(e.name).counts.duplicates_dropped for e in entities),
            injected=dict(self.world.injected),
        )


def _unsettled(counts: dict[str, int]) -> int:
    return counts["active"] + counts["scheduled"] + counts["deferred"]


def _held(entity: Any) -> Held:
    """What a queue or subscription still holds: active (locked or not), scheduled and deferred."""
    waiting = [*entity.active_messages(), *entity.scheduled_messages(), *entity.deferred_messages()]
    return Held([_seen(m) for m in waiting], [_seen(m) for m in entity.dead_letters()])


def _seen(message: Any) -> Seen:
    props = {_text(k): v for k, v in (message.application_properties or {}).items()}
    path = props.get(contract.ALIAS_PATH)
    return Seen(
        str(message.message_id),
        ping=is_ping(message),
        path=None if path is None else str(_text(path)),
        dead_letter_reason=message.dead_letter_reason,
        sequence_number=message.sequence_number,
    )


def _text(value: Any) -> Any:
    return value.decode() if isinstance(value, bytes) else value


def run_drill_on_fake(
    config: DrillConfig, *, progress: DrillProgress | None = None, started: float | None = None
) -> DrillReport:
    """Run a drill inside `mock_servicebus()` and return its report. `started`: the perf_counter time
    the caller's `timeout` counts from (default: now)."""
    started = time.perf_counter() if started is None else started
    from pairedbus.drill.run import run_drill
    from pairedbus.testing import mock_servicebus

    # Hundreds of failovers and syphon retries are the drill's point, not news: keep stderr for
    # the progress bar and the verdict.
    quiet = logging.getLogger("pairedbus")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        with mock_servicebus() as world:
            return asyncio.run(run_drill(config, InProcessWorld(world), progress=progress, started=started))
    finally:
        quiet.setLevel(level)
