"""Real cost: Azure Cost Management exports in FOCUS 1.0, attributed to pairs next to the estimate.

FOCUS (FinOps Open Cost and Usage Specification, https://focus.finops.org/) 1.0 columns read:
`ResourceId`, `ChargePeriodStart`, `BilledCost` (what the invoice says), `EffectiveCost`
(amortised, after reservations and discounts), `BillingCurrency`, `ServiceName`, `ChargeCategory`
and `Tags` (a JSON object), plus the columns of a charge's identity (CHARGE_IDENTITY). Files: CSV,
gzip CSV or Parquet, any name case (sources.py).

Clean data, before anything is summed:
- A row whose amounts are not finite, or beyond MAX_ABS_AMOUNT, or whose currency is not an ISO
  4217 code, goes to quarantine with the reason.
- One charge is counted once. FOCUS defines no row identifier (FOCUS_Spec issues #639 and #1071
  are open), so a charge's identity is the columns that tell two charges apart (CHARGE_IDENTITY).
  The same charge in several files (a copied export, `focus-2026-11 (copy).csv`) is kept from the
  first file by name; the copies are dropped and counted. Rows with one identity *within* a file
  are the data generator's own rows and all kept. Files that disagree on a charge's amounts are a
  conflict: every copy goes to quarantine, none is guessed at.
- Amounts are only ever summed within one `BillingCurrency`.

Attribution of a row to a pair, per UTC day of `ChargePeriodStart`:
- the secondary namespace (its ARM id, or a resource under it): all of it is the cost of pairing;
- any other resource tagged `pairedbus-pair: <pair>` (the syphon's container app, its Log
  Analytics workspace): the syphon's hosting.
The primary's share (the pings) cannot be told apart on a bill, so the estimate it is compared
with leaves out `ping_operations_usd`. Negative costs are credits and refunds, valid in FOCUS.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession
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

#: The columns of one charge's identity: FOCUS 1.0 columns that tell two charges apart (account and
#: sub-account, billing and charge period, resource, charge category, class and frequency,
#: commitment discount, SKU and price, pricing category, region, service, currency), and the two
#: columns Microsoft's FocusCost adds for its meters (`x_SkuMeterId`, `x_SkuOfferId`; FOCUS's `x_`
#: prefix marks provider columns: https://learn.microsoft.com/cloud-computing/finops/focus/metadata).
#: A column absent from a file is null in all its rows, the same for every copy.
CHARGE_IDENTITY = (
    "BillingAccountId",
    "SubAccountId",
    "BillingPeriodStart",
    "ChargePeriodStart",
    "ChargePeriodEnd",
    "ResourceId",
    "ChargeCategory",
    "ChargeClass",
    "ChargeFrequency",
    "CommitmentDiscountId",
    "CommitmentDiscountStatus",
    "SkuId",
    "SkuPriceId",
    "PricingCategory",
    "RegionId",
    "ServiceName",
    "BillingCurrency",
    "x_SkuMeterId",
    "x_SkuOfferId",
)
_TIMESTAMPS = ("BillingPeriodStart", "ChargePeriodStart", "ChargePeriodEnd")
AMOUNTS = ("BilledCost", "EffectiveCost")
FOCUS_COLUMNS: dict[str, DataType] = {
    **{c: TimestampType() if c in _TIMESTAMPS else StringType() for c in CHARGE_IDENTITY},
    "ResourceName": StringType(),
    "BilledCost": DoubleType(),
    "EffectiveCost": DoubleType(),
    "Tags": StringType(),
}
REQUIRED = ("ResourceId", "ChargePeriodStart", "BilledCost", "EffectiveCost", "BillingCurrency")
#: The largest amount one charge row may carry, in its billing currency. Ten trillion is beyond any
#: real invoice line (in the currencies with the smallest units, IDR or VND at 16,000-26,000 to the
#: dollar, it is still 400-600 million USD for one resource and one charge period) and below
#: 2^53 / 100 (about 9.0e13), where a double stops holding cents exactly and a sum goes wrong.
MAX_ABS_AMOUNT = 1e13
REASON_FOCUS_ROW = (
    "FOCUS row without a readable ResourceId, ChargePeriodStart, BilledCost, EffectiveCost or BillingCurrency"
)
REASON_NOT_FINITE = "BilledCost or EffectiveCost is not a finite number (NaN or infinity)"
REASON_ABSURD = f"BilledCost or EffectiveCost beyond +/-{MAX_ABS_AMOUNT:.0e} (no real charge row is that large)"
REASON_CURRENCY = "BillingCurrency is not an ISO 4217 code (three letters)"
REASON_CHARGE_CONFLICT = (
    "conflicting copies of one charge: files disagree on BilledCost or EffectiveCost for the same FOCUS identity"
)
REFUSED_JSON = "FOCUS exports are CSV or Parquet, not JSON"

CHARGE_COLUMNS = (
    "resource_id",
    "date",
    "billed",
    "effective",
    "currency",
    "service",
    "tag_pair",
    SOURCE_FILE,
    "duplicates",
)
ATTRIBUTION_COLUMNS = (
    "pair",
    "primary",
    "secondary",
    "date",
    "currency",
    "estimate_usd",
    "actual_billed",
    "actual_effective",
    "difference_usd",
)


def _bad_amount(reason_if: str) -> Column:
    amounts = [F.col(c) for c in AMOUNTS]
    if reason_if == REASON_NOT_FINITE:
        return F.greatest(*[F.isnan(a) | (F.abs(a) == float("inf")) for a in amounts])
    return F.greatest(*[F.abs(a) > F.lit(MAX_ABS_AMOUNT) for a in amounts])


def check_rows(flat: DataFrame) -> DataFrame:
    """`flat` with `_reason`, null where every check passed, else why the row goes to quarantine:
    unreadable or missing required columns, amounts that are not finite or absurd, currencies that
    are not ISO 4217 codes. BillingCurrency is trimmed and upper case."""
    unreadable = (F.size("_bad_columns") > 0) | F.greatest(*[F.col(c).isNull() for c in REQUIRED])
    currency = F.upper(F.trim("BillingCurrency"))
    reason = (
        F.when(unreadable, F.lit(REASON_FOCUS_ROW))
        .when(_bad_amount(REASON_NOT_FINITE), F.lit(REASON_NOT_FINITE))
        .when(_bad_amount(REASON_ABSURD), F.lit(REASON_ABSURD))
        .when(~currency.rlike("^[A-Z]{3}$"), F.lit(REASON_CURRENCY))
    )
    return flat.withColumn("_reason", reason).withColumn("BillingCurrency", currency)


def charge_versions(checked: DataFrame) -> DataFrame:
    """Every checked row (`check_rows`) with its charge's `_identity`, `_versions`, `_files` and `_keep`
    (null on a row a check refused: it is no charge).

    Per charge identity and file, the file's rows of that charge (their amounts, sorted) are its
    version. One version across files: the first file's rows are kept (`_keep`). More: a conflict."""
    identity = F.to_json(F.struct(*[(F.lower(c) if c == "ResourceId" else F.col(c)).alias(c) for c in CHARGE_IDENTITY]))
    keyed = checked.withColumn("_identity", identity)
    per_file = (
        keyed.where(F.col("_reason").isNull())
        .groupBy("_identity", SOURCE_FILE)
        .agg(F.to_json(F.array_sort(F.collect_list(F.struct(*AMOUNTS)))).alias("_version"))
    )
    per_charge = per_file.groupBy("_identity").agg(
        F.count_distinct("_version").alias("_versions"),
        F.count(F.lit(1)).alias("_files"),
        F.min(SOURCE_FILE).alias("_keep"),
    )
    # Left: the refused rows stay, for the quarantine to take from the same frame (read_focus).
    return keyed.join(per_charge, ["_identity"], "left")


def split_charges(versions: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(one copy of each charge with `duplicates`, the copies dropped for it; the quarantine: rows a
    check refused, with the reason, and every version of a charge whose files disagree)."""
    passed = F.col("_reason").isNull()
    kept = versions.where(passed & (F.col("_versions") == 1) & (F.col(SOURCE_FILE) == F.col("_keep"))).withColumn(
        "duplicates", (F.col("_files") - 1).cast("long")
    )
    record = F.to_json(F.struct(*[F.col(c) for c in FOCUS_COLUMNS]))
    refused = quarantine_rows(versions.where(~passed), "costs", F.col("_reason"), record)
    conflicts = quarantine_rows(
        versions.where(passed & (F.col("_versions") > 1)), "costs", F.lit(REASON_CHARGE_CONFLICT), record
    )
    return kept.drop("_reason", "_identity", "_versions", "_files", "_keep"), refused.unionByName(conflicts)


def read_focus(spark: SparkSession, source: str | InputFiles) -> tuple[DataFrame, DataFrame, InputFiles]:
    """(charges, quarantine, files). Charges: CHARGE_COLUMNS, one row per charge, resource_id in
    lower case, currency upper case; `duplicates` counts the identical copies dropped."""
    files = source if isinstance(source, InputFiles) else list_files(spark, source, "costs")
    for fmt in (FORMAT_DOCUMENT, FORMAT_LINES):
        for uri in list(files.by_format.get(fmt, [])):
            files.refuse(uri, REFUSED_JSON)
    flat = read_flat(spark, files, FOCUS_COLUMNS, REQUIRED)
    if flat is None:
        schema = (
            "resource_id string, date date, billed double, effective double, currency string, service string, "
            f"tag_pair string, {SOURCE_FILE} string, duplicates long"
        )
        return (
            spark.createDataFrame([], schema),
            spark.createDataFrame([], "input string, source_file string, reason string, record string"),
            files,
        )
    # The files are read, checked and their charges versioned once, in one checkpoint that both the
    # charges and the quarantine are taken from: the attribution joins the charges twice and the summary
    # counts their duplicates, and the quarantine's write would otherwise read and de-duplicate the files
    # again (the sample audit's quarantine job: 4 of its 7 stages). A checkpoint, not a cache, so that the
    # plans built on it do not carry the read's (transform.py says why).
    versions = charge_versions(check_rows(flat)).localCheckpoint(eager=True)
    unique, quarantine = split_charges(versions)
    charges = unique.select(
        F.lower("ResourceId").alias("resource_id"),
        F.to_date("ChargePeriodStart").alias("date"),
        F.col("BilledCost").alias("billed"),
        F.col("EffectiveCost").alias("effective"),
        F.col("BillingCurrency").alias("currency"),
        F.col("ServiceName").alias("service"),
        F.try_element_at(F.from_json("Tags", "map<string,string>"), F.lit(contract.TAG_PAIR)).alias("tag_pair"),
        F.col(SOURCE_FILE),
        F.col("duplicates"),
    )
    return charges, quarantine, files


def attribute(
    charges: DataFrame,
    pairs: DataFrame,
    resources: DataFrame,
    pairing: DataFrame,
    *,
    estimate_currency: str = "USD",
    broadcast: bool = True,
) -> DataFrame:
    """ATTRIBUTION_COLUMNS: per pair and day of the metrics, the estimate (without the pings) next
    to what the bill says for the secondary and the pair's tagged resources, one row per billing
    currency. The estimate (in `estimate_currency`, the price table's) sits on the row of that
    currency, or on a row without a currency when the day has no bill in it; bills in any other
    currency get rows of their own, without an estimate: amounts are never added across currencies.

    `broadcast`: the pairs and namespaces are sent to every task of the charges (a job each to collect
    them); a small estate's charges fit one partition, and joining there costs no job at all."""
    return attribute_actual(
        actual_charges(charges, pairs, resources, broadcast=broadcast), pairing, estimate_currency=estimate_currency
    )


#: The key of an attribution row (with the billing currency).
ATTRIBUTION_KEY = ("pair", "primary", "secondary", "date")


def actual_charges(charges: DataFrame, pairs: DataFrame, resources: DataFrame, *, broadcast: bool = True) -> DataFrame:
    """What the bill says per pair, day and billing currency (ATTRIBUTION_KEY, currency, actual_billed,
    actual_effective): the secondary's charges and the pair's tagged resources'. It does not need the
    pairing's estimate, so it is ready (and, in the audit, checkpointed) while the pairing is priced."""
    small = F.broadcast if broadcast else _as_is
    namespace_ids = resources.where(F.col("kind") == KIND_NAMESPACE).select(
        F.col("namespace").alias("secondary"), F.lower("id").alias("secondary_id")
    )
    keyed = pairs.select("pair", "primary", "secondary").join(namespace_ids, ["secondary"], "left")
    on_secondary = charges.join(
        small(keyed),
        (charges.resource_id == keyed.secondary_id)
        | charges.resource_id.startswith(F.concat(keyed.secondary_id, F.lit("/"))),
    )
    by_tag = charges.join(small(keyed.drop("secondary_id")), charges.tag_pair == keyed.pair).join(
        small(namespace_ids.select(F.col("secondary_id").alias("resource_id"))), ["resource_id"], "left_anti"
    )
    key = list(ATTRIBUTION_KEY)
    columns = [*key, "billed", "effective", "currency"]
    return (
        on_secondary.select(*columns)
        .unionByName(by_tag.select(*columns))
        .groupBy(*key, "currency")
        .agg(F.sum("billed").alias("actual_billed"), F.sum("effective").alias("actual_effective"))
    )


def attribute_actual(actual: DataFrame, pairing: DataFrame, *, estimate_currency: str = "USD") -> DataFrame:
    """ATTRIBUTION_COLUMNS from `actual_charges` and the pairing's estimate (`attribute`)."""
    key = list(ATTRIBUTION_KEY)
    estimate = pairing.select(*key, (F.col("total_usd") - F.col("ping_operations_usd")).alias("estimate_usd"))
    same = F.col("currency") == F.lit(estimate_currency)
    with_estimate = estimate.join(actual.where(same), key, "left").withColumn(
        "difference_usd", F.col("actual_effective") - F.col("estimate_usd")
    )
    other_currencies = (
        actual.where(~same)
        .join(estimate.select(*key), key, "left_semi")
        .select(
            *key,
            "currency",
            F.lit(None).cast("double").alias("estimate_usd"),
            "actual_billed",
            "actual_effective",
            F.lit(None).cast("double").alias("difference_usd"),
        )
    )
    rounded = [
        F.round(c, 6).alias(c) if c.endswith("_usd") or c.startswith("actual_") else F.col(c)
        for c in ATTRIBUTION_COLUMNS
    ]
    return (
        with_estimate.select(*ATTRIBUTION_COLUMNS)
        .unionByName(other_currencies.select(*ATTRIBUTION_COLUMNS))
        .select(*rounded)
        .orderBy("pair", "date", "currency")
    )


def _as_is(frame: DataFrame) -> DataFrame:
    return frame
