"""`pairedbus drill`: an end-to-end failover drill on the Service Bus fake (see pairedbus.drill)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pairedbus.errors import UserError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "drill",
        help="run a failover drill on the in-process Service Bus fake and account for every message",
        description=(
            "Send messages through failover senders while the primary has outages, random faults hit "
            "every operation and the syphon is killed mid-drain; then check that every message was "
            "delivered exactly once, unchanged, or dead-lettered because its time to live ran out. "
            "Exit 1 if anything was lost, duplicated or altered."
        ),
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
    parser.add_argument("--seed", type=int, default=1, metavar="S", help="random seed (default 1)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the report as JSON to FILE")
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
}


def config_from(args: argparse.Namespace) -> object:
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
    from pairedbus.drill import run_drill_on_fake

    config = config_from(args)
    if args.json is not None and not args.json.parent.exists():
        raise UserError(f"--json: directory {str(args.json.parent)!r} does not exist")
    report = run_drill_on_fake(config)  # type: ignore[arg-type]
    text = json.dumps(report.as_dict(), indent=2)
    if args.json is not None:
        args.json.write_text(text + "\n")
    print(text)
    if not report.ok:
        print("pairedbus: drill failed: " + "; ".join(report.problems()), file=sys.stderr)
    return 0 if report.ok else 1
