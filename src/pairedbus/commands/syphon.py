"""`pairedbus syphon`: run the syphon as a service (what the container image starts)."""

from __future__ import annotations

import argparse
import os

from pairedbus.service.endpoints import (
    DEFAULT_PORT,
    ENV_LOG_LEVEL,
    ENV_PRIMARY,
    ENV_SECONDARY,
    ENV_SECONDARY_RESOURCE_ID,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "syphon",
        help="move parked messages from the backlog queues to the primary, as a service",
        description=(
            "Run the syphon: long-poll every backlog queue of the secondary and deliver each message "
            "to its entity in the primary. Serves /livez (liveness), /readyz (readiness; also /healthz) and "
            "/metrics; logs JSON lines on stdout; "
            "SIGTERM stops it once in-flight messages are settled. Signs in with DefaultAzureCredential "
            "(managed identity in Azure; AZURE_CLIENT_ID picks a user-assigned one)."
        ),
    )
    parser.add_argument(
        "--primary",
        metavar="FQDN",
        help=f"primary namespace host, e.g. contoso.servicebus.windows.net (default: ${ENV_PRIMARY})",
    )
    parser.add_argument(
        "--secondary",
        metavar="FQDN",
        help=f"secondary namespace host holding the backlog queues (default: ${ENV_SECONDARY})",
    )
    parser.add_argument(
        "--secondary-resource-id",
        metavar="ARM_ID",
        help="ARM id of the secondary namespace: list backlog queues through ARM, which needs only the Reader "
        f"role, instead of the data plane, which needs Manage (default: ${ENV_SECONDARY_RESOURCE_ID})",
    )
    parser.add_argument(
        "--port",
        metavar="PORT",
        help=f"port for /livez, /readyz, /healthz and /metrics (default: {DEFAULT_PORT}; 0 picks a free one)",
    )
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on (default: 0.0.0.0)")
    parser.add_argument(
        "--log-level", metavar="LEVEL", help=f"DEBUG, INFO, WARNING or ERROR (default: ${ENV_LOG_LEVEL} or INFO)"
    )
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from pairedbus.commands.syphon_options import options_from
    from pairedbus.service.syphon_process import run_service

    options = options_from(
        primary=args.primary,
        secondary=args.secondary,
        port=args.port,
        log_level=args.log_level,
        host=args.host,
        env=os.environ,
        secondary_resource_id=args.secondary_resource_id,
    )
    return run_service(options)
