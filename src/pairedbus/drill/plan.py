"""The drill's plan: everything a seed fixes, derived from the config alone, with its digest.

A seed fixes what the drill sends and what it injects, and when by the dispatcher's message index:
the messages (entity, body, properties, which carry an id of their own, session, time to live,
schedule, batches), the outage windows and syphon kill points, the seeds of each client's backlog
pick, and the random faults' settings with the seed of their generator. It does not fix which
operation meets which of that generator's draws: sixteen senders, the consumers and the syphon
interleave by timing, so the counts (parked, failovers, faults that fired, copies dropped,
timings) differ from run to run, in-process as on the wire, while the verdict's rules hold for
each. Ids the failover sender assigns (to a message planned without one) are fresh on every run.
Two runs with the same `digest` ran the same plan.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import asdict, dataclass
from typing import Any

from pairedbus.drill.scenario import (
    DrillConfig,
    DrillEntity,
    PlannedMessage,
    drill_entities,
    kill_points,
    plan_messages,
    windows,
)
from pairedbus.drill.world import RandomFaults

#: Hex digits of the digest the report shows (64 bits: enough to tell two plans apart by eye).
DIGEST_CHARS = 16
#: How many clients the drill's senders share (rotation and pings are per client).
CLIENTS = 2


@dataclass(frozen=True)
class DrillPlan:
    entities: list[DrillEntity]
    messages: list[PlannedMessage]
    #: Send calls: one message, or the messages of one batch.
    units: list[list[PlannedMessage]]
    #: (first, last) unit index of each outage; unit indices at which the syphon is killed.
    outage_windows: list[tuple[int, int]]
    kill_points: list[int]
    #: Each client's seed for its backlog pick.
    client_seeds: list[float]
    faults: RandomFaults

    @property
    def digest(self) -> str:
        """A short sha256 of the plan (not of the config's timing knobs or bounds)."""
        canonical = {
            "entities": [(e.name, e.kind.value) for e in self.entities],
            "messages": [_planned(m) for m in self.messages],
            "units": [len(unit) for unit in self.units],
            "outage_windows": self.outage_windows,
            "kill_points": self.kill_points,
            "client_seeds": [repr(s) for s in self.client_seeds],
            "faults": asdict(self.faults),
        }
        text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_CHARS]


def drill_plan(config: DrillConfig) -> DrillPlan:
    """The plan `config` (its seed above all) fixes: the same on every call."""
    rng = random.Random(config.seed)
    entities = drill_entities(config.entities)
    messages = plan_messages(config, entities)
    units = send_units(messages)
    kills = kill_points(config.syphon_restarts, len(units), rng)
    return DrillPlan(
        entities=entities,
        messages=messages,
        units=units,
        outage_windows=windows(config.outages, len(units)),
        kill_points=kills,
        client_seeds=[rng.random() for _ in range(CLIENTS)],
        faults=RandomFaults(
            seed=config.seed,
            fault_rate=config.fault_rate,
            ambiguous_send_rate=config.ambiguous_send_rate,
            late_lock_loss_rate=config.late_lock_loss_rate,
            rtt_seconds=config.rtt_ms / 1000,
        ),
    )


def send_units(planned: list[PlannedMessage]) -> list[list[PlannedMessage]]:
    units: list[list[PlannedMessage]] = []
    for message in planned:
        if message.batch is not None and units and units[-1][0].batch == message.batch:
            units[-1].append(message)
        else:
            units.append([message])
    return units


def _planned(message: PlannedMessage) -> dict[str, Any]:
    return {
        "index": message.index,
        "entity": message.entity.name,
        "body": message.body.hex(),
        "properties": message.properties,
        "message_id": message.message_id,
        "session_id": message.session_id,
        "ttl": message.ttl,
        "schedule_in": message.schedule_in,
        "subject": message.subject,
        "correlation_id": message.correlation_id,
        "content_type": message.content_type,
        "batch": message.batch,
    }
