"""Write: each table as Parquet (read back once) and CSV, the quarantine as JSON lines, and the
summary built from what was written. OUT is a local directory or any URI the cluster writes."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import url2pathname

from pyspark.sql import DataFrame, Row, SparkSession, Window
from pyspark.sql import functions as F

from pairedbus.pipeline import schemas
from pairedbus.pipeline.focus import REASON_CHARGE_CONFLICT
from pairedbus.pipeline.inventory import KIND_NAMESPACE
from pairedbus.pipeline.metrics import REASON_CONFLICT
from pairedbus.pipeline.namespace_cost import COST_COLUMNS
from pairedbus.pipeline.pairing_cost import PAIRING_COLUMNS
from pairedbus.pipeline.prices import PriceTable
from pairedbus.pipeline.read import Estate
from pairedbus.pipeline.sources import MAX_QUARANTINED_PER_FILE, REFUSED_UNPARSABLE
from pairedbus.pipeline.steps import Steps
from pairedbus.pipeline.summary import AuditSummary, Bills
from pairedbus.pipeline.transform import PendingTables, Tables
from pairedbus.pipeline.violations import VIOLATION_COLUMNS

Rows = Future[list[dict[str, Any]]]
CONFLICT_COLUMNS = ("kind", "namespace", "entity", "versions", "differing", "source_files")


@dataclass(frozen=True)
class Written:
    """The small written tables, on the driver, for the summary and the report."""

    violations: list[dict[str, Any]]
    cost: list[dict[str, Any]]
    pairing: list[dict[str, Any]]
    attribution: list[dict[str, Any]] | None
    conflicts: list[dict[str, Any]]


def output_uri(out_dir: str) -> str:
    return out_dir.rstrip("/") if "://" in out_dir else Path(out_dir).resolve().as_uri()


def csv_text(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return buffer.getvalue()


def write_text(spark: SparkSession, uri: str, text: str) -> None:
    """A small driver-side file through Hadoop's FileSystem, so that OUT may be a local
    directory or any URI the cluster can write (abfss://, hdfs://) alike."""
    if uri.startswith("file:"):  # plain files locally (Hadoop's local FS adds .crc files)
        local = Path(url2pathname(urlparse(uri).path))
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_text(text, encoding="utf-8")
        return
    jvm = spark._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)  # type: ignore[union-attr]  # a running session has its JVM gateway; pyspark types _jvm Optional
    stream = path.getFileSystem(spark._jsc.hadoopConfiguration()).create(path, True)
    try:
        stream.write(bytearray(text.encode("utf-8")))
    finally:
        stream.close()


def write_table(
    spark: SparkSession, frame: DataFrame, uri: str, name: str, columns: Sequence[str], order: Sequence[str]
) -> list[dict[str, Any]]:
    """NAME.parquet (one action) and NAME.csv from its read-back rows, which it returns.

    The read-back is sorted on one partition: a table the driver collects whole is small, and a sort
    across partitions would first run a job that samples the keys and then one that shuffles."""
    table = frame.select(*columns)
    table.write.mode("overwrite").parquet(f"{uri}/{name}.parquet")
    # With the schema it was written with: Spark would otherwise run a job to read it from a footer.
    written = spark.read.schema(table.schema).parquet(f"{uri}/{name}.parquet")
    rows = [r.asDict() for r in written.coalesce(1).orderBy(*order).collect()]
    write_text(spark, f"{uri}/{name}.csv", csv_text(columns, [[r[c] for c in columns] for r in rows]))
    return rows


def differing(contents: Sequence[str]) -> list[str]:
    """The properties whose values differ between versions of one resource."""
    versions = [json.loads(c) for c in contents]
    keys = sorted({k for v in versions for k in v})
    return [k for k in keys if len({json.dumps(v.get(k), sort_keys=True) for v in versions}) > 1]


#: Quarantine reasons that are about two files together (copies that disagree), not about what one
#: file holds: they never count against a file's bound, and are all kept.
CONFLICT_REASONS = (REASON_CONFLICT, REASON_CHARGE_CONFLICT)


@dataclass(frozen=True)
class Quarantined:
    """What the quarantine's write found: the source files (as Spark names them) over the bound, each
    with the reason, for the audit to refuse and run again without; and the records written, by reason."""

    over: dict[str, str]
    by_reason: dict[str, int]


def write_quarantine(spark: SparkSession, quarantine: DataFrame, uri: str) -> Quarantined:
    """The quarantine as JSON lines, at most one record more than MAX_QUARANTINED_PER_FILE of any one
    file. Conflicts between files are all kept (CONFLICT_REASONS) and never count against a file.

    A rank filter on a window, so that Spark limits each file's rows before the shuffle
    (`spark.sql.optimizer.windowGroupLimitThreshold`, 1,000 by default): a file that would put
    millions of rows in quarantine costs its scan, not a sort and a write of all of them."""
    conflict = F.col("reason").isin(*CONFLICT_REASONS)
    # Each conflict is a group of its own (its record names its data point or charge): never limited.
    group = F.when(conflict, F.xxhash64("reason", "record"))
    per_file = Window.partitionBy("source_file", group.alias("_conflict")).orderBy("reason", "record")
    limited = quarantine.withColumn("_n", F.row_number().over(per_file)).where(
        F.col("_n") <= MAX_QUARANTINED_PER_FILE + 1
    )
    limited.drop("_n").coalesce(1).write.mode("overwrite").json(f"{uri}/quarantine")
    # One read of what was written, counted by file and reason: the bound's check and the summary's
    # counts both come from these (a file-by-reason table, small), in one job instead of two.
    written = spark.read.schema(schemas.QUARANTINE).json(f"{uri}/quarantine").coalesce(1)
    counted = written.groupBy("source_file", "reason").count().collect()
    by_reason: dict[str, int] = {}
    by_file: dict[str, dict[str, int]] = {}
    for row in counted:
        by_reason[row["reason"]] = by_reason.get(row["reason"], 0) + row["count"]
        if row["reason"] not in CONFLICT_REASONS:
            by_file.setdefault(row["source_file"], {})[row["reason"]] = row["count"]
    over = {
        source: f"{REFUSED_UNPARSABLE}: more than {MAX_QUARANTINED_PER_FILE:,} of its records "
        f"quarantined (mostly: {_mostly(reasons)})"
        for source, reasons in by_file.items()
        if sum(reasons.values()) > MAX_QUARANTINED_PER_FILE
    }
    return Quarantined(over, by_reason)


def _mostly(reasons: dict[str, int]) -> str:
    """The reason with the most records (of equal counts, the first by name)."""
    return min(reasons, key=lambda reason: (-reasons[reason], reason))


def write_tables(spark: SparkSession, tables: Tables | PendingTables, uri: str, steps: Steps | None = None) -> Written:
    """Every table but the quarantine (`write_quarantine`, written first), each in a step of its own:
    their writes and read-backs are independent, and each starts as soon as its table is ready."""
    if steps is None:
        with Steps(spark) as own:
            return write_tables(spark, tables, uri, own)
    from pairedbus.pipeline.focus import ATTRIBUTION_COLUMNS

    pending = tables if isinstance(tables, PendingTables) else PendingTables.of(tables)

    def table(frame: Future[DataFrame], name: str, columns: Sequence[str], order: Sequence[str]) -> Rows:
        return steps.start(lambda: write_table(spark, frame.result(), uri, name, columns, order))

    violations = table(pending.violations, "violations", VIOLATION_COLUMNS, ("namespace", "entity", "rule", "property"))
    cost = table(pending.cost, "cost", COST_COLUMNS, ("namespace", "date"))
    pairing = table(pending.pairing, "pairing", PAIRING_COLUMNS, ("pair", "primary", "date"))

    def attribution() -> list[dict[str, Any]] | None:
        frame = pending.attribution.result()
        if frame is None:
            return None
        return write_table(spark, frame, uri, "attribution", ATTRIBUTION_COLUMNS, ("pair", "date", "currency"))

    def conflicts() -> list[dict[str, Any]]:
        found = [
            {**r.asDict(), "differing": " ".join(differing(r["contents"]))}
            for r in pending.conflicts.result().coalesce(1).orderBy(*CONFLICT_COLUMNS[:3]).collect()
        ]
        text = csv_text(CONFLICT_COLUMNS, [[c[k] for k in CONFLICT_COLUMNS] for c in found])
        write_text(spark, f"{uri}/conflicts.csv", text)
        return found

    attributed, conflicting = steps.start(attribution), steps.start(conflicts)
    return Written(violations.result(), cost.result(), pairing.result(), attributed.result(), conflicting.result())


def bills_by_currency(attribution: Sequence[dict[str, Any]]) -> dict[str, Bills]:
    """Billed and effective per billing currency over the attribution rows: never across currencies."""
    sums: dict[str, list[float]] = {}
    for row in attribution:
        if row["currency"] is None:
            continue  # a pair-day without any bill
        billed, effective = sums.setdefault(row["currency"], [0.0, 0.0])
        sums[row["currency"]] = [billed + (row["actual_billed"] or 0.0), effective + (row["actual_effective"] or 0.0)]
    return {c: Bills(billed=round(b, 2), effective=round(e, 2)) for c, (b, e) in sorted(sums.items())}


def summarise(
    estate: Estate,
    tables: Tables,
    written: Written,
    quarantined: Quarantined,
    prices: PriceTable,
    *,
    clients: int,
    out: str,
    since: str | None = None,
    until: str | None = None,
    counts: Row | None = None,
) -> AuditSummary:
    """`counts`: `count_records(estate, tables)`, when already counted (in a step of its own)."""
    by_reason = quarantined.by_reason
    counts = counts if counts is not None else count_records(estate, tables)
    cost = written.cost
    projections = {(p["primary"], p["secondary"]): p["monthly_projection_usd"] for p in written.pairing}
    actual, bills = _actual_bills(written)
    return AuditSummary(
        # The cost table has every namespace of the inventory and of the metrics, when any day is covered.
        namespaces=len({r["namespace"] for r in cost}) if cost else counts["namespaces"],
        entities=counts["entities"],
        pairs=len(projections),
        violations=len(written.violations),
        quarantined=sum(by_reason.values()),
        days=len({r["date"] for r in cost}),
        estimated_cost_usd=round(sum(r["estimated_cost_usd"] or 0.0 for r in cost), 2),
        pairing_cost_usd=round(sum(p["total_usd"] for p in written.pairing), 2),
        pairing_monthly_projection_usd=round(sum(projections.values()), 2),
        actual_pairing_cost_usd=actual,
        bills=bills,
        violations_by_rule=_violations_by_rule(written.violations),
        quarantined_by_reason=dict(sorted(by_reason.items())),
        files_read=_files_read(estate),
        files_refused=_files_refused(estate),
        duplicates_dropped=_duplicates_dropped(estate, counts),
        conflicting_resources=len(written.conflicts),
        namespaces_without_price=sorted({r["namespace"] for r in cost if r["estimated_cost_usd"] is None}),
        prices_source=prices.source,
        prices_as_of=prices.as_of,
        clients=clients,
        since=since,
        until=until,
        out=out,
    )


def count_records(estate: Estate, tables: Tables | PendingTables) -> Row:
    """Distinct entities (by case-insensitive name) and namespaces, and the duplicate records dropped per
    source: aggregates of small tables (each on one partition, where each exchange, for the count_distinct
    two, would be a job of its own), joined as one row, so that they are counted in one job, not three."""
    resources = tables.resources if isinstance(tables, Tables) else tables.resources.result()
    grains = tables.grains if isinstance(tables, Tables) else tables.grains.result()
    inventory = resources.coalesce(1).agg(
        F.count_distinct(
            F.when(F.col("kind") != KIND_NAMESPACE, F.concat_ws(":", "kind", "namespace", F.lower("entity")))
        ).alias("entities"),
        F.count_distinct(F.when(F.col("kind") == KIND_NAMESPACE, F.col("namespace"))).alias("namespaces"),
        F.sum("duplicates").alias("duplicates"),
    )
    has_duplicates = "duplicates" in grains.columns
    metrics = grains.coalesce(1).agg((F.sum("duplicates") if has_duplicates else F.lit(0)).alias("metric_duplicates"))
    counts = inventory.crossJoin(metrics)
    if estate.charges is not None:
        counts = counts.crossJoin(estate.charges.coalesce(1).agg(F.sum("duplicates").alias("charge_duplicates")))
    return _one_row(counts)


def _duplicates_dropped(estate: Estate, counts: Row) -> dict[str, int]:
    """Duplicate records dropped per source (costs only when charges were read)."""
    duplicates = {"inventory": int(counts["duplicates"] or 0), "metrics": int(counts["metric_duplicates"] or 0)}
    if estate.charges is not None:
        duplicates["costs"] = int(counts["charge_duplicates"] or 0)
    return duplicates


def _actual_bills(written: Written) -> tuple[float | None, dict[str, Bills]]:
    """(the pairs' effective cost in USD, the bills per currency); (None, {}) without an attribution."""
    if written.attribution is None:
        return None, {}
    bills = bills_by_currency(written.attribution)
    return (bills["USD"].effective if "USD" in bills else 0.0), bills


def _violations_by_rule(violations: Sequence[dict[str, Any]]) -> dict[str, int]:
    by_rule: dict[str, int] = {}
    for r in violations:
        by_rule[r["rule"]] = by_rule.get(r["rule"], 0) + 1
    return dict(sorted(by_rule.items()))


def _files_read(estate: Estate) -> dict[str, dict[str, int]]:
    """Per source, how many files of each format were read."""
    return {
        name: {fmt: len(paths) for fmt, paths in sorted(files.by_format.items())}
        for name, files in estate.files.items()
    }


def _files_refused(estate: Estate) -> dict[str, str]:
    """Every file refused, with why."""
    refused = {uri: reason for files in estate.files.values() for uri, reason in files.refused.items()}
    return dict(sorted(refused.items()))


def _one_row(aggregate: DataFrame) -> Row:
    """The row of an aggregate without grouping: Spark always returns exactly one."""
    row = aggregate.first()
    assert row is not None, "an aggregate without grouping has one row"
    return row
