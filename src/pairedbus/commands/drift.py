"""`pairedbus drift --secondary FQDN --primary-name NAME`: live backlog queues against the table."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pairedbus import contract
from pairedbus.errors import UserError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "drift",
        help="compare the live backlog queues of a secondary namespace with the backlog table",
        description=f"List {contract.backlog_queue_prefix('NAME')}* in the secondary through the data plane (signing in "
        "with DefaultAzureCredential) and report every property off the table and every index below --count "
        "that is missing. Queues beyond --count are allowed extras (a lowered count retains them), reported as "
        "information. Exit 1 on drift, 0 when clean.",
    )
    parser.add_argument(
        "--secondary", required=True, metavar="FQDN", help="e.g. contoso-backlog.servicebus.windows.net"
    )
    parser.add_argument(
        "--primary-name", required=True, metavar="NAME", help="the primary namespace: the queues' prefix"
    )
    parser.add_argument(
        "--count",
        type=int,
        default=contract.DEFAULT_BACKLOG_QUEUE_COUNT,
        help=f"configured backlogQueueCount (default {contract.DEFAULT_BACKLOG_QUEUE_COUNT})",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the report as JSON")
    parser.set_defaults(handler=run)


def _validate(args: argparse.Namespace) -> None:
    if "." not in args.secondary or "/" in args.secondary or ":" in args.secondary:
        raise UserError(
            f"--secondary: expected a fully qualified namespace such as "
            f"{contract.service_bus_fqdn('NAME')}, got {args.secondary!r}"
        )
    if not contract.is_namespace_name(args.primary_name):
        raise UserError(
            f"--primary-name: expected a namespace name, not an FQDN ({contract.NAMESPACE_NAME_RULE}), "
            f"got {args.primary_name!r}"
        )
    if not contract.MIN_BACKLOG_QUEUE_COUNT <= args.count <= contract.MAX_BACKLOG_QUEUE_COUNT:
        bounds = f"{contract.MIN_BACKLOG_QUEUE_COUNT}..{contract.MAX_BACKLOG_QUEUE_COUNT}"
        raise UserError(f"--count: expected {bounds}, got {args.count}")


def run(args: argparse.Namespace) -> int:
    from pairedbus.commands.output import check_writable

    _validate(args)
    # Before the listing: an unwritable report must not fail after it and hide drift's own exit code.
    check_writable(args.json, "--json")
    from azure.core.exceptions import AzureError

    from pairedbus.iac.drift import check_live_backlog

    try:
        report = check_live_backlog(args.secondary, args.primary_name, args.count)
    except AzureError as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(f"--secondary {args.secondary}: {type(exc).__name__}: {first_line}") from None
    for line in report.lines():
        print(line)
    if args.json:
        args.json.write_text(json.dumps(report.to_json(), indent=2) + "\n")
        print(f"Wrote {args.json}", file=sys.stderr)
    return 1 if report.drifted else 0
