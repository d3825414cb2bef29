"""The estate inventory: namespaces, queues, topics and subscriptions, one row per resource.

Both the ARM shape and the flattened `az` shape become one normalised frame: `kind`, the
`namespace` that holds the resource (lower case: namespace names are DNS labels), the `entity`
name as the service shows it (`~` in ARM ids is `/` in the name, as for backlog queues) and one
column per ARM camelCase property.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from pairedbus import contract
from pairedbus.pipeline import schemas
from pairedbus.pipeline.sources import SOURCE_FILE, quarantine_rows, read_json

KIND_NAMESPACE = "namespace"
KIND_QUEUE = "queue"
KIND_TOPIC = "topic"
KIND_SUBSCRIPTION = "subscription"

_NS = r"(?i)^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.ServiceBus/namespaces/([^/]+)"
_NAMESPACE_ID = _NS + "$"
_QUEUE_ID = _NS + "/queues/(.+)$"
_TOPIC_ID = _NS + "/topics/([^/]+)$"
_SUBSCRIPTION_ID = _NS + "/topics/([^/]+)/subscriptions/([^/]+)$"

REASON_CORRUPT = "malformed JSON, or a value of the wrong type for its property"
REASON_NO_ID = "record without `id`"
REASON_BAD_ID = "`id` is not a Service Bus namespace, queue, topic or subscription resource id"
REASON_NO_SKU = "namespace without `sku.name`"

#: Columns of the normalised inventory, in order.
COLUMNS = (
    SOURCE_FILE,
    "kind",
    "id",
    "namespace",
    "namespace_display",
    "entity",
    "location",
    "sku_name",
    "sku_capacity",
    *schemas.PROPERTY_TYPES,
)


@dataclass(frozen=True)
class Inventory:
    resources: DataFrame  # COLUMNS, valid records only
    quarantine: DataFrame  # schemas.QUARANTINE layout


def read_inventory(spark: SparkSession, directory: str) -> Inventory:
    raw = read_json(spark, directory, schemas.INVENTORY)
    # Spark refuses queries that reference only the corrupt-record column of a raw JSON read.
    raw = raw.cache()
    return split_inventory(raw)


def _kind(id_col: Column) -> Column:
    return (
        F.when(id_col.rlike(_NAMESPACE_ID), F.lit(KIND_NAMESPACE))
        .when(id_col.rlike(_SUBSCRIPTION_ID), F.lit(KIND_SUBSCRIPTION))
        .when(id_col.rlike(_TOPIC_ID), F.lit(KIND_TOPIC))
        .when(id_col.rlike(_QUEUE_ID), F.lit(KIND_QUEUE))
    )


def _entity(kind: Column, id_col: Column) -> Column:
    return (
        F.when(kind == KIND_QUEUE, F.regexp_replace(F.regexp_extract(id_col, _QUEUE_ID, 2), contract.ARM_PATH_SEPARATOR, "/"))
        .when(kind == KIND_TOPIC, F.regexp_extract(id_col, _TOPIC_ID, 2))
        .when(
            kind == KIND_SUBSCRIPTION,
            F.concat(
                F.regexp_extract(id_col, _SUBSCRIPTION_ID, 2),
                F.lit("/subscriptions/"),
                F.regexp_extract(id_col, _SUBSCRIPTION_ID, 3),
            ),
        )
    )


def split_inventory(raw: DataFrame) -> Inventory:
    """Normalise raw records (schemas.INVENTORY + source file) and set aside the invalid ones."""
    id_col = F.col("id")
    kind = _kind(id_col)
    namespace = F.regexp_extract(id_col, _NS, 1)
    props = [F.coalesce(F.col(f"properties.{p}"), F.col(p)).alias(p) for p in schemas.PROPERTY_TYPES]
    reason = (
        F.when(F.col(schemas.CORRUPT_RECORD).isNotNull(), F.lit(REASON_CORRUPT))
        .when(id_col.isNull(), F.lit(REASON_NO_ID))
        .when(kind.isNull(), F.lit(REASON_BAD_ID))
        .when((kind == KIND_NAMESPACE) & F.col("sku.name").isNull(), F.lit(REASON_NO_SKU))
    )
    checked = raw.withColumn("_reason", reason)
    original = [c for c in raw.columns if c not in (schemas.CORRUPT_RECORD, SOURCE_FILE)]
    quarantine = quarantine_rows(
        checked.where(F.col("_reason").isNotNull()),
        "inventory",
        F.col("_reason"),
        F.coalesce(F.col(schemas.CORRUPT_RECORD), F.to_json(F.struct(*original))),
    )
    valid = checked.where(F.col("_reason").isNull())
    resources = valid.select(
        F.col(SOURCE_FILE),
        kind.alias("kind"),
        id_col,
        F.lower(namespace).alias("namespace"),
        namespace.alias("namespace_display"),
        _entity(kind, id_col).alias("entity"),
        F.col("location"),
        F.col("sku.name").alias("sku_name"),
        F.col("sku.capacity").alias("sku_capacity"),
        *props,
    ).dropDuplicates(["kind", "namespace", "entity"])
    return Inventory(resources=resources, quarantine=quarantine)
