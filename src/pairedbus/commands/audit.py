"""`pairedbus audit`: the estate-wide audit (violations, quarantine, cost of pairing) on Spark.

Also the file `spark-submit` runs on a cluster (docs/audit.md):

    spark-submit --master spark://host:7077 --py-files pairedbus.zip \\
        src/pairedbus/commands/audit.py --inventory URI --metrics URI --out URI

Every argument is checked before Spark starts; a bad one is one line naming it, exit 2. A file
that cannot be read is refused by name and counted, and the audit goes on; if Spark still fails,
the failure is one line (exit 3), and Spark's own log and the Java stack only show with `--debug`
(`pairedbus --debug audit ...`, or `--debug` after the arguments under spark-submit).
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import threading
from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING

from pairedbus.errors import EXIT_INTERNAL, DateRangeError, MasterError, OutputError, UserError

if TYPE_CHECKING:  # the pipeline is imported once every check passed
    from pairedbus.pipeline.prices import PriceTable

#: Spark master URLs (https://spark.apache.org/docs/latest/submitting-applications.html#master-urls).
MASTER_URL = re.compile(
    r"^(local(\[(\*|[1-9]\d*)(,[1-9]\d*)?\])?|local-cluster\[\d+,\d+,\d+\]"
    r"|spark://[^\s/:]+(:\d{1,5})?(,[^\s/:]+(:\d{1,5})?)*|yarn|k8s://\S+|mesos://\S+)$"
)
#: Modules the audit's import thread would otherwise be first to import that register fork hooks
#: (`os.register_at_fork`: concurrent.futures.thread takes a lock before a fork and releases it after).
#: Registered by that thread while the main thread forks the JVM, a release ran without its take and
#: CPython printed "RuntimeError: release unlocked lock" on the audit's stderr (CI, 2026-11-28); so the
#: main thread imports them before it starts the thread.
FORK_HOOKED = ("concurrent.futures.thread",)
#: Output URI schemes Hadoop writes with the connectors Spark distributions ship.
OUTPUT_SCHEMES = ("file", "hdfs", "abfs", "abfss", "wasb", "wasbs", "s3a", "gs", "viewfs")
#: Azure Monitor keeps platform metrics 93 days
#: (https://learn.microsoft.com/azure/azure-monitor/essentials/data-platform-metrics#retention-of-metrics);
#: billing exports go back further, so the audit accepts any date after Azure existed.
EARLIEST = date(2008, 1, 1)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--inventory", required=True, metavar="DIR", help="inventory directory (JSON, JSONL, CSV, Parquet)"
    )
    parser.add_argument(
        "--metrics", required=True, metavar="DIR", help="metrics directory (REST documents or flat rows)"
    )
    parser.add_argument(
        "--costs", default=None, metavar="DIR", help="Cost Management exports in FOCUS 1.0 (CSV, CSV.gz, Parquet)"
    )
    parser.add_argument(
        "--out", required=True, metavar="DIR", help="output directory, or a URI every node writes (abfss://, hdfs://)"
    )
    parser.add_argument("--master", default=None, help="Spark master URL (default local[*], or spark-submit's)")
    parser.add_argument("--prices", default=None, metavar="FILE", help="price table JSON (default: bundled)")
    parser.add_argument(
        "--clients", type=int, default=1, metavar="N", help="sender clients per primary entity, for the ping estimate"
    )
    parser.add_argument("--since", default=None, metavar="DATE", help="first UTC day of metrics to audit (YYYY-MM-DD)")
    parser.add_argument("--until", default=None, metavar="DATE", help="last UTC day of metrics to audit (YYYY-MM-DD)")
    parser.add_argument(
        "--debug",
        action="store_true",
        # Not set when absent, so `pairedbus --debug audit ...` (the top-level flag) is not overridden.
        default=argparse.SUPPRESS,
        help="show Spark's log and the Java stack of a failure (otherwise a failure is one line)",
    )
    parser.add_argument(
        "--progress",
        choices=("auto", "always", "never"),
        default="auto",
        help="show stages and Spark's stage progress (auto: when stderr is a terminal)",
    )


def parse_day(flag: str, text: str | None) -> date | None:
    if text is None:
        return None
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise DateRangeError(f"{flag} {text}: expected a date YYYY-MM-DD") from None
    if not EARLIEST <= day <= date(2100, 1, 1):
        raise DateRangeError(f"{flag} {text}: expected a date between {EARLIEST} and 2100-01-01")
    return day


def check_master(master: str | None) -> None:
    if master is not None and not MASTER_URL.match(master):
        raise MasterError(f"--master {master}: not a Spark master URL (local[N], spark://HOST:PORT, yarn, k8s://URL)")


def check_output(out: str) -> None:
    """A local OUT must be a directory we can create and write; a URI must have a scheme Hadoop writes."""
    if "://" in out:
        scheme = out.split("://", 1)[0].lower()
        if scheme not in OUTPUT_SCHEMES:
            raise OutputError(f"--out {out}: unknown scheme {scheme}:// (expected one of {', '.join(OUTPUT_SCHEMES)})")
        if scheme != "file":
            return
        out = out.split("://", 1)[1]
    from pairedbus.commands.checks import check_output_dir

    check_output_dir("--out", out)


def check_inputs(args: argparse.Namespace) -> None:
    from pairedbus.errors import NoDataError
    from pairedbus.pipeline.sources import check_input_dir, list_local

    check_input_dir(args.inventory, "--inventory")
    check_input_dir(args.metrics, "--metrics")
    if args.costs is not None:
        check_input_dir(args.costs, "--costs")
    if args.clients < 1:
        raise UserError(f"--clients {args.clients}: expected a whole number >= 1")
    local = [d for d in (args.inventory, args.metrics) if "://" not in d]
    if len(local) == 2 and not any(list_local(d, "").readable for d in local):
        raise NoDataError(
            f"--inventory {args.inventory}, --metrics {args.metrics}: no JSON, JSONL, CSV or Parquet file (empty estate)"
        )


class AuditFailedError(Exception):
    """Spark failed: one line (the first of the Java exception's message); the stack with --debug."""


def progress_enabled(mode: str) -> bool:
    return mode == "always" or (mode == "auto" and sys.stderr.isatty())


def _load_prices(path: str | None) -> PriceTable:
    from pairedbus.pipeline.prices import load_prices

    return load_prices(path)


def run(args: argparse.Namespace) -> int:
    """The CLI handler and the spark-submit entry share this; no Spark before every check passed.

    Only a driver that lacks the dependencies (they come with the job: docs/audit.md) reads the
    price table after Spark started, from the shipped packages."""
    check_master(args.master)
    since, until = parse_day("--since", args.since), parse_day("--until", args.until)
    if since and until and since > until:
        raise DateRangeError(f"--since {since} --until {until}: the range ends before it starts")
    check_inputs(args)
    check_output(args.out)
    try:
        prices = _load_prices(args.prices)
    except ImportError:
        prices = None  # a bare driver: the shipped dependencies arrive with the SparkContext
    show = progress_enabled(args.progress)
    debug = bool(getattr(args, "debug", False))

    from pairedbus.pipeline.sources import first_line, is_spark_error, local_input_bytes
    from pairedbus.pipeline.spark_session import (
        build_session,
        cache_directory,
        driver_java_options,
        runs_locally,
        shared_classes,
        use_shipped_dependencies,
    )

    # The JVM takes seconds to start, with this process waiting on it: import the audit meanwhile. Not
    # what registers fork hooks (FORK_HOOKED): see there.
    for module in FORK_HOOKED:
        importlib.import_module(module)
    importing = threading.Thread(target=_import_audit_job, name="import-audit-job", daemon=True)
    importing.start()
    # A local driver JVM maps Spark's classes from an archive the first run writes (spark_session.py).
    sharing = shared_classes(cache_directory()) if runs_locally(args.master) else None
    inputs = [d for d in (args.inventory, args.metrics, args.costs) if d is not None]
    spark = build_session(
        args.master,
        progress=show,
        quiet=not debug,
        shared_classes=sharing,
        java_options=driver_java_options(local_input_bytes(inputs)),
    )
    importing.join()
    try:
        if prices is None:
            use_shipped_dependencies(spark)
            prices = _load_prices(args.prices)
        from pairedbus.pipeline.audit_job import STAGES, run_audit

        summary = run_audit(
            spark,
            args.inventory,
            args.metrics,
            args.out,
            prices,
            clients=args.clients,
            costs_dir=args.costs,
            since=since,
            until=until,
            progress=(lambda name: _show_stage(name, STAGES)) if show else None,
        )
    except (UserError, KeyboardInterrupt):
        raise
    except Exception as exc:
        if debug or not is_spark_error(exc):
            raise
        raise AuditFailedError(f"Spark failed: {first_line(exc)}") from None
    finally:
        spark.stop()
        if sharing is not None:
            sharing.finish()
    print(summary.line())
    return 0


def _import_audit_job() -> None:
    """Imports the pipeline's modules (pydantic, Jinja2 and their own) ahead of need. Any failure is left
    to the import after the session, which raises it in the main thread: on a bare driver the modules
    come with the SparkContext (use_shipped_dependencies)."""
    try:
        importlib.import_module("pairedbus.pipeline.audit_job")
    except Exception:  # raised again, where it can be reported, by the import that needs it
        pass


def _show_stage(name: str, stages: Sequence[str]) -> None:
    print(f"audit: [{stages.index(name) + 1}/{len(stages)}] {name}", file=sys.stderr, flush=True)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="audit an exported estate on Spark: rule violations, quarantine, cost of pairing per pair",
        description="Audit an exported estate (inventory + metrics, optionally FOCUS cost exports) on Spark: "
        "rule violations, malformed records in quarantine, and the cost of pairing per pair per day.",
    )
    add_arguments(parser)
    parser.set_defaults(handler=run)


def main(argv: Sequence[str] | None = None) -> int:
    """The spark-submit entry point: the same arguments as `pairedbus audit`."""
    parser = argparse.ArgumentParser(prog="pairedbus-audit", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except UserError as exc:
        print(f"pairedbus: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except AuditFailedError as exc:
        print(f"pairedbus: error: {exc}", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
