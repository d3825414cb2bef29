"""`pairedbus drill`: an end-to-end failover drill on the Service Bus fake, or with `--wire` against
two emulated namespaces in other processes with the unmodified SDK (see pairedbus.drill)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from pairedbus.errors import UserError

if TYPE_CHECKING:
    from pairedbus.drill.report import DrillReport
    from pairedbus.drill.scenario import DrillConfig


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "drill",
        help="run a failover drill (on the in-process Service Bus fake, or --wire) and account for every message",
        description=(
            "Send messages through failover senders while the primary has outages, random faults hit "
            "every operation and the syphon is killed mid-drain; then check that every message was "
            "delivered exactly once, unchanged, or dead-lettered because its time to live ran out. "
            "Exit 1 if anything was lost, duplicated or altered, or the drill did not settle (messages left over)."
        ),
    )
    parser.add_argument(
        "--wire",
        action="store_true",
        help="run against two emulated namespaces, each in a process of its own, with the unmodified "
        "azure-servicebus SDK over connection strings; faults injected on the wire (slower; default: the "
        "in-process fake)",
    )
    parser.add_argument("--messages", type=int, default=2000, metavar="N", help="messages to send (default 2000)")
    parser.add_argument("--entities", type=int, default=3, metavar="K", help="primary entities (default 3)")
    parser.add_argument("--backlog-queues", type=int, default=4, metavar="B", help="backlog queues (default 4)")
    parser.add_argument("--outages", type=int, default=2, metavar="W", help="primary outage windows (default 2)")
    parser.add_argument(
        "--fault-rate",
        type=float,
        default=0.02,
        metavar="P",
        help="retryable fault rate per operation, 0 <= P < 1 (default 0.02)",
    )
    parser.add_argument(
        "--ambiguous-send-rate",
        type=float,
        default=0.01,
        metavar="P",
        help="sends stored by the service whose client still sees a timeout, 0 <= P < 1 (default 0.01)",
    )
    parser.add_argument(
        "--late-lock-loss-rate",
        type=float,
        default=0.01,
        metavar="P",
        help="completes that find the lock lost after the next hop acknowledged, 0 <= P < 1 (default 0.01)",
    )
    parser.add_argument("--syphon-restarts", type=int, default=2, metavar="R", help="syphon kills (default 2)")
    parser.add_argument("--rtt-ms", type=float, default=0.0, metavar="MS", help="simulated round trip (default 0)")
    parser.add_argument(
        "--seed",
        type=int,
        default=1,
        metavar="S",
        help="random seed (default 1): fixes the plan (the messages, the outage windows and syphon kills by message "
        "index, the fault generators' seed; its digest is in the report), not the counts, which vary with timing",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="give the verdict within SECONDS, sending and settling included (1..86400; default: no bound but "
        "the 10-minute settle limit); a drill cut short fails as not settled within the timeout",
    )
    parser.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help="write the report as JSON to FILE ('-': to stdout instead of the summary); fields: docs/drill.md",
    )
    parser.set_defaults(handler=run)


_FLAGS = {
    "messages": "--messages",
    "entities": "--entities",
    "backlog_queues": "--backlog-queues",
    "outages": "--outages",
    "fault_rate": "--fault-rate",
    "ambiguous_send_rate": "--ambiguous-send-rate",
    "late_lock_loss_rate": "--late-lock-loss-rate",
    "syphon_restarts": "--syphon-restarts",
    "rtt_ms": "--rtt-ms",
    "seed": "--seed",
    "timeout": "--timeout",
}


def config_from(args: argparse.Namespace) -> DrillConfig:
    from pydantic import ValidationError

    from pairedbus.drill.scenario import DrillConfig

    values = {name: getattr(args, name) for name in _FLAGS}
    try:
        return DrillConfig(**values)
    except ValidationError as exc:
        error = exc.errors()[0]
        flag = _FLAGS.get(str(error["loc"][0]), str(error["loc"][0]))
        raise UserError(f"{flag}: {error['msg'].lower()}, got {error['input']!r}") from None


def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()  # a --timeout counts from here: the drill's imports are inside it
    from pairedbus.commands.output import check_writable, console
    from pairedbus.drill import run_drill_on_fake

    config = config_from(args)
    wire = bool(getattr(args, "wire", False))
    if wire:
        from pairedbus.drill.wire import refusal

        refused = refusal(config)
        if refused is not None:
            raise UserError(f"{_FLAGS.get(refused[0], refused[0])}: {refused[1]}")
    to_stdout = args.json is not None and str(args.json) == "-"
    if not to_stdout:
        check_writable(args.json, "--json")  # before the drill: its report is never lost to a bad path
    if wire:
        from pairedbus.drill.wire import run_drill_on_wire

        report = run_drill_on_wire(config, started=started)
    else:
        report = run_drill_on_fake(config, started=started)
    text = json.dumps(report.as_dict(), indent=2)
    if to_stdout:
        print(text)
    else:
        out = console()
        out.print(verdict(report), style="bold green" if report.ok else "bold red")
        for line in summary_lines(report):
            out.print(line, highlight=False)
        if args.json is not None:
            args.json.write_text(text + "\n")
            out.print(f"Wrote {args.json}")
    if not report.ok:
        print("pairedbus: drill failed: " + "; ".join(report.problems()), file=sys.stderr)
    return 0 if report.ok else 1


def verdict(report: DrillReport) -> str:
    """One line a person reads first: PASS or FAIL and the counts that decide it; a drill that
    did not settle says so (within the timeout, when that stopped it), what is not yet delivered
    (still parked or waiting: never counted as lost) and what it left."""
    if report.unsettled:
        head = "FAIL (not settled within the timeout)" if report.timed_out else "FAIL (not settled)"
        left = f" · left {report.left_in_backlog:,} parked, {report.left_at_destinations:,} at the destinations"
    else:
        head, left = ("PASS" if report.ok else "FAIL"), ""
    planned = report.config.get("messages")
    of = f" of {planned:,}" if isinstance(planned, int) and report.sent < planned else ""
    return (
        f"{head}  sent {report.sent:,}{of} · delivered {report.delivered:,} of "
        f"{report.expected_deliveries:,} expected{_not_yet(report)} · lost {report.lost:,} · "
        f"duplicated {report.duplicates:,}{left}" + (" · over the wire" if report.world == "wire" else "")
    )


def _not_yet(report: DrillReport) -> str:
    """` · not yet delivered N (still parked: P)`, and how many wait at the destinations; or nothing."""
    if not report.not_yet_delivered:
        return ""
    where = f"still parked: {report.still_parked:,}"
    if report.still_at_destinations:
        where += f"; at the destinations: {report.still_at_destinations:,}"
    return f" · not yet delivered {report.not_yet_delivered:,} ({where})"


def summary_lines(report: DrillReport) -> list[str]:
    """A short table: each figure right-aligned beside what it counts."""
    rows: tuple[tuple[int | str, str], ...] = (
        (report.expected_deliveries, "expected deliveries: one per queue message, one per subscription for a topic's"),
        (report.dead_lettered, "dead-lettered by their own time to live (expected, not lost)"),
        (
            report.backlogged,
            f"parked in the backlog during {report.outages} outages ({report.failovers} failovers, "
            f"{report.returns_to_primary} returns to the primary)",
        ),
        (report.syphon_moved, f"moved by the syphon (killed {report.syphon_kills} times)"),
        (report.duplicates_dropped, "copies dropped by the destinations' duplicate detection"),
        (report.ambiguous_sends, "injected ambiguous sends (stored, but the client saw a timeout)"),
        (report.late_lock_losses, "injected late lock losses (lost after the next hop acknowledged)"),
        (
            report.not_yet_delivered,
            f"not yet delivered: {report.still_parked:,} still parked, {report.still_at_destinations:,} at the "
            "destinations (0 once settled; not lost)",
        ),
        (report.left_in_backlog, "left in the backlog at the end (0 once settled)"),
        (report.left_at_destinations, "left at the destinations at the end (0 once settled)"),
        (
            f"{report.wall_seconds:.1f} s",
            f"wall ({report.sending_seconds:.1f} s sending, {report.settling_seconds:.1f} s settling)",
        ),
    )
    if report.timed_out:
        rows += ((report.sends_interrupted, "sends the timeout interrupted (neither sent nor lost unless found)"),)
    rows += tuple((count, f"send failures: {kind}") for kind, count in report.send_failures_by_error.items())
    if report.calls_cut:
        rows += ((report.calls_cut, "SDK calls cut at their bound (the SDK had not returned; handler discarded)"),)
    if report.plan_digest:
        seed = report.config.get("seed")
        rows += ((report.plan_digest, f"plan of seed {seed} (same digest, same plan; the counts vary with timing)"),)
    cells = [(f"{value:,}" if isinstance(value, int) else value, label) for value, label in rows]
    width = max(len(value) for value, _ in cells)
    return [f"{value:>{width}}  {label}" for value, label in cells]
