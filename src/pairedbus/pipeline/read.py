"""Read: the estate's inputs as DataFrames (inventory, metrics, optional FOCUS costs), nothing judged yet."""

from __future__ import annotations

from collections.abc import Mapping
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
    refuse: Mapping[str, str] | None = None,
) -> Estate:
    """Every input file read or refused; metric rows limited to [since, until] (UTC days).
    `refuse`: files already found unreadable (by URI, with the reason), refused before reading."""
    refuse = refuse or {}

    def listed(directory: str, name: str) -> InputFiles:
        found = list_files(spark, directory, name)
        for uri in [u for paths in found.by_format.values() for u in paths if u in refuse]:
            found.refuse(uri, refuse[uri])
        return found

    files = {"inventory": listed(inventory_dir, "inventory"), "metrics": listed(metrics_dir, "metrics")}
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

        charges, charges_quarantine, files["costs"] = read_focus(spark, listed(costs_dir, "costs"))
    return Estate(inventory, metrics, files, charges, charges_quarantine)
