"""`pairedbus audit`: the estate-wide audit (violations, quarantine, cost of pairing) on Spark."""

from __future__ import annotations

import argparse

from pairedbus.pipeline.audit_job import add_arguments, run


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="audit an exported estate on Spark: rule violations, quarantine, cost of pairing",
        description="Audit an exported estate (inventory + metrics) on Spark: rule violations, "
        "malformed records in quarantine, and the cost of pairing per namespace per day.",
    )
    add_arguments(parser)
    parser.set_defaults(handler=run)
