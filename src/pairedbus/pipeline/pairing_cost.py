"""The cost of pairing, per pair per day, in dollars: what send availability adds to the bill.

Pairs come from the inventory: a secondary holds backlog queues named after its primary
(`contract.backlog_queue_name(primary, i)`); where the program tagged the namespaces
(`pairedbus-pair`, `pairedbus-role`), the tags name the pair and find pairs that have no backlog
queue yet. For each pair and each day the metrics cover (columns of PAIRING_COLUMNS):

- `secondary_base_usd`: the secondary namespace's own charge for the day (Standard's base
  charge, Premium's messaging units; Basic has none). Without pairing there is no secondary.
- `parked_messages`: messages into the pair's backlog queues; `parked_extra_operations` is
  twice that: a parked message is billed four times (send to and receive from the backlog, send
  to and receive from the primary), two of which it would have cost anyway.
- `syphon_receives`: the syphon's 15-minute long-poll receives: 4 an hour per backlog queue.
- `ping_operations`: the ping estimate of the primary (see namespace_cost.py).
- `pairing_operations`: their sum.
- `secondary_operations_usd`, `ping_operations_usd`: those operations priced by the tier they
  fall in, *after* the namespace's other operations of the calendar month (so the included
  operations go first to traffic that exists without pairing). A namespace's pairing cost is
  shared among its pairs by their operations.
- `syphon_compute_usd`, `syphon_logs_usd`: the syphon's Container Apps vCPU and memory seconds
  and its Log Analytics ingestion, per day (prices.SyphonHostingPrices).
- `total_usd`: the sum of the dollar columns; `monthly_projection_usd`: the pair's mean daily
  total over the days covered, times DAYS_PER_MONTH.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from pairedbus import contract
from pairedbus.pipeline.inventory import KIND_NAMESPACE, KIND_QUEUE
from pairedbus.pipeline.namespace_cost import (
    HOURS_PER_DAY,
    SKU_BASIC,
    backlog_primary,
    is_backlog_queue_name_column,
    tiered,
)
from pairedbus.pipeline.prices import PriceTable

#: The spec counts syphon receives "in 30 days"; the projection uses the same month.
DAYS_PER_MONTH = 30

PAIR_COLUMNS = ("pair", "primary", "secondary", "backlog_queues")
PAIRING_COLUMNS = (
    "pair",
    "primary",
    "secondary",
    "date",
    "backlog_queues",
    "parked_messages",
    "parked_extra_operations",
    "syphon_receives",
    "ping_operations",
    "pairing_operations",
    "secondary_base_usd",
    "secondary_operations_usd",
    "ping_operations_usd",
    "syphon_compute_usd",
    "syphon_logs_usd",
    "total_usd",
    "monthly_projection_usd",
)
USD_COLUMNS = (
    "secondary_base_usd",
    "secondary_operations_usd",
    "ping_operations_usd",
    "syphon_compute_usd",
    "syphon_logs_usd",
)


def discover_pairs(resources: DataFrame) -> DataFrame:
    """PAIR_COLUMNS: one row per (primary, secondary), from backlog queue names and from tags."""
    entity = F.col("entity")
    by_queues = (
        resources.where((F.col("kind") == KIND_QUEUE) & is_backlog_queue_name_column(entity))
        .groupBy(backlog_primary(entity).alias("primary"), F.col("namespace").alias("secondary"))
        .agg(F.count_distinct(F.lower(entity)).alias("backlog_queues"))
    )
    tagged = resources.where(
        (F.col("kind") == KIND_NAMESPACE) & F.col("tags").isNotNull() & F.col("tags")[contract.TAG_PAIR].isNotNull()
    ).select(
        F.col("tags")[contract.TAG_PAIR].alias("tag_pair"),
        F.lower(F.col("tags")[contract.TAG_ROLE]).alias("role"),
        "namespace",
    )
    by_tags = (
        tagged.groupBy("tag_pair")
        .agg(
            F.max(F.when(F.col("role") == contract.ROLE_PRIMARY, F.col("namespace"))).alias("primary"),
            F.max(F.when(F.col("role") == contract.ROLE_SECONDARY, F.col("namespace"))).alias("secondary"),
        )
        .where(F.col("primary").isNotNull() & F.col("secondary").isNotNull())
    )
    pairs = by_queues.join(by_tags, ["primary", "secondary"], "full_outer")
    return pairs.select(
        F.coalesce("tag_pair", "primary").alias("pair"),
        "primary",
        "secondary",
        F.coalesce("backlog_queues", F.lit(0)).cast("long").alias("backlog_queues"),
    )


def parked_by_pair(grains: DataFrame) -> DataFrame:
    """(primary, secondary, date, parked_messages) from cost.traffic_grains."""
    candidate = F.col("candidate")
    return (
        grains.where(F.col("candidate").isNotNull() & is_backlog_queue_name_column(candidate))
        .groupBy(
            backlog_primary(candidate).alias("primary"),
            F.col("namespace").alias("secondary"),
            F.date_from_unix_date("day").alias("date"),
        )
        .agg(F.round(F.sum("candidate_messages")).cast("long").alias("parked_messages"))
    )


def _marginal_operations_usd(namespace_day: DataFrame, prices: PriceTable) -> DataFrame:
    """Per namespace and day: the price of its pairing operations `x`, charged after its other
    operations of the month. In: namespace, date, sku_name, operations (observed), x."""
    x = F.col("x").cast("double")
    other = F.greatest(F.coalesce(F.col("operations"), F.lit(0.0)) - x, F.lit(0.0))
    month = (
        Window.partitionBy("namespace", F.trunc("date", "month"))
        .orderBy("date")
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    with_cumulative = (
        namespace_day.withColumn("_other", other)
        .withColumn("_other_cum", F.sum("_other").over(month))
        .withColumn("_all_cum", F.sum(F.col("_other") + x).over(month))
    )
    all_today = tiered(F.col("_all_cum"), prices) - tiered(F.col("_all_cum") - F.col("_other") - x, prices)
    other_today = tiered(F.col("_other_cum"), prices) - tiered(F.col("_other_cum") - F.col("_other"), prices)
    sku = F.lower(F.col("sku_name"))
    usd = (
        F.when(sku == contract.SKU_STANDARD.lower(), all_today - other_today)
        .when(sku == SKU_BASIC.lower(), x / F.lit(1_000_000.0) * F.lit(prices.basic.operations_per_million))
        .otherwise(F.lit(0.0))  # Premium: operations are included in the messaging units
    )
    return with_cumulative.select("namespace", "date", "x", usd.alias("usd"))


def _base_per_day(prices: PriceTable) -> Column:
    sku = F.lower(F.col("sku_name"))
    units = F.coalesce(F.col("sku_capacity"), F.lit(1))
    return (
        F.when(sku == contract.SKU_STANDARD.lower(), F.lit(prices.standard_base_per_day()))
        .when(
            sku == contract.SKU_PREMIUM.lower(),
            units * F.lit(prices.premium.messaging_unit_per_hour * prices.hours_per_day),
        )
        .otherwise(F.lit(0.0))
    )


def pairing_cost(
    pairs: DataFrame, grains: DataFrame, cost: DataFrame, estate: DataFrame, prices: PriceTable
) -> DataFrame:
    """PAIRING_COLUMNS, one row per pair per day of the metrics (`cost`: cost.COST_COLUMNS per
    namespace and day; `estate`: cost.estate_by_namespace)."""
    dates = cost.select("date").distinct()
    pings = cost.select(
        F.col("namespace").alias("primary"), "date", F.col("ping_operations_estimate").alias("ping_operations")
    )
    per_pair = (
        pairs.crossJoin(dates)
        .join(parked_by_pair(grains), ["primary", "secondary", "date"], "left")
        .join(pings, ["primary", "date"], "left")
        .select(
            *PAIR_COLUMNS,
            "date",
            F.coalesce("parked_messages", F.lit(0)).cast("long").alias("parked_messages"),
            F.coalesce("ping_operations", F.lit(0)).cast("long").alias("ping_operations"),
        )
        .withColumn(
            "parked_extra_operations",
            F.col("parked_messages") * F.lit(contract.EXTRA_OPERATIONS_PER_BACKLOGGED_MESSAGE),
        )
        .withColumn(
            "syphon_receives",
            F.col("backlog_queues") * F.lit(contract.SYPHON_RECEIVES_PER_HOUR_PER_QUEUE * HOURS_PER_DAY),
        )
        .withColumn("secondary_x", F.col("parked_extra_operations") + F.col("syphon_receives"))
        .localCheckpoint(eager=True)  # read three times below; a leaf of their plans (transform.py)
    )
    # Each namespace's pairing operations (as a secondary and as a primary), priced once.
    x_by_namespace = (
        per_pair.select(F.col("secondary").alias("namespace"), "date", F.col("secondary_x").alias("x"))
        .unionByName(per_pair.select(F.col("primary").alias("namespace"), "date", F.col("ping_operations").alias("x")))
        .groupBy("namespace", "date")
        .agg(F.sum("x").alias("x"))
        .join(cost.select("namespace", "date", "operations"), ["namespace", "date"], "left")
        .join(estate.select("namespace", "sku_name"), ["namespace"], "left")
    )
    priced = _marginal_operations_usd(x_by_namespace, prices)

    def priced_as(role: str) -> DataFrame:
        return priced.select(
            F.col("namespace").alias(role),
            "date",
            F.col("x").alias(f"{role}_total_x"),
            F.col("usd").alias(f"{role}_usd"),
        )

    hosting = prices.syphon_hosting
    compute = hosting.compute_per_day() if hosting else 0.0
    logs = hosting.logs_per_day() if hosting else 0.0
    secondary_estate = estate.select(F.col("namespace").alias("secondary"), "sku_name", "sku_capacity")

    def portion(part: str, total: str, usd: str) -> Column:
        return F.when(F.col(total) > 0, F.col(usd) * F.col(part) / F.col(total)).otherwise(F.lit(0.0))

    out = (
        per_pair.join(priced_as("secondary"), ["secondary", "date"], "left")
        .join(priced_as("primary"), ["primary", "date"], "left")
        .join(secondary_estate, ["secondary"], "left")
        .withColumn("pairing_operations", F.col("secondary_x") + F.col("ping_operations"))
        .withColumn("secondary_base_usd", _base_per_day(prices))
        .withColumn("secondary_operations_usd", portion("secondary_x", "secondary_total_x", "secondary_usd"))
        .withColumn("ping_operations_usd", portion("ping_operations", "primary_total_x", "primary_usd"))
        .withColumn("syphon_compute_usd", F.lit(compute))
        .withColumn("syphon_logs_usd", F.lit(logs))
        .withColumn("total_usd", sum((F.col(c) for c in USD_COLUMNS[1:]), F.col(USD_COLUMNS[0])))
    )
    by_pair = Window.partitionBy("primary", "secondary")
    out = out.withColumn("monthly_projection_usd", F.avg("total_usd").over(by_pair) * F.lit(DAYS_PER_MONTH))
    rounded = [F.round(c, 6).alias(c) if c.endswith("_usd") else F.col(c) for c in PAIRING_COLUMNS]
    return out.select(*rounded).orderBy("pair", "primary", "secondary", "date")
