"""Real cost: Azure Cost Management exports in FOCUS 1.0, attributed to pairs next to the estimate.

FOCUS (FinOps Open Cost and Usage Specification, https://focus.finops.org/) 1.0 columns read:
`ResourceId`, `ChargePeriodStart`, `BilledCost` (what the invoice says), `EffectiveCost`
(amortised, after reservations and discounts), `BillingCurrency`, `ServiceName`, `ChargeCategory`
and `Tags` (a JSON object). Files: CSV, gzip CSV or Parquet, any name case (sources.py).

Attribution of a row to a pair, per UTC day of `ChargePeriodStart`:
- the secondary namespace (its ARM id, or a resource under it): all of it is the cost of pairing;
- any other resource tagged `pairedbus-pair: <pair>` (the syphon's container app, its Log
  Analytics workspace): the syphon's hosting.
The primary's share (the pings) cannot be told apart on a bill, so the estimate it is compared
with leaves out `ping_operations_usd`. Negative costs are credits and refunds, valid in FOCUS.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, DoubleType, StringType, TimestampType

from pairedbus import contract
from pairedbus.pipeline.inventory import KIND_NAMESPACE
from pairedbus.pipeline.sources import (
    FORMAT_DOCUMENT,
    FORMAT_LINES,
    SOURCE_FILE,
    InputFiles,
    list_files,
    quarantine_rows,
    read_flat,
)

FOCUS_COLUMNS: dict[str, DataType] = {
    "ResourceId": StringType(),
    "ResourceName": StringType(),
    "ChargePeriodStart": TimestampType(),
    "BilledCost": DoubleType(),
    "EffectiveCost": DoubleType(),
    "BillingCurrency": StringType(),
    "ServiceName": StringType(),
    "ChargeCategory": StringType(),
    "Tags": StringType(),
}
REQUIRED = ("ResourceId", "ChargePeriodStart", "BilledCost", "EffectiveCost", "BillingCurrency")
REASON_FOCUS_ROW = (
    "FOCUS row without a readable ResourceId, ChargePeriodStart, BilledCost, EffectiveCost or BillingCurrency"
)
REFUSED_JSON = "FOCUS exports are CSV or Parquet, not JSON"

ATTRIBUTION_COLUMNS = (
    "pair",
    "primary",
    "secondary",
    "date",
    "estimate_usd",
    "actual_billed_usd",
    "actual_effective_usd",
    "difference_usd",
    "currency",
)


def read_focus(spark: SparkSession, source: str | InputFiles) -> tuple[DataFrame, DataFrame, InputFiles]:
    """(charges, quarantine, files). Charges: resource_id (lower case), date, billed, effective,
    currency, service, tag_pair."""
    files = source if isinstance(source, InputFiles) else list_files(spark, source, "costs")
    for fmt in (FORMAT_DOCUMENT, FORMAT_LINES):
        for uri in files.by_format.pop(fmt, []):
            files.refused[uri] = REFUSED_JSON
    flat = read_flat(spark, files, FOCUS_COLUMNS)
    if flat is None:
        schema = "resource_id string, date date, billed double, effective double, currency string, service string, tag_pair string"
        return (
            spark.createDataFrame([], schema),
            spark.createDataFrame([], "input string, source_file string, reason string, record string"),
            files,
        )
    bad = (F.size("_bad_columns") > 0) | F.greatest(*[F.col(c).isNull() for c in REQUIRED])
    quarantine = quarantine_rows(
        flat.where(bad), "costs", F.lit(REASON_FOCUS_ROW), F.to_json(F.struct(*[F.col(c) for c in FOCUS_COLUMNS]))
    )
    charges = flat.where(~bad).select(
        F.lower("ResourceId").alias("resource_id"),
        F.to_date("ChargePeriodStart").alias("date"),
        F.col("BilledCost").alias("billed"),
        F.col("EffectiveCost").alias("effective"),
        F.col("BillingCurrency").alias("currency"),
        F.col("ServiceName").alias("service"),
        F.from_json("Tags", "map<string,string>")[contract.TAG_PAIR].alias("tag_pair"),
        F.col(SOURCE_FILE),
    )
    return charges, quarantine, files


def attribute(charges: DataFrame, pairs: DataFrame, resources: DataFrame, pairing: DataFrame) -> DataFrame:
    """ATTRIBUTION_COLUMNS: per pair and day of the metrics, the estimate (without the pings) next
    to what the bill says for the secondary and the pair's tagged resources."""
    namespace_ids = resources.where(F.col("kind") == KIND_NAMESPACE).select(
        F.col("namespace").alias("secondary"), F.lower("id").alias("secondary_id")
    )
    keyed = pairs.select("pair", "primary", "secondary").join(namespace_ids, ["secondary"], "left")
    on_secondary = charges.join(
        F.broadcast(keyed),
        (charges.resource_id == keyed.secondary_id)
        | charges.resource_id.startswith(F.concat(keyed.secondary_id, F.lit("/"))),
    )
    by_tag = charges.join(F.broadcast(keyed.drop("secondary_id")), charges.tag_pair == keyed.pair).join(
        F.broadcast(namespace_ids.select(F.col("secondary_id").alias("resource_id"))), ["resource_id"], "left_anti"
    )
    columns = ["pair", "primary", "secondary", "date", "billed", "effective", "currency"]
    actual = (
        on_secondary.select(*columns)
        .unionByName(by_tag.select(*columns))
        .groupBy("pair", "primary", "secondary", "date")
        .agg(
            F.sum("billed").alias("actual_billed_usd"),
            F.sum("effective").alias("actual_effective_usd"),
            F.array_join(F.array_sort(F.collect_set("currency")), ",").alias("currency"),
        )
    )
    estimate = pairing.select(
        "pair",
        "primary",
        "secondary",
        "date",
        (F.col("total_usd") - F.col("ping_operations_usd")).alias("estimate_usd"),
    )
    return (
        estimate.join(actual, ["pair", "primary", "secondary", "date"], "left")
        .withColumn("difference_usd", F.col("actual_effective_usd") - F.col("estimate_usd"))
        .select(*[F.round(c, 6).alias(c) if c.endswith("_usd") else F.col(c) for c in ATTRIBUTION_COLUMNS])
        .orderBy("pair", "date")
    )
