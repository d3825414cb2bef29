"""`pairedbus audit`: the estate audit as a Spark job.

Runs from the CLI (`pairedbus audit ...`) or as a Spark application
(`spark-submit src/pairedbus/pipeline/audit_job.py --inventory ... --metrics ... --out ...`):
both go through `main`. Outputs under OUT: violations.csv/.parquet, cost.csv/.parquet,
quarantine/ (JSON lines with the reason), report.html and summary.json.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse
from urllib.request import url2pathname

from pydantic import BaseModel

from pairedbus.errors import UserError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from pairedbus.pipeline.prices import PriceTable


class AuditSummary(BaseModel):
    namespaces: int
    entities: int
    violations: int
    quarantined: int
    days: int
    estimated_cost_usd: float
    violations_by_rule: dict[str, int]
    quarantined_by_reason: dict[str, int]
    namespaces_without_price: list[str]
    prices_source: str
    prices_as_of: str
    clients: int
    out: str

    def line(self) -> str:
        return (
            f"audit: {self.namespaces} namespaces, {self.entities} entities, {self.violations} violations, "
            f"{self.quarantined} quarantined, {self.days} days, estimated cost {self.estimated_cost_usd:.2f} USD"
            f" -> {self.out}"
        )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--inventory", required=True, metavar="DIR", help="inventory JSON (Lines) directory")
    parser.add_argument("--metrics", required=True, metavar="DIR", help="Metrics REST response documents directory")
    parser.add_argument("--out", required=True, metavar="DIR", help="output directory or URI (abfss://, hdfs://)")
    parser.add_argument("--master", default=None, help="Spark master URL (default local[*], or spark-submit's)")
    parser.add_argument("--prices", default=None, metavar="FILE", help="price table JSON (default: bundled)")
    parser.add_argument(
        "--clients", type=int, default=1, metavar="N", help="sender clients per primary entity, for the ping estimate"
    )


def _validate(args: argparse.Namespace) -> None:
    from pairedbus.pipeline.sources import check_input_dir

    check_input_dir(args.inventory, "--inventory")
    check_input_dir(args.metrics, "--metrics")
    if args.clients < 1:
        raise UserError(f"--clients {args.clients}: expected a whole number >= 1")


def _csv_text(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return buffer.getvalue()


def _write_text(spark: SparkSession, uri: str, text: str) -> None:
    """Write a small driver-side file through Hadoop's FileSystem, so that OUT may be a local
    directory or any URI the cluster can write (abfss://, hdfs://) alike."""
    if uri.startswith("file:"):  # plain files locally (Hadoop's local FS adds .crc files)
        local = Path(url2pathname(urlparse(uri).path))
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_text(text, encoding="utf-8")
        return
    jvm = spark._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    stream = path.getFileSystem(spark._jsc.hadoopConfiguration()).create(path, True)
    try:
        stream.write(bytearray(text.encode("utf-8")))
    finally:
        stream.close()


def output_uri(out_dir: str) -> str:
    return out_dir.rstrip("/") if "://" in out_dir else Path(out_dir).resolve().as_uri()


def run_audit(
    spark: SparkSession, inventory_dir: str, metrics_dir: str, out_dir: str, prices: PriceTable, *, clients: int = 1
) -> AuditSummary:
    from pyspark.sql import functions as F

    from pairedbus.pipeline import schemas
    from pairedbus.pipeline.cost import COST_COLUMNS, cost_by_namespace_day, estate_by_namespace
    from pairedbus.pipeline.inventory import KIND_NAMESPACE, read_inventory
    from pairedbus.pipeline.metrics import read_metrics
    from pairedbus.pipeline.report import render
    from pairedbus.pipeline.violations import VIOLATION_COLUMNS, violations_frame

    uri = output_uri(out_dir)

    inventory = read_inventory(spark, inventory_dir)
    resources = inventory.resources.cache()
    violations, rejected = violations_frame(spark, resources)
    estate = estate_by_namespace(resources).cache()
    metrics = read_metrics(spark, metrics_dir)

    quarantine = inventory.quarantine.unionByName(metrics.quarantine).unionByName(rejected)
    quarantine.coalesce(1).write.mode("overwrite").json(f"{uri}/quarantine")
    quarantined = spark.read.schema(schemas.QUARANTINE).json(f"{uri}/quarantine")
    by_reason = {r["reason"]: r["count"] for r in quarantined.groupBy("reason").count().collect()}

    violations.write.mode("overwrite").parquet(f"{uri}/violations.parquet")
    found = spark.read.parquet(f"{uri}/violations.parquet").orderBy("namespace", "entity", "rule", "property").collect()
    _write_text(
        spark, f"{uri}/violations.csv", _csv_text(VIOLATION_COLUMNS, [[r[c] for c in VIOLATION_COLUMNS] for r in found])
    )

    # The metric rows come from the cached documents; the aggregation reads them once (see cost.py)
    # and the CSV, the report and the summary read its small written result.
    cost_by_namespace_day(metrics.rows, estate, prices, clients=clients).write.mode("overwrite").parquet(
        f"{uri}/cost.parquet"
    )
    cost_rows = spark.read.parquet(f"{uri}/cost.parquet").orderBy("namespace", "date").collect()
    _write_text(spark, f"{uri}/cost.csv", _csv_text(COST_COLUMNS, [[r[c] for c in COST_COLUMNS] for r in cost_rows]))

    entities = resources.where(F.col("kind") != KIND_NAMESPACE).count()
    by_rule: dict[str, int] = {}
    for r in found:
        by_rule[r["rule"]] = by_rule.get(r["rule"], 0) + 1
    summary = AuditSummary(
        namespaces=len({r["namespace"] for r in cost_rows} | {r["namespace"] for r in estate.collect()}),
        entities=entities,
        violations=len(found),
        quarantined=sum(by_reason.values()),
        days=len({r["date"] for r in cost_rows}),
        estimated_cost_usd=round(sum(r["estimated_cost_usd"] or 0.0 for r in cost_rows), 2),
        violations_by_rule=dict(sorted(by_rule.items())),
        quarantined_by_reason=dict(sorted(by_reason.items())),
        namespaces_without_price=sorted({r["namespace"] for r in cost_rows if r["estimated_cost_usd"] is None}),
        prices_source=prices.source,
        prices_as_of=prices.as_of,
        clients=clients,
        out=out_dir,
    )
    _write_text(spark, f"{uri}/summary.json", summary.model_dump_json(indent=2) + "\n")
    _write_text(
        spark, f"{uri}/report.html", render(summary, [r.asDict() for r in found], [r.asDict() for r in cost_rows])
    )
    return summary


def run(args: argparse.Namespace) -> int:
    """The CLI handler and the spark-submit entry share this."""
    from pairedbus.pipeline.prices import load_prices

    _validate(args)
    prices = load_prices(args.prices)
    from pairedbus.pipeline.session import build_session

    spark = build_session(args.master)
    try:
        summary = run_audit(spark, args.inventory, args.metrics, args.out, prices, clients=args.clients)
    finally:
        spark.stop()
    print(summary.line())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pairedbus-audit", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except UserError as exc:
        print(f"pairedbus: error: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
