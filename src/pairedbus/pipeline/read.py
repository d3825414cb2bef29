"""Read: the estate's inputs as DataFrames (inventory, metrics, optional FOCUS costs), nothing judged yet."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import date
from typing import ParamSpec, TypeVar

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pairedbus.pipeline.inventory import Inventory, read_inventory
from pairedbus.pipeline.metrics import Metrics, read_metrics
from pairedbus.pipeline.sources import InputFiles, list_files
from pairedbus.pipeline.steps import Steps, done

P = ParamSpec("P")
T = TypeVar("T")

#: focus.read_focus's (charges, quarantine, files), once read.
Costs = tuple[DataFrame, DataFrame, InputFiles]


@dataclass(frozen=True)
class Estate:
    """Each source's frames as its read finishes (read_estate reads them in steps of their own)."""

    inventory_read: Future[Inventory]
    metrics_read: Future[Metrics]
    files: dict[str, InputFiles]
    costs: Future[Costs] | None = None  # when --costs is given

    @property
    def inventory(self) -> Inventory:
        return self.inventory_read.result()

    @property
    def metrics(self) -> Metrics:
        return self.metrics_read.result()

    @property
    def charges(self) -> DataFrame | None:
        """focus.read_focus's charges (waits for their read), or None without --costs."""
        return None if self.costs is None else self.costs.result()[0]

    @property
    def charges_quarantine(self) -> DataFrame | None:
        return None if self.costs is None else self.costs.result()[1]


def read_estate(
    spark: SparkSession,
    inventory_dir: str,
    metrics_dir: str,
    costs_dir: str | None = None,
    *,
    since: date | None = None,
    until: date | None = None,
    refuse: Mapping[str, str] | None = None,
    steps: Steps | None = None,
) -> Estate:
    """Every input file read or refused; metric rows limited to [since, until] (UTC days).
    `refuse`: files already found unreadable (by URI, with the reason), refused before reading.
    `steps`: each source is read in a step of its own (the FOCUS exports' read runs Spark jobs; the
    inventory's and the metrics' are planned, seconds of the JVM's analysis each), and the estate is
    returned before they are read; without, it is returned read."""
    refuse = refuse or {}

    def listed(directory: str, name: str) -> InputFiles:
        found = list_files(spark, directory, name)
        for uri in [u for paths in found.by_format.values() for u in paths if u in refuse]:
            found.refuse(uri, refuse[uri])
        return found

    def later(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        return steps.start(fn, *args, **kwargs) if steps else done(fn(*args, **kwargs))

    files = {"inventory": listed(inventory_dir, "inventory"), "metrics": listed(metrics_dir, "metrics")}
    costs: Future[Costs] | None = None
    if costs_dir is not None:
        from pairedbus.pipeline.focus import read_focus

        # read_focus refuses files in this InputFiles as it reads: the summary reads it once they are read.
        files["costs"] = listed(costs_dir, "costs")
        costs = later(read_focus, spark, files["costs"])

    def metrics() -> Metrics:
        read = read_metrics(spark, files["metrics"])
        rows = read.rows
        if since is not None:
            rows = rows.where(F.col("timestamp") >= F.lit(since.isoformat()).cast("timestamp"))
        if until is not None:
            rows = rows.where(
                F.col("timestamp") < F.date_add(F.lit(until.isoformat()).cast("date"), 1).cast("timestamp")
            )
        return Metrics(rows=rows, quarantine=read.quarantine)

    inventory = later(read_inventory, spark, files["inventory"])
    return Estate(inventory, later(metrics), files, costs)
