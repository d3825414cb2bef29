"""Azure Monitor metrics, from Metrics REST response documents to one row per data point.

Rows: `namespace` (lower case), `metric`, `entity` (the `entityname` dimension, `~` read as `/`),
`timestamp` (UTC), `total`, `interval_minutes` (the response's time grain). Points whose
document, series or timestamp cannot be read go to quarantine with the reason; points without a
`total` are the service's way of saying "no data" and are simply absent.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from pairedbus import contract
from pairedbus.pipeline import schemas
from pairedbus.pipeline.inventory import REASON_CORRUPT
from pairedbus.pipeline.sources import (
    SOURCE_FILE,
    InputFiles,
    list_files,
    quarantine_rows,
    read_flat,
    read_json,
    union_all,
)

INCOMING_MESSAGES = "IncomingMessages"
OUTGOING_MESSAGES = "OutgoingMessages"
INCOMING_REQUESTS = "IncomingRequests"  # operations, as Service Bus bills them
ACTIVE_MESSAGES = "ActiveMessages"
EXPORTED_METRICS = (INCOMING_MESSAGES, OUTGOING_MESSAGES, INCOMING_REQUESTS, ACTIVE_MESSAGES)
#: The dimension that splits a namespace's metrics by queue or topic.
ENTITY_DIMENSION = "EntityName"

_NAMESPACE_OF_METRIC = r"(?i)/providers/Microsoft\.ServiceBus/namespaces/([^/]+)/"

REASON_BAD_METRIC_ID = "metric `id` does not name a Service Bus namespace"
REASON_NO_METRIC_NAME = "metric without `name.value`"
REASON_NO_ENTITY = "time series without the `entityname` dimension (query with EntityName eq '*')"
REASON_BAD_INTERVAL = "response `interval` is not PTnM, PTnH or PnD"
REASON_BAD_TIMESTAMP = "data point `timeStamp` is not an ISO 8601 time"
REASON_NEGATIVE = "negative total (a count cannot be below 0)"
REASON_NOT_FINITE = "total is not a finite number"
REASON_FLAT_TYPE = "a column of the wrong type, or a required column (namespace, metric, entity, timestamp) missing"
REASON_CONFLICT = "conflicting duplicates: one data point (namespace, metric, entity, time) with different totals"

ROW_COLUMNS = ("namespace", "metric", "entity", "timestamp", "total", "interval_minutes")
KEY = ("namespace", "metric", "entity", "timestamp")
SERIES = KEY[:-1]
#: A series' points that are rows (readable time, a total): an array of (timestamp, total).
POINTS = "_points"
#: One row per series, as the metrics are read and shuffled (`read_metrics`).
SERIES_COLUMNS = (SOURCE_FILE, *SERIES, "interval_minutes", POINTS)
MICROS_PER_DAY = 86_400_000_000


def utc_day_number(timestamp_column: str) -> Column:
    """Days since 1970-01-01 in UTC: integer arithmetic, no time-zone lookup per row. The one
    expression both `deduplicate` and `cost.traffic_grains` use: Spark sees the rows as already
    partitioned by it only when it is the same expression."""
    return F.expr(f"div(unix_micros(`{timestamp_column}`), {MICROS_PER_DAY})")


@dataclass(frozen=True)
class Metrics:
    #: ROW_COLUMNS + `duplicates` (identical copies of the point that were dropped); one row per point.
    rows: DataFrame
    quarantine: DataFrame  # schemas.QUARANTINE layout


def read_metrics(spark: SparkSession, source: str | InputFiles) -> Metrics:
    """REST documents (JSON) and flat rows (CSV, Parquet) -> checked, deduplicated rows.

    The inputs are read as series (`flatten_metrics`; a flat row is a series of one point) and
    shuffled as series: a point's namespace, metric, entity and file are shipped once per series,
    not once per point, and the points become rows only after the shuffle, in the stage that
    deduplicates them (10M points: the shuffle was a row of three strings per point)."""
    files = source if isinstance(source, InputFiles) else list_files(spark, source, "metrics")
    series, quarantine = [], []
    raw = read_json(spark, files, schemas.METRICS_READ)
    if raw is not None:
        # Not cached: the documents are parsed once per output (the rows feed one checkpointed
        # aggregation; the quarantine is a second, cheap pass) instead of held in memory whole.
        flattened = flatten_metrics(raw)
        series.append(flattened.rows)
        quarantine.append(flattened.quarantine)
    flat = read_flat(spark, files, schemas.FLAT_METRICS, KEY)
    if flat is not None:
        good, bad = check_flat_rows(flat)
        series.append(good)
        quarantine.append(bad)
    all_series = union_all(series)
    if all_series is None:
        empty = spark.createDataFrame([], _row_schema())
        return Metrics(
            rows=empty.withColumn("duplicates", F.lit(0).cast("long")).drop(SOURCE_FILE),
            quarantine=spark.createDataFrame([], schemas.QUARANTINE),
        )
    # The quarantine's checks need no shuffle: they read the series where they are.
    unshuffled = check_values(series_points(all_series))
    # By namespace alone: a series' points may fall on several days, and the namespace is known per series.
    checked = check_values(series_points(all_series.repartition("namespace")))
    deduplicated = deduplicate(checked.rows)
    quarantined = union_all([*quarantine, unshuffled.quarantine, deduplicated.quarantine])
    assert quarantined is not None  # union_all of a non-empty list
    return Metrics(rows=deduplicated.rows, quarantine=quarantined)


def series_points(series: DataFrame) -> DataFrame:
    """Series (SERIES_COLUMNS) -> one row per point (ROW_COLUMNS + source file), where they are."""
    # explode_outer and a filter, not explode: for an explode Spark infers a filter on the array's
    # size and pushes it down to where POINTS is made, where it made the array (every point's time
    # parsed) once more for the filter's condition, and once more for its null check.
    return (
        series.select(SOURCE_FILE, *SERIES, "interval_minutes", F.explode_outer(POINTS).alias("_p"))
        .where(F.col("_p").isNotNull())
        .select(
            SOURCE_FILE,
            *SERIES,
            F.col("_p.timestamp").alias("timestamp"),
            F.col("_p.total").alias("total"),
            "interval_minutes",
        )
    )


def _row_schema() -> StructType:
    return StructType(
        [StructField(n, t) for n, t in schemas.FLAT_METRICS.items()] + [StructField(SOURCE_FILE, StringType())]
    )


def check_flat_rows(flat: DataFrame) -> tuple[DataFrame, DataFrame]:
    """Flat rows with every required column readable, as series of one point (SERIES_COLUMNS), and
    the others in quarantine."""
    required = F.greatest(*[F.col(c).isNull() for c in KEY])
    bad = (F.size("_bad_columns") > 0) | required
    record = F.to_json(F.struct(*[F.col(c) for c in schemas.FLAT_METRICS]))
    good = (
        flat.where(~bad)
        .where(F.col("total").isNotNull())
        .select(
            SOURCE_FILE,
            F.lower("namespace").alias("namespace"),
            "metric",
            "entity",
            "interval_minutes",
            F.array(F.struct("timestamp", "total")).alias(POINTS),
        )
    )
    return good, quarantine_rows(flat.where(bad), "metrics", F.lit(REASON_FLAT_TYPE), record)


def check_values(rows: DataFrame) -> Metrics:
    """Negative and non-finite totals go to quarantine with the reason."""
    total = F.col("total")
    reason = F.when(F.isnan(total) | (F.abs(total) == float("inf")), F.lit(REASON_NOT_FINITE)).when(
        total < 0, F.lit(REASON_NEGATIVE)
    )
    checked = rows.withColumn("_reason", reason)
    bad = quarantine_rows(
        # A point without a readable time is already quarantined for that (flatten_metrics).
        checked.where(F.col("_reason").isNotNull() & F.col("timestamp").isNotNull()),
        "metrics",
        F.col("_reason"),
        F.to_json(F.struct(*[F.col(c) for c in ROW_COLUMNS])),
    )
    return Metrics(rows=checked.where(F.col("_reason").isNull()).drop("_reason"), quarantine=bad)


def deduplicate(rows: DataFrame) -> Metrics:
    """One row per data point. Identical copies (a copied file, the same document as .json and
    .jsonl) are dropped and counted in `duplicates`; copies that disagree on the total are a
    conflict: every version goes to quarantine, none is guessed at.

    `rows` come partitioned by namespace (`read_metrics` shuffles the series so), which every
    point of one key shares, and which `cost.traffic_grains`'s grouping by namespace and day is
    satisfied by too, so Spark plans no exchange for this aggregation nor between it and the
    cost's (1M points: three stages and jobs instead of four, and no partial aggregation shuffled).
    A cluster gets as many partitions as the estate has namespaces."""
    points = rows.groupBy(*KEY).agg(
        F.min("total").alias("total"),
        F.max("total").alias("_max"),
        F.max("interval_minutes").alias("interval_minutes"),
        (F.count(F.lit(1)) - 1).alias("duplicates"),
        F.min(SOURCE_FILE).alias(SOURCE_FILE),
        F.max(SOURCE_FILE).alias("_other_file"),
    )
    agree = F.col("total") == F.col("_max")
    clean = points.where(agree).select(*ROW_COLUMNS, "duplicates")
    conflicts = quarantine_rows(
        points.where(~agree),
        "metrics",
        F.lit(REASON_CONFLICT),
        F.to_json(
            F.struct(
                *[F.col(c) for c in KEY],
                F.col("total").alias("lowest_total"),
                F.col("_max").alias("highest_total"),
                (F.col("duplicates") + 1).alias("copies"),
                F.col("_other_file").alias("other_file"),
            )
        ),
    )
    return Metrics(rows=clean, quarantine=conflicts)


def interval_minutes(interval: Column) -> Column:
    """ISO 8601 time grain in minutes (the grains Azure Monitor offers), else null."""
    number = F.regexp_extract(interval, r"^P(?:T)?(\d+)[MHD]$", 1)
    unit = F.regexp_extract(interval, r"^P(?:T)?\d+([MHD])$", 1)
    minutes = number.try_cast("long")
    return (
        F.when(interval.rlike(r"^PT\d+M$"), minutes)
        .when(interval.rlike(r"^PT\d+H$"), minutes * 60)
        .when(interval.rlike(r"^P\d+D$") & (unit == "D"), minutes * 1440)
    )


def flatten_metrics(raw: DataFrame) -> Metrics:
    """Raw responses (schemas.METRICS_READ + source file) to series (`rows`: SERIES_COLUMNS, one row
    per time series, its points that are rows in POINTS) and quarantine (per point). Each time is
    parsed once per output: in the series' array for the rows (the array's filter reads the parsed
    time), per exploded point for the quarantine."""
    corrupt = F.col(schemas.CORRUPT_RECORD).isNotNull()
    # Spark refuses a raw JSON query that reads only the corrupt-record column (even a count of
    # the quarantine): the filter also reads `interval`, in a condition that is always true.
    also_reads_interval = F.length(F.concat_ws("", F.col(schemas.CORRUPT_RECORD), F.col("interval"))) >= 0
    bad_docs = quarantine_rows(
        raw.where(corrupt & also_reads_interval), "metrics", F.lit(REASON_CORRUPT), F.col(schemas.CORRUPT_RECORD)
    )

    docs = raw.where(~corrupt)
    metric = docs.select(
        SOURCE_FILE, interval_minutes(F.col("interval")).alias("interval_minutes"), F.explode("value").alias("m")
    )
    series = metric.select(
        SOURCE_FILE,
        "interval_minutes",
        F.col("m.id").alias("metric_id"),
        F.col("m.name.value").alias("metric"),
        F.explode("m.timeseries").alias("ts"),
    )
    # What belongs to a series is worked out once per series, before its points are exploded: a
    # regex per point (and the dimension lookup, a lambda Spark interprets row by row) cost more
    # than the JSON parsing itself (docs/benchmarks.md#figures-behind-the-codes-comments).
    # SQL, not a Python lambda: PySpark names a Python lambda's variable from a process-wide counter,
    # the name is written into the parse stage's generated code, and every later run in the same JVM
    # then missed Spark's code cache: the stage was compiled again and HotSpot compiled its hot loop
    # from scratch (docs/benchmarks.md#figures-behind-the-codes-comments).
    entity_value = F.expr("filter(ts.metadatavalues, mv -> lower(mv.name.value) = 'entityname')")
    labelled = series.select(
        SOURCE_FILE,
        "interval_minutes",
        "metric_id",
        "metric",
        F.regexp_extract("metric_id", _NAMESPACE_OF_METRIC, 1).alias("_namespace"),
        F.try_element_at(entity_value, F.lit(1))["value"].alias("entity_raw"),
        F.col("ts.data").alias("_data"),
    ).select(
        "*",
        F.lower("_namespace").alias("namespace"),
        F.regexp_replace("entity_raw", contract.ARM_PATH_SEPARATOR, "/").alias("entity"),
    )
    points = labelled.select(
        SOURCE_FILE,
        "interval_minutes",
        "metric_id",
        "metric",
        "_namespace",
        "namespace",
        "entity_raw",
        "entity",
        F.explode("_data").alias("p"),
    )
    timestamp = F.try_to_timestamp(F.col("p.timeStamp"))
    series_reason = (
        F.when(F.col("_namespace") == "", F.lit(REASON_BAD_METRIC_ID))
        .when(F.col("metric").isNull(), F.lit(REASON_NO_METRIC_NAME))
        .when(F.col("entity_raw").isNull(), F.lit(REASON_NO_ENTITY))
        .when(F.col("interval_minutes").isNull(), F.lit(REASON_BAD_INTERVAL))
    )
    reason = series_reason.when(timestamp.isNull(), F.lit(REASON_BAD_TIMESTAMP))
    checked = points.withColumn("_reason", reason)
    bad_points = quarantine_rows(
        checked.where(F.col("_reason").isNotNull()),
        "metrics",
        F.col("_reason"),
        F.to_json(F.struct("metric_id", "metric", F.col("entity_raw").alias("entityname"), "p")),
    )
    # The rows stay series here (SERIES_COLUMNS): `read_metrics` shuffles them so. Each point's time
    # is read once, in the array; a point without a readable time is in `bad_points`, not a row.
    points_of_series = F.expr(
        "filter(transform(filter(_data, p -> p.total IS NOT NULL),"
        " p -> named_struct('timestamp', try_to_timestamp(p.timeStamp), 'total', p.total)),"
        " q -> q.timestamp IS NOT NULL)"
    )
    rows = labelled.where(series_reason.isNull()).select(
        SOURCE_FILE, *SERIES, "interval_minutes", points_of_series.alias(POINTS)
    )
    return Metrics(rows=rows, quarantine=bad_docs.unionByName(bad_points))
