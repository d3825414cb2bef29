"""The estate audit as one Spark job: read -> transform -> write -> render.

`run_audit` is what `pairedbus audit` (commands/audit.py, which parses and checks the arguments)
and `spark-submit src/pairedbus/commands/audit.py ...` both call; it leaves no cached frame or checkpoint behind. Outputs under OUT:
violations, cost (per namespace and day), pairing (per pair and day), attribution (with --costs)
as .csv and .parquet; conflicts.csv; quarantine/ (JSON lines with the reason); summary.json and
report.html.

A file that cannot be read is refused by name and counted, and the run goes on: the readers check
every file against the columns the audit reads before reading it (sources.py); a file that only
fails once its data is decoded (a Parquet file with a sound footer and broken pages) fails the job,
and then every input file is read through alone, the ones that fail are refused, and the audit runs
once more without them. A file with more than sources.MAX_QUARANTINED_PER_FILE records in quarantine
is refused as unparsable likewise (write.write_quarantine finds it before any table is written), and
the audit runs again without it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import cast

from pyspark.sql import SparkSession

from pairedbus.errors import NoDataError
from pairedbus.pipeline.prices import PriceTable
from pairedbus.pipeline.read import Estate, read_estate
from pairedbus.pipeline.report import report_html
from pairedbus.pipeline.sources import input_bytes, is_spark_error, list_files, same_file, unreadable_in_full
from pairedbus.pipeline.spark_session import small_estate_conf
from pairedbus.pipeline.steps import Steps
from pairedbus.pipeline.summary import AuditSummary
from pairedbus.pipeline.transform import start_transform
from pairedbus.pipeline.write import (
    count_records,
    output_uri,
    summarise,
    write_quarantine,
    write_tables,
    write_text,
)

#: The stages, in order, as the progress display names them.
STAGES = ("read", "transform", "write", "render")

Progress = Callable[[str], None]
#: The local property Spark shows as a job's description (`SparkContext.setJobDescription`).
JOB_DESCRIPTION = "spark.job.description"


@dataclass(frozen=True)
class OverQuarantined:
    """A run that stopped before writing its tables: these files (as listed, with the reason) put more
    records in quarantine than the bound allows, and are refused in the next run."""

    files: dict[str, str]


def run_audit(
    spark: SparkSession,
    inventory_dir: str,
    metrics_dir: str,
    out_dir: str,
    prices: PriceTable,
    *,
    clients: int = 1,
    costs_dir: str | None = None,
    since: date | None = None,
    until: date | None = None,
    progress: Progress | None = None,
) -> AuditSummary:
    directories = {"inventory": inventory_dir, "metrics": metrics_dir, "costs": costs_dir}
    sized = small_estate_conf(input_bytes(spark, [d for d in directories.values() if d is not None]))
    run = functools.partial(
        _run,
        spark,
        inventory_dir,
        metrics_dir,
        out_dir,
        prices,
        clients=clients,
        costs_dir=costs_dir,
        since=since,
        until=until,
        progress=progress,
        small=bool(sized),
    )
    persisted_before = _persisted(spark)
    description = spark.sparkContext.getLocalProperty(JOB_DESCRIPTION)
    session_conf = {key: spark.conf.get(key) for key in sized}
    for key, value in sized.items():
        spark.conf.set(key, value)
    try:
        try:
            return _until_settled(run, {})
        except Exception as exc:
            if not is_spark_error(exc):
                raise
            unreadable: dict[str, str] = {}
            for name, directory in directories.items():
                if directory is not None:
                    unreadable.update(unreadable_in_full(spark, list_files(spark, directory, name)))
            if not unreadable:
                raise  # not a file's fault
            return _until_settled(run, unreadable)
    finally:
        for key, before in session_conf.items():  # a shared session plans the next caller's queries as before
            if before is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, before)
        # None removes the property: later jobs of a shared session are not labelled as the audit's.
        spark.sparkContext.setLocalProperty(JOB_DESCRIPTION, cast(str, description))
        # The run's cached frames go with it. Left behind, every later query in the same session (a
        # second audit, a test suite's shared session) is matched against all of them during analysis
        # (Spark's CacheManager canonicalizes each cached plan), which grows without bound.
        spark.catalog.clearCache()
        # So do its checkpoints (transform.py), which hold their blocks until the driver's garbage
        # collector finds them unreferenced; nothing the run returns refers to them.
        for rdd_id, rdd in spark.sparkContext._jsc.getPersistentRDDs().items():
            if rdd_id not in persisted_before:
                rdd.unpersist(False)


def _until_settled(run: Callable[..., AuditSummary | OverQuarantined], refuse: dict[str, str]) -> AuditSummary:
    """Runs until no file is over the quarantine bound, refusing those that were. Each rerun refuses
    at least one file more, so there are at most as many reruns as input files."""
    while isinstance(outcome := run(refuse=refuse), OverQuarantined):
        refuse = {**refuse, **outcome.files}
    return outcome


def _listed(estate: Estate, source_files: Mapping[str, str]) -> dict[str, str]:
    """Files named as Spark names them (`_metadata.file_path`, a URI) -> as they were read (listed).
    Only files found among those read: a rerun must refuse at least one more file to end."""
    read = [uri for files in estate.files.values() for paths in files.by_format.values() for uri in paths]
    found = {source: next((uri for uri in read if same_file(uri, source)), None) for source in source_files}
    return {uri: source_files[source] for source, uri in found.items() if uri is not None}


def _persisted(spark: SparkSession) -> set[int]:
    """The ids of the RDDs persisted now (cached, or a local checkpoint's blocks)."""
    return set(spark.sparkContext._jsc.getPersistentRDDs().keys())


def _run(
    spark: SparkSession,
    inventory_dir: str,
    metrics_dir: str,
    out_dir: str,
    prices: PriceTable,
    *,
    clients: int,
    costs_dir: str | None,
    since: date | None,
    until: date | None,
    progress: Progress | None,
    small: bool,
    refuse: dict[str, str] | None = None,
) -> AuditSummary | OverQuarantined:
    uri = output_uri(out_dir)

    def stage(name: str) -> None:
        # Spark's UI and event log name each job after the audit's step (benchmarks/audit_startup_bench.py).
        spark.sparkContext.setLocalProperty(JOB_DESCRIPTION, f"pairedbus audit: {name}")
        if progress is not None:
            progress(name)

    with Steps(spark) as steps:  # leaving it waits for every step started (steps.py)
        stage("read")
        estate = read_estate(
            spark, inventory_dir, metrics_dir, costs_dir, since=since, until=until, refuse=refuse, steps=steps
        )
        estate.inventory_read.result(), estate.metrics_read.result()  # their files refused as they were read
        if not any(files.readable for name, files in estate.files.items() if name != "costs"):
            raise NoDataError(f"--inventory {inventory_dir}, --metrics {metrics_dir}: no readable input file")

        stage("transform")
        pending = start_transform(steps, spark, estate, prices, clients=clients, small=small)
        # isEmpty takes one row (one job), where limit(1).count() shuffles it to one partition first (two).
        no_days = pending.grains.result().isEmpty()
        if (since or until) and no_days:
            raise NoDataError(f"--since {since or '...'} --until {until or '...'}: no metrics in that date range")
        if no_days and pending.resources.result().isEmpty():
            raise NoDataError(f"--inventory {inventory_dir}, --metrics {metrics_dir}: no valid record (empty estate)")

        stage("write")
        counts = steps.start(count_records, estate, pending)
        # The quarantine first, beside the cost and the pairing: a file over its bound stops the run before
        # any table is written.
        quarantined = write_quarantine(spark, pending.quarantine.result(), uri)
        over = _listed(estate, quarantined.over)
        if over:
            return OverQuarantined(over)
        written = write_tables(spark, pending, uri, steps)
        tables = pending.result()
        summary = summarise(
            estate,
            tables,
            written,
            quarantined,
            prices,
            clients=clients,
            out=out_dir,
            since=since.isoformat() if since else None,
            until=until.isoformat() if until else None,
            counts=counts.result(),
        )
    write_text(spark, f"{uri}/summary.json", summary.model_dump_json(indent=2) + "\n")

    stage("render")
    write_text(spark, f"{uri}/report.html", report_html(summary, written))
    return summary
