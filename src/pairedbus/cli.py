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
from pairedbus.iac.config import StackConfigError

COMMAND_MODULES = ("plan", "drift", "syphon", "drill", "inventory", "metrics", "audit")
#: Top-level module of an optional dependency -> the extra that installs it.
OPTIONAL_MODULES = {
    "pulumi": "iac",
    "pulumi_azure_native": "iac",
    "pulumi_policy": "iac",
    "pyspark": "audit",
    "azure.monitor": "audit",
}


def _missing_extra(exc: ModuleNotFoundError) -> str | None:
    name = exc.name or ""
    return next((extra for module, extra in OPTIONAL_MODULES.items() if name == module or name.startswith(module + ".")), None)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pairedbus", description="Azure Service Bus paired namespaces for send availability."
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"pairedbus.commands.{name}").register(subparsers)
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
    except ModuleNotFoundError as exc:
        extra = _missing_extra(exc)
        if extra is None:
            raise
        print(f"pairedbus: error: '{args.command}' needs {exc.name}: pip install 'pairedbus[{extra}]'", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
