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

from pairedbus import contract
from pairedbus.pipeline import schemas
from pairedbus.pipeline.inventory import REASON_CORRUPT
from pairedbus.pipeline.sources import SOURCE_FILE, quarantine_rows, read_json

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

ROW_COLUMNS = ("namespace", "metric", "entity", "timestamp", "total", "interval_minutes")


@dataclass(frozen=True)
class Metrics:
    rows: DataFrame  # ROW_COLUMNS
    quarantine: DataFrame  # schemas.QUARANTINE layout


def read_metrics(spark: SparkSession, directory: str) -> Metrics:
    raw = read_json(spark, directory, schemas.METRICS_RESPONSE).cache()
    return flatten_metrics(raw)


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
    """Raw responses (schemas.METRICS_RESPONSE + source file) to rows and quarantine."""
    corrupt = F.col(schemas.CORRUPT_RECORD).isNotNull()
    bad_docs = quarantine_rows(raw.where(corrupt), "metrics", F.lit(REASON_CORRUPT), F.col(schemas.CORRUPT_RECORD))

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
    entity_value = F.filter("ts.metadatavalues", lambda mv: F.lower(mv["name"]["value"]) == "entityname")
    points = series.select(
        SOURCE_FILE,
        "interval_minutes",
        "metric_id",
        "metric",
        F.try_element_at(entity_value, F.lit(1))["value"].alias("entity_raw"),
        F.explode("ts.data").alias("p"),
    )
    namespace = F.regexp_extract("metric_id", _NAMESPACE_OF_METRIC, 1)
    timestamp = F.try_to_timestamp(F.col("p.timeStamp"))
    reason = (
        F.when(namespace == "", F.lit(REASON_BAD_METRIC_ID))
        .when(F.col("metric").isNull(), F.lit(REASON_NO_METRIC_NAME))
        .when(F.col("entity_raw").isNull(), F.lit(REASON_NO_ENTITY))
        .when(F.col("interval_minutes").isNull(), F.lit(REASON_BAD_INTERVAL))
        .when(timestamp.isNull(), F.lit(REASON_BAD_TIMESTAMP))
    )
    checked = points.withColumn("_reason", reason)
    bad_points = quarantine_rows(
        checked.where(F.col("_reason").isNotNull()),
        "metrics",
        F.col("_reason"),
        F.to_json(F.struct("metric_id", "metric", F.col("entity_raw").alias("entityname"), "p")),
    )
    rows = checked.where(F.col("_reason").isNull() & F.col("p.total").isNotNull()).select(
        F.lower(namespace).alias("namespace"),
        F.col("metric"),
        F.regexp_replace("entity_raw", contract.ARM_PATH_SEPARATOR, "/").alias("entity"),
        timestamp.alias("timestamp"),
        F.col("p.total").alias("total"),
        F.col("interval_minutes"),
    )
    return Metrics(rows=rows, quarantine=bad_docs.unionByName(bad_points))
