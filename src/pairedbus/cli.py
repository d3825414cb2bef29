"""The `pairedbus` command: one sub-command per module in `pairedbus.commands`.

Each command module defines `register(subparsers)`, which adds its parser and sets `handler`
to a function `(args) -> int`. Heavy imports (Pulumi, Spark, the Azure SDKs) stay inside the
handlers so that `pairedbus --help` is instant.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from pairedbus.errors import UserError
from pairedbus.stack_config import StackConfigError

COMMAND_MODULES = ("plan", "drift", "syphon", "drill", "inventory", "metrics", "audit")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pairedbus", description="Azure Service Bus paired namespaces for send availability."
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"pairedbus.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"pairedbus.commands.{name}":
                raise
            continue  # a command not built yet
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except StackConfigError as exc:
        for problem in exc.problems:
            print(f"pairedbus: error: {problem}", file=sys.stderr)
        return 2
    except UserError as exc:
        print(f"pairedbus: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
