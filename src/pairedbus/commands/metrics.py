"""`pairedbus metrics export`: Azure Monitor metrics per entity as Metrics REST documents."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("metrics", help="export Service Bus metrics per entity from Azure Monitor")
    actions = parser.add_subparsers(dest="metrics_command", required=True, metavar="ACTION")
    export = actions.add_parser(
        "export", help="IncomingMessages, OutgoingMessages, IncomingRequests, ActiveMessages per entity"
    )
    export.add_argument("--subscription", required=True, metavar="ID", help="Azure subscription id")
    export.add_argument("--since", required=True, help="start: Nd, Nh or an ISO 8601 date/time (UTC)")
    export.add_argument("--until", default=None, help="end: ISO 8601 date/time (default: now)")
    export.add_argument("--granularity", default="PT1M", help="time grain, ISO 8601 (default PT1M)")
    export.add_argument("--out", required=True, metavar="DIR", help="output directory")
    export.set_defaults(handler=run_export)


def run_export(args: argparse.Namespace) -> int:
    from pairedbus.commands.checks import check_output_dir, check_subscription_id, with_azure_errors
    from pairedbus.durations import duration_timedelta
    from pairedbus.errors import UserError
    from pairedbus.exports.metrics import check_range, export_metrics, parse_since

    args.subscription = check_subscription_id("--subscription", args.subscription)
    now = datetime.now(UTC)
    since = parse_since(args.since, now=now, flag="--since")
    until = parse_since(args.until, now=now, flag="--until") if args.until else now
    check_range(since, until, now=now)
    try:
        granularity = duration_timedelta(args.granularity)
    except ValueError:
        raise UserError(
            f"--granularity {args.granularity}: expected an ISO 8601 duration such as PT1M or PT1H"
        ) from None
    check_output_dir("--out", args.out)
    from pairedbus.commands.output import Steps

    with Steps("metrics: queries") as steps:
        result = with_azure_errors(
            lambda: export_metrics(
                args.subscription, args.out, since=since, until=until, granularity=granularity, on_step=steps
            )
        )
    print(f"metrics: {result.namespaces} namespaces, {len(result.files)} documents -> {result.out}")
    return 0
