"""Transform: the estate's DataFrames to the audit's tables. No output is written here."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pairedbus.pipeline.inventory import CONTENT, IDENTITY
from pairedbus.pipeline.namespace_cost import cost_from_grains, estate_by_namespace, traffic_grains
from pairedbus.pipeline.pairing_cost import discover_pairs, pairing_cost
from pairedbus.pipeline.prices import PriceTable
from pairedbus.pipeline.read import Estate
from pairedbus.pipeline.sources import SOURCE_FILE, union_all
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
    # The small tables that later ones are built from are checkpointed, not cached: a cached frame
    # keeps its whole plan, and every frame built on it carries that plan along, to be analyzed,
    # optimized and matched against the cache at each step. Cached, the sample estate's pairing plan
    # held 1,439 operators (74 file scans, the inventory's read again and again) and the
    # attribution's printed plan 8 MB; a warm audit of that estate took 42-50 s, and a third run in
    # one 1 GiB driver ran out of heap. A checkpoint is a leaf: 15 s warm.
    resources = estate.inventory.resources.localCheckpoint(eager=True)
    violations, rejected = violations_frame(spark, resources)
    namespaces = estate_by_namespace(resources).localCheckpoint(eager=True)
    grains = traffic_grains(estate.metrics.rows).localCheckpoint(eager=True)
    cost = cost_from_grains(grains, namespaces, prices, clients=clients).localCheckpoint(eager=True)
    pairs = discover_pairs(resources).localCheckpoint(eager=True)
    pairing = pairing_cost(pairs, grains, cost, namespaces, prices).localCheckpoint(eager=True)
    attribution = None
    if estate.charges is not None:
        from pairedbus.pipeline.focus import attribute

        attribution = attribute(
            estate.charges, pairs, resources, pairing, estimate_currency=prices.currency, broadcast=not small
        )
    quarantine = union_all(
        [estate.inventory.quarantine, estate.metrics.quarantine, rejected]
        + ([estate.charges_quarantine] if estate.charges_quarantine is not None else [])
    )
    assert quarantine is not None  # union_all of a non-empty list
    return Tables(
        resources=resources,
        violations=violations,
        quarantine=quarantine,
        grains=grains,
        cost=cost,
        pairs=pairs,
        pairing=pairing,
        conflicts=conflicting_resources(resources),
        attribution=attribution,
    )
