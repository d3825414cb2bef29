"""The `pairedbus` command: one sub-command per module in `pairedbus.commands`.

Each command module defines `register(subparsers)`, which adds its parser and sets `handler`
to a function `(args) -> int`. Heavy imports (Pulumi, Spark, the Azure SDKs) stay inside the
handlers so that `pairedbus --help` is instant.

Exit codes, the same for every command: 0 ok; 1 the check found something (a policy violation,
drift, a failed drill); 2 a user error (bad input or flags, an unwritable output, missing
credentials or extras), printed as one line naming what to fix; 3 an internal error, printed as
one short line that points at `--debug` for the traceback; 130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Sequence
from importlib import metadata
from typing import NoReturn

from pairedbus.commands.output import bounded
from pairedbus.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USER, UserError

COMMAND_MODULES = ("plan", "drift", "syphon", "drill", "inventory", "metrics", "audit", "doctor", "emulator")
#: A user error's message is one line; anything longer is cut here rather than flood a terminal.
MAX_MESSAGE_CHARS = 500
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
    return next(
        (extra for module, extra in OPTIONAL_MODULES.items() if name == module or name.startswith(module + ".")), None
    )


def version() -> str:
    try:
        return metadata.version("pairedbus")
    except metadata.PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown"


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad flag is one line naming it (exit 2), like every other user error."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USER, f"pairedbus: error: {self.prog}: {_one_line(message)} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="pairedbus",
        description="Azure Service Bus paired namespaces for send availability.",
        epilog="Exit codes: 0 ok, 1 the check found something, 2 user error, 3 internal error.",
    )
    parser.add_argument("--version", action="version", version=f"pairedbus {version()}")
    parser.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"pairedbus.commands.{name}").register(subparsers)
    return parser


def _one_line(text: object) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= MAX_MESSAGE_CHARS else line[: MAX_MESSAGE_CHARS - 1] + "…"


def _error(message: object) -> None:
    print(f"pairedbus: error: {_one_line(message)}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except UserError as exc:
        _error(exc)
        return exc.exit_code
    except ModuleNotFoundError as exc:
        extra = _missing_extra(exc)
        if extra is None:
            return _internal(exc, args.debug)
        _error(f"'{args.command}' needs {exc.name}: pip install 'pairedbus[{extra}]'")
        return EXIT_USER
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as exc:
        problems = _stack_config_problems(exc)
        if problems is None:
            return _internal(exc, args.debug)
        for problem in bounded(problems):
            _error(problem)
        return EXIT_USER


def _stack_config_problems(exc: Exception) -> list[str] | None:
    """A stack configuration's problems, if `exc` is a StackConfigError. Looked up only once a command
    has raised, so that commands which never read a stack (the audit) do not import the stack
    configuration's models at start: 0.30 s of the CLI's 0.40 s of imports (`python -X importtime`)."""
    problems = sys.modules.get("pairedbus.iac.config.problems")
    if problems is None or not isinstance(exc, problems.StackConfigError):  # never imported: not one
        return None
    return list(exc.problems)


def _internal(exc: BaseException, debug: bool) -> int:
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    print(
        f"pairedbus: internal error: {type(exc).__name__}: {_one_line(exc)}"
        + ("" if debug else " (run again with --debug for the traceback)"),
        file=sys.stderr,
    )
    return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
