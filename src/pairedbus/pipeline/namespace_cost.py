"""The cost of pairing, per namespace per day: Spark SQL functions only (the hot path).

Definitions (issue 6, spec "The syphon" and "Pings"):

- `operations`: billed operations, the `IncomingRequests` metric summed over the day.
- `backlog_messages`: `IncomingMessages` on backlog queues, on the namespace that holds them.
- `syphon_receives`: 4 long-poll receives an hour per backlog queue in the inventory, on the
  rows of the namespace that holds the backlog queues, for every day the metrics cover.
- `ping_operations_estimate`: minutes with backlog traffic for a primary (any of its backlog
  queues received a message in that minute) x pings per minute x the primary's entities
  (queues and topics) x clients. An upper bound: it assumes every entity was unavailable.
  Lands on the primary namespace's rows, where the pings go.
- `pairing_operations`: what pairing adds: two extra hops per backlogged message, the syphon's
  receives and the pings.
- `estimated_cost_usd`: Standard: base charge for the day plus the day's operations priced at
  the monthly tier they fall in (cumulative within the calendar month); Premium: messaging units
  x hours; Basic: operations only. Null when the namespace's tier is unknown.
"""

from __future__ import annotations

from datetime import timedelta

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from pairedbus import contract
from pairedbus.pipeline.inventory import KIND_QUEUE, KIND_TOPIC
from pairedbus.pipeline.metrics import INCOMING_MESSAGES, INCOMING_REQUESTS, utc_day_number
from pairedbus.pipeline.prices import PriceTable

COST_COLUMNS = (
    "namespace",
    "date",
    "operations",
    "backlog_messages",
    "syphon_receives",
    "ping_operations_estimate",
    "pairing_operations",
    "estimated_cost_usd",
)
SKU_BASIC = "Basic"  # not a spec tier, but it has a price
HOURS_PER_DAY = 24
PINGS_PER_MINUTE = timedelta(minutes=1) / contract.DEFAULT_PING_PRIMARY_INTERVAL
#: Java regex syntax for named groups is `(?<name>...)`.
BACKLOG_NAME_REGEX = contract.BACKLOG_QUEUE_NAME_PATTERN.replace("(?P<", "(?<")
#: A cheap substring test first, so the regex runs only on names that may be backlog queues.
_BACKLOG_SEGMENT_LIKE = f"%/{contract.BACKLOG_QUEUE_SEGMENT}/%"


def utc_date(timestamp_column: str) -> Column:
    """The UTC calendar day of a timestamp, whatever the session's time zone."""
    return F.date_from_unix_date(utc_day_number(timestamp_column))


def is_backlog_queue_name_column(entity: Column) -> Column:
    """`contract.is_backlog_queue_name` as a Spark column: whether `entity` names a backlog queue."""
    return entity.like(_BACKLOG_SEGMENT_LIKE) & entity.rlike(BACKLOG_NAME_REGEX)


def backlog_primary(entity: Column) -> Column:
    """The primary namespace a backlog queue belongs to (its name's prefix), lower case."""
    return F.lower(F.regexp_extract(entity, BACKLOG_NAME_REGEX, 1))


def estate_by_namespace(resources: DataFrame) -> DataFrame:
    """Per namespace: tier, messaging units, backlog queues held, primary entities (queues and
    topics that are not backlog queues). `resources` is the normalised inventory."""
    entity = F.col("entity")
    backlog = (F.col("kind") == KIND_QUEUE) & is_backlog_queue_name_column(entity)
    primary = F.col("kind").isin(KIND_QUEUE, KIND_TOPIC) & ~F.coalesce(backlog, F.lit(False))
    return resources.groupBy("namespace").agg(
        F.max("sku_name").alias("sku_name"),
        F.max("sku_capacity").alias("sku_capacity"),
        # Distinct names: conflicting versions of one resource are kept (and reported) upstream.
        # Service Bus entity names are case-insensitive: `ORDERS` and `orders` are one queue.
        F.count_distinct(F.when(F.coalesce(backlog, F.lit(False)), F.lower(entity))).alias("backlog_queues"),
        F.count_distinct(F.when(primary, F.concat_ws(":", "kind", F.lower(entity)))).alias("primary_entities"),
    )


def tiered(operations: Column, prices: PriceTable) -> Column:
    cost: Column = F.lit(0.0)
    for lower, upper, price in prices.tier_bounds():
        top = operations if upper is None else F.least(operations, F.lit(upper))
        cost = cost + F.greatest(F.lit(0.0), top - F.lit(lower)) * F.lit(price)
    return cost


def traffic_grains(rows: DataFrame) -> DataFrame:
    """The one pass over every metric row, kept cheap: no regex per row.

    Groups by namespace, day, `candidate` (the entity, for IncomingMessages rows whose name
    contains the backlog segment) and `traffic_at` (the grain's timestamp, for candidates that
    took messages). The full backlog-name pattern then runs once per group, not once per row.
    """
    entity, metric, total = F.col("entity"), F.col("metric"), F.col("total")
    candidate = (metric == INCOMING_MESSAGES) & entity.like(_BACKLOG_SEGMENT_LIKE)
    return rows.groupBy(
        "namespace",
        utc_day_number("timestamp").alias("day"),
        F.when(candidate, entity).alias("candidate"),
        F.when(candidate & (total > 0), F.col("timestamp")).alias("traffic_at"),
    ).agg(
        F.sum(F.when(metric == INCOMING_REQUESTS, total)).alias("operations"),
        F.sum(F.when(candidate, total)).alias("candidate_messages"),
        F.max("interval_minutes").alias("minutes"),
        *([F.sum("duplicates").alias("duplicates")] if "duplicates" in rows.columns else []),
    )


def daily_traffic(grains: DataFrame) -> DataFrame:
    """Per namespace and day: operations, and messages into backlog queues held there."""
    backlog = F.coalesce(is_backlog_queue_name_column(F.col("candidate")), F.lit(False))
    return grains.groupBy("namespace", F.date_from_unix_date("day").alias("date")).agg(
        F.sum("operations").alias("operations"),
        F.sum(F.when(backlog, F.col("candidate_messages"))).alias("backlog_messages"),
    )


def backlog_minutes(grains: DataFrame) -> DataFrame:
    """Per primary namespace and day: minutes in which any of its backlog queues took a message."""
    candidate = F.col("candidate")
    traffic = grains.where(F.col("traffic_at").isNotNull() & is_backlog_queue_name_column(candidate))
    per_grain = traffic.groupBy(backlog_primary(candidate).alias("namespace"), "traffic_at").agg(
        F.max("minutes").alias("minutes")
    )
    return per_grain.groupBy("namespace", utc_date("traffic_at").alias("date")).agg(
        F.sum("minutes").alias("backlog_minutes")
    )


def one_partition(frame: DataFrame) -> DataFrame:
    """`frame` on one partition, without a shuffle. For the small frames after the one pass over the
    metric rows (grains: namespace-days and backlog-traffic minutes; the estate per namespace): a
    single partition satisfies every distribution, so the aggregations, sort-merge joins (hinted:
    a broadcast would be a job of its own), windows and the final sort on them run in one stage,
    with no exchange and no sampling job for the sort, instead of a stage each that costs more to
    schedule than to run (docs/benchmarks.md#figures-behind-the-codes-comments)."""
    return frame.coalesce(1)


def left_join_on_one_partition(grid: DataFrame, daily: DataFrame, minutes: DataFrame, estate: DataFrame) -> DataFrame:
    """`grid` left-joined with `daily` and `minutes` on (namespace, date) and `estate` on namespace,
    each unique on its key, written as one aggregation and one window over their union: on one
    partition neither needs an exchange, where Spark shuffles a join's single-partition sides to
    the default number of partitions (or broadcasts them, a job each). Null keys match nothing,
    as in a join."""
    nulls = {
        "operations": "double",
        "backlog_messages": "double",
        "backlog_minutes": "long",
        "sku_name": "string",
        "sku_capacity": "long",
        "backlog_queues": "long",
        "primary_entities": "long",
    }

    def part(frame: DataFrame, in_grid: bool, date: bool = True) -> DataFrame:
        present = set(frame.columns)
        return frame.select(
            "namespace",
            F.col("date") if date else F.lit(None).cast("date").alias("date"),
            F.lit(in_grid).alias("_in_grid"),
            *[F.col(c) if c in present else F.lit(None).cast(t).alias(c) for c, t in nulls.items()],
        )

    keyed = F.col("namespace").isNotNull()
    parts = [
        part(grid, True),
        part(daily.where(keyed & F.col("date").isNotNull()), False),
        part(minutes.where(keyed & F.col("date").isNotNull()), False),
        part(estate.where(keyed), False, date=False),
    ]
    by_day = (
        one_partition(parts[0].unionByName(parts[1]).unionByName(parts[2]).unionByName(parts[3]))
        .groupBy("namespace", "date")
        .agg(F.max("_in_grid").alias("_in_grid"), *[F.max(c).alias(c) for c in nulls])
    )
    per_namespace = Window.partitionBy("namespace")
    estate_columns = ("sku_name", "sku_capacity", "backlog_queues", "primary_entities")
    spread = by_day.select(
        "namespace",
        "date",
        "_in_grid",
        *[c for c in nulls if c not in estate_columns],
        *[F.max(c).over(per_namespace).alias(c) for c in estate_columns],
    )
    return spread.where(F.col("_in_grid")).drop("_in_grid")


def cost_by_namespace_day(rows: DataFrame, estate: DataFrame, prices: PriceTable, *, clients: int = 1) -> DataFrame:
    """`rows`: metric rows (namespace, metric, entity, timestamp, total, interval_minutes);
    `estate`: `estate_by_namespace` of the inventory. Returns COST_COLUMNS, one row per namespace
    (inventory or metrics) per day the metrics cover."""
    # Read the metrics once: the grains are small (namespace-days plus backlog-traffic minutes) and
    # feed three branches that Spark would otherwise plan as three scans of the rows.
    grains = traffic_grains(rows).localCheckpoint(eager=True)
    return cost_from_grains(grains, estate, prices, clients=clients)


def cost_from_grains(grains: DataFrame, estate: DataFrame, prices: PriceTable, *, clients: int = 1) -> DataFrame:
    """COST_COLUMNS from `traffic_grains` (read once, checkpointed by the caller)."""
    grains, estate = one_partition(grains), one_partition(estate)
    daily = daily_traffic(grains)
    minutes = backlog_minutes(grains)
    dates = daily.select("date").distinct()
    namespaces = one_partition(estate.select("namespace").unionByName(daily.select("namespace"))).distinct()
    grid = one_partition(namespaces.crossJoin(dates.hint("shuffle_replicate_nl")))
    joined = left_join_on_one_partition(grid, daily, minutes, estate)
    sku = F.lower(F.col("sku_name"))
    operations = F.coalesce(F.col("operations"), F.lit(0.0))
    month = Window.partitionBy("namespace", F.trunc("date", "month")).orderBy("date")
    cumulative = F.sum(operations).over(month.rowsBetween(Window.unboundedPreceding, Window.currentRow))
    hours = F.lit(float(prices.hours_per_day))
    standard = F.lit(prices.standard.base_charge_per_hour) * hours + (
        tiered(cumulative, prices) - tiered(cumulative - operations, prices)
    )
    premium = F.coalesce(F.col("sku_capacity"), F.lit(1)) * F.lit(prices.premium.messaging_unit_per_hour) * hours
    basic = operations / F.lit(1_000_000.0) * F.lit(prices.basic.operations_per_million)
    cost = (
        F.when(sku == contract.SKU_STANDARD.lower(), standard)
        .when(sku == contract.SKU_PREMIUM.lower(), premium)
        .when(sku == SKU_BASIC.lower(), basic)
    )

    # Metric totals are counts; round, do not truncate, what floating-point sums leave.
    backlog_messages = F.round(F.coalesce(F.col("backlog_messages"), F.lit(0.0))).cast("long")
    syphon = F.coalesce(F.col("backlog_queues"), F.lit(0)).cast("long") * F.lit(
        contract.SYPHON_RECEIVES_PER_HOUR_PER_QUEUE * HOURS_PER_DAY
    )
    pings = (
        F.coalesce(F.col("backlog_minutes"), F.lit(0))
        * F.lit(PINGS_PER_MINUTE)
        * F.coalesce(F.col("primary_entities"), F.lit(0))
        * F.lit(clients)
    ).cast("long")
    return (
        joined.select(
            "namespace",
            "date",
            F.round(operations).cast("long").alias("operations"),
            backlog_messages.alias("backlog_messages"),
            syphon.alias("syphon_receives"),
            pings.alias("ping_operations_estimate"),
            F.round(cost, 6).alias("estimated_cost_usd"),
        )
        .withColumn(
            "pairing_operations",
            F.col("backlog_messages") * F.lit(contract.EXTRA_OPERATIONS_PER_BACKLOGGED_MESSAGE)
            + F.col("syphon_receives")
            + F.col("ping_operations_estimate"),
        )
        .select(*COST_COLUMNS)
        .orderBy("namespace", "date")
    )
