"""Transform: the estate's DataFrames to the audit's tables. No output is written here."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, fields

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pairedbus.pipeline.inventory import CONTENT, IDENTITY
from pairedbus.pipeline.namespace_cost import cost_from_grains, estate_by_namespace, traffic_grains
from pairedbus.pipeline.pairing_cost import discover_pairs, pairing_cost
from pairedbus.pipeline.prices import PriceTable
from pairedbus.pipeline.read import Estate
from pairedbus.pipeline.sources import SOURCE_FILE, union_all
from pairedbus.pipeline.steps import Steps, done
from pairedbus.pipeline.violations import violations_frame


@dataclass(frozen=True)
class Tables:
    resources: DataFrame
    violations: DataFrame
    quarantine: DataFrame
    grains: DataFrame  # cost.traffic_grains, checkpointed: the one pass over the metric rows
    cost: DataFrame  # cost.COST_COLUMNS
    pairs: DataFrame  # pairing_cost.PAIR_COLUMNS
    pairing: DataFrame  # pairing_cost.PAIRING_COLUMNS
    conflicts: DataFrame  # resources with differing versions
    attribution: DataFrame | None  # focus.ATTRIBUTION_COLUMNS


def conflicting_resources(resources: DataFrame) -> DataFrame:
    """One row per resource that has versions that differ: how many, and from which files."""
    content = F.to_json(F.struct(*[F.col(c) for c in CONTENT if c not in IDENTITY]))
    return (
        resources.groupBy(*IDENTITY)
        .agg(
            F.min("entity").alias("entity"),
            F.count(F.lit(1)).alias("versions"),
            F.array_sort(F.collect_list(content)).alias("contents"),
            F.array_join(F.array_sort(F.collect_set(SOURCE_FILE)), " ").alias("source_files"),
        )
        .where(F.col("versions") > 1)
    )


def transform(
    spark: SparkSession, estate: Estate, prices: PriceTable, *, clients: int = 1, small: bool = False
) -> Tables:
    """`small`: the estate is planned on one partition (spark_session.small_estate_conf), without broadcasts."""
    with Steps(spark) as steps:
        return start_transform(steps, spark, estate, prices, clients=clients, small=small).result()


@dataclass(frozen=True)
class PendingTables:
    """The tables of `start_transform`, each as its step finishes."""

    resources: Future[DataFrame]
    violations: Future[DataFrame]
    quarantine: Future[DataFrame]
    grains: Future[DataFrame]
    cost: Future[DataFrame]
    pairs: Future[DataFrame]
    pairing: Future[DataFrame]
    conflicts: Future[DataFrame]
    attribution: Future[DataFrame | None]

    @classmethod
    def of(cls, tables: Tables) -> PendingTables:
        """Tables already made, as futures that hold them."""
        return cls(**{f.name: done(getattr(tables, f.name)) for f in fields(cls)})

    def result(self) -> Tables:
        """Waits for every table."""
        return Tables(**{f.name: getattr(self, f.name).result() for f in fields(self)})


def start_transform(
    steps: Steps, spark: SparkSession, estate: Estate, prices: PriceTable, *, clients: int = 1, small: bool = False
) -> PendingTables:
    """Starts each table's step as soon as the tables it is built from are: the resources and the
    grains at once, then the violations, the namespaces and the pairs from the resources, the cost from
    the grains and the namespaces, the pairing, the attribution (which waits for the FOCUS exports)."""

    # The small tables that later ones are built from are checkpointed, not cached: a cached frame
    # keeps its whole plan, and every frame built on it carries that plan along, to be analyzed,
    # optimized and matched against the cache at each step. Cached, the sample estate's pairing plan
    # held 1,439 operators (74 file scans, the inventory's read again and again) and the
    # attribution's printed plan 8 MB; a warm audit of that estate took 42-50 s, and a third run in
    # one 1 GiB driver ran out of heap. A checkpoint is a leaf: 15 s warm.
    def checkpoint(frame: DataFrame) -> DataFrame:
        return frame.localCheckpoint(eager=True)

    resources = steps.start(lambda: checkpoint(estate.inventory.resources))
    grains = steps.start(lambda: checkpoint(traffic_grains(estate.metrics.rows)))
    checked = steps.start(lambda: violations_frame(spark, resources.result()))
    namespaces = steps.start(lambda: checkpoint(estate_by_namespace(resources.result())))
    pairs = steps.start(lambda: checkpoint(discover_pairs(resources.result())))
    cost = steps.start(
        lambda: checkpoint(cost_from_grains(grains.result(), namespaces.result(), prices, clients=clients))
    )
    pairing = steps.start(
        lambda: checkpoint(pairing_cost(pairs.result(), grains.result(), cost.result(), namespaces.result(), prices))
    )

    def actual() -> DataFrame | None:
        if estate.costs is None:
            return None
        from pairedbus.pipeline.focus import actual_charges

        charges = estate.charges
        assert charges is not None
        # Checkpointed beside the pairing: the attribution then plans a join of two checkpoints once the
        # pairing is priced (5 stages, where the whole was 21 at the end of the run's critical path).
        return checkpoint(actual_charges(charges, pairs.result(), resources.result(), broadcast=not small))

    billed = steps.start(actual)

    def attribution() -> DataFrame | None:
        from pairedbus.pipeline.focus import attribute_actual

        frame = billed.result()
        if frame is None:
            return None
        return attribute_actual(frame, pairing.result(), estimate_currency=prices.currency)

    def quarantine() -> DataFrame:
        rejected = checked.result()[1]
        frames = [estate.inventory.quarantine, estate.metrics.quarantine, rejected]
        if estate.charges_quarantine is not None:
            frames.append(estate.charges_quarantine)
        union = union_all(frames)
        assert union is not None  # union_all of a non-empty list
        return union

    return PendingTables(
        resources=resources,
        violations=steps.start(lambda: checked.result()[0]),
        quarantine=steps.start(quarantine),
        grains=grains,
        cost=cost,
        pairs=pairs,
        pairing=pairing,
        conflicts=steps.start(lambda: conflicting_resources(resources.result())),
        attribution=steps.start(attribution),
    )
