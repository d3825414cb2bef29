"""Read: the estate's inputs as DataFrames (inventory, metrics, optional FOCUS costs), nothing judged yet."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pairedbus.pipeline.inventory import Inventory, read_inventory
from pairedbus.pipeline.metrics import Metrics, read_metrics
from pairedbus.pipeline.sources import InputFiles, list_files


@dataclass(frozen=True)
class Estate:
    inventory: Inventory
    metrics: Metrics
    files: dict[str, InputFiles]
    charges: DataFrame | None = None  # focus.read_focus charges, when --costs is given
    charges_quarantine: DataFrame | None = None


def read_estate(
    spark: SparkSession,
    inventory_dir: str,
    metrics_dir: str,
    costs_dir: str | None = None,
    *,
    since: date | None = None,
    until: date | None = None,
) -> Estate:
    """Every input file read or refused; metric rows limited to [since, until] (UTC days)."""
    files = {
        "inventory": list_files(spark, inventory_dir, "inventory"),
        "metrics": list_files(spark, metrics_dir, "metrics"),
    }
    inventory = read_inventory(spark, files["inventory"])
    metrics = read_metrics(spark, files["metrics"])
    rows = metrics.rows
    if since is not None:
        rows = rows.where(F.col("timestamp") >= F.lit(since.isoformat()).cast("timestamp"))
    if until is not None:
        rows = rows.where(F.col("timestamp") < F.date_add(F.lit(until.isoformat()).cast("date"), 1).cast("timestamp"))
    metrics = Metrics(rows=rows, quarantine=metrics.quarantine)
    charges = charges_quarantine = None
    if costs_dir is not None:
        from pairedbus.pipeline.focus import read_focus

        charges, charges_quarantine, files["costs"] = read_focus(spark, costs_dir)
    return Estate(inventory, metrics, files, charges, charges_quarantine)
