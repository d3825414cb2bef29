"""`pairedbus inventory export`: a subscription's Service Bus resources as ARM-shaped JSON Lines."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("inventory", help="export the Service Bus inventory of a subscription")
    actions = parser.add_subparsers(dest="inventory_command", required=True, metavar="ACTION")
    export = actions.add_parser(
        "export",
        help="namespaces, queues, topics, subscriptions (ARM) and backlog queues (data plane) as JSON Lines",
    )
    export.add_argument("--subscription", required=True, metavar="ID", help="Azure subscription id")
    export.add_argument("--out", required=True, metavar="DIR", help="output directory")
    export.set_defaults(handler=run_export)


def run_export(args: argparse.Namespace) -> int:
    from pairedbus.commands.checks import check_output_dir, check_subscription_id, with_azure_errors

    args.subscription = check_subscription_id("--subscription", args.subscription)
    check_output_dir("--out", args.out)
    from pairedbus.commands.output import Steps
    from pairedbus.exports.inventory import export_inventory

    with Steps("inventory: namespaces") as steps:
        result = with_azure_errors(lambda: export_inventory(args.subscription, args.out, on_step=steps))
    print(
        f"inventory: {result.namespaces} namespaces, {result.queues} queues, {result.topics} topics, "
        f"{result.subscriptions} subscriptions, {result.backlog_queues} backlog queues -> {result.path}"
    )
    return 1 if result.data_plane_failures else 0
