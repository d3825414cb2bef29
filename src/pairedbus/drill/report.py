"""The drill's report: the figures the issue asks for, and the verdict."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pairedbus.drill.ledger import Ledger
from pairedbus.drill.park_clock import OutageParking
from pairedbus.drill.scenario import DrillConfig

EXAMPLES = 5


@dataclass
class DrillReport:
    sent: int
    expected_deliveries: int
    delivered: int
    lost: int
    duplicates: int
    dead_lettered: int
    dead_lettered_copies: int
    wrongly_dead_lettered: int
    property_mismatches: int
    unexpected: int
    send_failures: int
    backlogged: int
    pings: int
    pings_failed: int
    pings_skipped_by_consumers: int
    failovers: int
    returns_to_primary: int
    backlog_send_failures: int
    outages: int
    syphon_kills: int
    syphon_faults: int
    syphon_moved: int
    syphon_dead_lettered: int
    left_in_backlog: int
    left_at_destinations: int
    settled: bool
    sending_seconds: float
    settling_seconds: float
    wall_seconds: float
    config: dict[str, Any]
    examples: dict[str, list[str]] = field(default_factory=dict)
    #: Injected ambiguous outcomes: sends stored by the fake whose client saw a timeout.
    ambiguous_sends: int = 0
    #: Injected late lock losses: completes that found the lock gone (the message came back).
    late_lock_losses: int = 0
    #: Copies dropped by the destinations' duplicate detection (repeated sends and moves).
    duplicates_dropped: int = 0
    #: Expected deliveries neither delivered nor dead-lettered whose copy is still parked in a
    #: backlog queue or waiting at the destination when the drill stopped: not lost (yet).
    not_yet_delivered: int = 0
    #: Of those, with a copy still in a backlog queue; and the rest, waiting at their destination.
    still_parked: int = 0
    still_at_destinations: int = 0
    #: The caller's `--timeout` cut the drill short (while sending or settling): never settled.
    timed_out: bool = False
    #: Messages whose send was under way when the timeout came: stored or not, no one knows; one
    #: found anywhere is counted as usual, one found nowhere is neither sent nor lost.
    sends_interrupted: int = 0
    #: Where the drill ran: "in-process" (the fake) or "wire" (emulators in other processes, the real SDK).
    world: str = "in-process"
    #: Connections the drill cut on purpose (the wire drill cuts the secondary's at each syphon kill).
    connections_dropped: int = 0
    #: Per outage, seconds from its start to the first message parked by a failover of its own (null:
    #: no such figure; `outage_parking` says why).
    first_parked_seconds: list[float | None] = field(default_factory=list)
    #: Per outage, what followed its start (run.OutageParking as a dict: outcome, the figures, and how
    #: many sender entities were still switched to the backlog when it began).
    outage_parking: list[dict[str, Any]] = field(default_factory=list)
    #: Cancelled syphons that had not ended within the grace and were left behind.
    syphon_abandoned: int = 0
    #: Backlog messages the syphons gave back (abandoned) when the close/fault rule stopped them.
    syphon_given_back: int = 0
    #: The plan the seed fixed (drill/plan.py): two runs with the same digest ran the same plan.
    plan_digest: str = ""
    #: SDK calls the failover sender cut at their bound because the SDK had not returned.
    calls_cut: int = 0
    #: `send_failures` by what raised them: "hop: Type [condition] retryable=..." -> messages.
    send_failures_by_error: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems()

    @property
    def unsettled(self) -> bool:
        """The drill ended at its settle limit or its timeout, or with messages still parked or waiting."""
        return not self.settled or self.timed_out or bool(self.left_in_backlog or self.left_at_destinations)

    def problems(self) -> list[str]:
        problems = []
        for name in (
            "lost",
            "duplicates",
            "property_mismatches",
            "unexpected",
            "wrongly_dead_lettered",
            "send_failures",
        ):
            value = getattr(self, name)
            if value:
                problems.append(f"{name.replace('_', ' ')}: {value}")
        if self.unsettled:
            within = " within the timeout" if self.timed_out else ""
            problems.append(
                f"not settled{within}: {self.left_in_backlog} left in the backlog, "
                f"{self.left_at_destinations} left at the destinations"
                + (f", {self.not_yet_delivered} deliveries not yet made" if self.not_yet_delivered else "")
            )
        return problems

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ok"] = self.ok
        return data

    @classmethod
    def build(
        cls,
        *,
        config: DrillConfig,
        ledger: Ledger,
        stats: list[Any],
        syphon: Any,
        outages: int,
        left: dict[str, int],
        injected: dict[str, int] | None = None,
        duplicates_dropped: int = 0,
        settled: bool,
        timed_out: bool = False,
        sending_seconds: float,
        settling_seconds: float,
        wall_seconds: float,
        world: str = "in-process",
        connections_dropped: int = 0,
        first_parked_seconds: list[float | None] | None = None,
        outage_parking: Sequence[OutageParking] = (),
        plan_digest: str = "",
    ) -> DrillReport:
        lost = ledger.lost()
        not_yet = ledger.not_yet_delivered()
        parked = sum(1 for key in not_yet if key in ledger.still_parked)
        wrong_dead = ledger.wrongly_dead_lettered()
        duplicates = ledger.duplicated_keys()
        senders = _sender_totals(stats)
        injected = injected or {}
        return cls(
            sent=sum(1 for message_id in ledger.expected if not ledger.outcome_unknown(message_id)),
            expected_deliveries=ledger.expected_deliveries() - len(ledger.never_stored()),
            delivered=len(ledger.delivered_keys()),
            lost=len(lost),
            duplicates=ledger.duplicates(),
            dead_lettered=ledger.dead_lettered_undelivered(),
            dead_lettered_copies=ledger.dead_lettered_copies(),
            wrongly_dead_lettered=len(wrong_dead),
            property_mismatches=len(ledger.mismatches),
            unexpected=len(ledger.unexpected),
            send_failures=ledger.send_failures,
            backlogged=senders["parked_messages"],
            pings=senders["pings_sent"],
            pings_failed=senders["pings_failed"],
            pings_skipped_by_consumers=ledger.pings_skipped,
            failovers=senders["failovers"],
            returns_to_primary=senders["returns_to_primary"],
            backlog_send_failures=senders["backlog_send_failures"],
            outages=outages,
            syphon_kills=syphon.kills,
            syphon_faults=syphon.faults,
            syphon_moved=syphon.totals.moved,
            syphon_dead_lettered=syphon.totals.dead_lettered,
            left_in_backlog=left["backlog"],
            left_at_destinations=left["destinations"],
            settled=settled,
            sending_seconds=round(sending_seconds, 3),
            settling_seconds=round(settling_seconds, 3),
            wall_seconds=round(wall_seconds, 3),
            config=config.model_dump(mode="json"),
            examples=_examples(ledger, lost, duplicates, wrong_dead),
            ambiguous_sends=injected.get("ambiguous_send", 0),
            late_lock_losses=injected.get("late_lock_loss", 0),
            duplicates_dropped=duplicates_dropped,
            not_yet_delivered=len(not_yet),
            still_parked=parked,
            still_at_destinations=len(not_yet) - parked,
            timed_out=timed_out,
            sends_interrupted=len(ledger.interrupted),
            world=world,
            connections_dropped=connections_dropped,
            first_parked_seconds=[None if s is None else round(s, 3) for s in first_parked_seconds or []],
            outage_parking=[_rounded(asdict(o)) for o in outage_parking],
            send_failures_by_error=dict(ledger.send_failures_by_error.most_common()),
            plan_digest=plan_digest,
            syphon_abandoned=getattr(syphon, "abandoned", 0),
            syphon_given_back=syphon.totals.given_back,
            calls_cut=senders["calls_cut"],
        )


#: The senders' counters a report sums over every sender of the drill.
_SENDER_COUNTERS = (
    "parked_messages",
    "pings_sent",
    "pings_failed",
    "failovers",
    "returns_to_primary",
    "backlog_send_failures",
    "calls_cut",
)


def _rounded(values: dict[str, Any]) -> dict[str, Any]:
    """Seconds to the millisecond, as the report's other figures."""
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in values.items()}


def _sender_totals(stats: list[Any]) -> dict[str, int]:
    return {name: sum(getattr(s, name) for s in stats) for name in _SENDER_COUNTERS}


def _examples(
    ledger: Ledger, lost: list[tuple[str, str]], duplicates: list[tuple[str, str]], wrong_dead: list[tuple[str, str]]
) -> dict[str, list[str]]:
    """Up to EXAMPLES of each kind of finding, the kinds with none left out."""
    examples = {
        "lost": [f"{d} {m}" for d, m in lost[:EXAMPLES]],
        "duplicates": [f"{d} {m}" for d, m in duplicates[:EXAMPLES]],
        "property_mismatches": [f"{d} {m}: {why}" for (d, m), why in list(ledger.mismatches.items())[:EXAMPLES]],
        "unexpected": [f"{d} {m}" for d, m in sorted(ledger.unexpected)[:EXAMPLES]],
        "wrongly_dead_lettered": [f"{d} {m} ({ledger.dead_letters[(d, m)]})" for d, m in wrong_dead[:EXAMPLES]],
        "send_failures": [f"{f.kind}: {f.message}" for f in ledger.send_failure_examples],
    }
    return {kind: found for kind, found in examples.items() if found}
