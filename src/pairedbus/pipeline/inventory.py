"""The estate inventory: namespaces, queues, topics and subscriptions, one row per resource.

Both the ARM shape and the flattened `az` shape become one normalised frame: `kind`, the
`namespace` that holds the resource (lower case: namespace names are DNS labels), the `entity`
name as the service shows it (`~` in ARM ids is `/` in the name, as for backlog queues), its
`entity_key` (lower case: Service Bus entity names are case-insensitive, so `ORDERS` and `orders`
are one queue) and one column per ARM camelCase property.

A record is quarantined when any value has the wrong JSON type (a number where ARM has a string
counts too). A record that carries a property both at the top level and under `properties` with
different values becomes two versions of its resource: a listed conflict, each version judged.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, MapType, StringType, StructType

from pairedbus import contract
from pairedbus.pipeline import schemas
from pairedbus.pipeline.sources import (
    SOURCE_FILE,
    InputFiles,
    list_files,
    quarantine_rows,
    read_flat,
    read_json,
    union_all,
)

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
REASON_IMPOSSIBLE = "impossible value (a count or size below 1)"
#: Where the type check records the fields of the wrong JSON type (quarantined as REASON_CORRUPT).
WRONG_TYPES = "_wrong_types"
#: The column a flat (CSV, Parquet) inventory file must have: without it, no record says which resource it is.
FLAT_REQUIRED = ("id",)
#: Counts and sizes that are at least 1 on any real resource.
POSITIVE_PROPERTIES = (
    "maxSizeInMegabytes",
    "maxDeliveryCount",
    "maxMessageSizeInKilobytes",
    "premiumMessagingPartitions",
)

#: Columns of the normalised inventory, in order.
COLUMNS = (
    SOURCE_FILE,
    "kind",
    "id",
    "namespace",
    "namespace_display",
    "entity",
    "entity_key",
    "location",
    "sku_name",
    "sku_capacity",
    "tags",
    *schemas.PROPERTY_TYPES,
)
#: The columns that say which resource a record is; two records of one resource that differ in
#: CONTENT conflict. (The id and the displayed names may differ in spelling: `~` or `/`, case.)
IDENTITY = ("kind", "namespace", "entity_key")
CONTENT = tuple(c for c in COLUMNS if c not in (SOURCE_FILE, "id", "namespace_display", "entity"))


@dataclass(frozen=True)
class Inventory:
    #: COLUMNS, valid records; exact duplicates dropped (the `duplicates` column counts the copies
    #: dropped for each kept row); conflicting versions of one resource all kept.
    resources: DataFrame
    quarantine: DataFrame  # schemas.QUARANTINE layout


def read_inventory(spark: SparkSession, source: str | InputFiles) -> Inventory:
    files = source if isinstance(source, InputFiles) else list_files(spark, source, "inventory")
    frames = []
    raw = read_json(spark, files, schemas.INVENTORY_JSON)
    if raw is not None:
        # Spark refuses queries that reference only the corrupt-record column of a raw JSON read.
        # Cached after the type check: strings take less memory in a cache than the variants read.
        frames.append(strict_strings(raw).cache())
    flat = read_flat(spark, files, schemas.FLAT_INVENTORY, FLAT_REQUIRED)
    if flat is not None:
        frames.append(nest_flat_inventory(flat).withColumn(WRONG_TYPES, F.array().cast("array<string>")))
    combined = union_all(frames)
    if combined is None:
        combined = (
            spark.createDataFrame([], schemas.INVENTORY)
            .withColumn(SOURCE_FILE, F.lit(None).cast("string"))
            .withColumn(WRONG_TYPES, F.array().cast("array<string>"))
        )
    return split_inventory(combined)


def _wrong_json_type(value: Column) -> Column:
    """A variant that holds a value (not JSON null) of a type other than string."""
    return value.isNotNull() & ~F.is_variant_null(value) & (F.schema_of_variant(value) != F.lit("STRING"))


def _as_string(value: Column) -> Column:
    return F.when(F.schema_of_variant(value) == F.lit("STRING"), F.try_variant_get(value, "$", "string"))


def strict_strings(raw: DataFrame) -> DataFrame:
    """JSON records read with schemas.INVENTORY_JSON -> schemas.INVENTORY layout, the source file,
    and WRONG_TYPES: the fields whose JSON value is not a string where ARM has one."""
    wrong: list[Column] = []
    fields: list[Column] = []

    def convert(path: str, target: DataType) -> Column:
        column = F.col(path)
        if isinstance(target, StringType):
            wrong.append(F.when(_wrong_json_type(column), F.lit(path)))
            return _as_string(column)
        if isinstance(target, MapType):
            values = F.map_values(column)
            wrong.append(F.when(F.exists(values, _wrong_json_type), F.lit(path)))
            return F.transform_values(column, lambda _k, v: _as_string(v))
        if isinstance(target, StructType):
            parts = [convert(f"{path}.{f.name}", f.dataType).alias(f.name) for f in target.fields]
            return F.when(column.isNotNull(), F.struct(*parts))
        return column

    for field in schemas.INVENTORY.fields:
        if field.name == schemas.CORRUPT_RECORD:
            fields.append(F.col(field.name))
        else:
            fields.append(convert(field.name, field.dataType).alias(field.name))
    return raw.select(*fields, F.col(SOURCE_FILE), F.array_compact(F.array(*wrong)).alias(WRONG_TYPES))


def nest_flat_inventory(flat: DataFrame) -> DataFrame:
    """Flat CSV/Parquet records (schemas.FLAT_INVENTORY) in the raw JSON layout (schemas.INVENTORY)."""
    record = F.to_json(F.struct(*[F.col(c) for c in schemas.FLAT_INVENTORY]))
    fields = []
    for field in schemas.INVENTORY.fields:
        if field.name == "sku":
            sku = F.struct(
                F.col("sku_name").alias("name"),
                F.col("sku_tier").alias("tier"),
                F.col("sku_capacity").alias("capacity"),
            )
            fields.append(F.when(F.col("sku_name").isNotNull(), sku).alias("sku"))
        elif field.name == schemas.CORRUPT_RECORD:
            fields.append(F.when(F.size("_bad_columns") > 0, record).alias(field.name))
        elif field.name in schemas.FLAT_INVENTORY:
            fields.append(F.col(field.name))
        else:
            fields.append(F.lit(None).cast(field.dataType).alias(field.name))
    return flat.select(*fields, F.col(SOURCE_FILE))


def _kind(id_col: Column) -> Column:
    return (
        F.when(id_col.rlike(_NAMESPACE_ID), F.lit(KIND_NAMESPACE))
        .when(id_col.rlike(_SUBSCRIPTION_ID), F.lit(KIND_SUBSCRIPTION))
        .when(id_col.rlike(_TOPIC_ID), F.lit(KIND_TOPIC))
        .when(id_col.rlike(_QUEUE_ID), F.lit(KIND_QUEUE))
    )


def _entity(kind: Column, id_col: Column) -> Column:
    return (
        F.when(
            kind == KIND_QUEUE,
            F.regexp_replace(F.regexp_extract(id_col, _QUEUE_ID, 2), contract.ARM_PATH_SEPARATOR, "/"),
        )
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
    # A property both at the top level and under `properties`, with different values: two versions
    # (0: `properties` first, 1: the top level first), so the conflict is listed, never merged.
    disagree = F.greatest(
        F.lit(False),
        F.lit(False),
        *[F.coalesce(F.col(f"properties.{p}") != F.col(p), F.lit(False)) for p in schemas.PROPERTY_TYPES],
    )
    props = [
        F.when(F.col("_version") == 0, F.coalesce(F.col(f"properties.{p}"), F.col(p)))
        .otherwise(F.coalesce(F.col(p), F.col(f"properties.{p}")))
        .alias(p)
        for p in schemas.PROPERTY_TYPES
    ]
    reason = (
        F.when(F.col(schemas.CORRUPT_RECORD).isNotNull() | (F.size(WRONG_TYPES) > 0), F.lit(REASON_CORRUPT))
        .when(id_col.isNull(), F.lit(REASON_NO_ID))
        .when(kind.isNull(), F.lit(REASON_BAD_ID))
        .when((kind == KIND_NAMESPACE) & F.col("sku.name").isNull(), F.lit(REASON_NO_SKU))
        .when(_impossible(), F.lit(REASON_IMPOSSIBLE))
    )
    checked = raw.withColumn("_reason", reason)
    original = [c for c in raw.columns if c not in (schemas.CORRUPT_RECORD, SOURCE_FILE, WRONG_TYPES)]
    # The fields of the wrong type are named first (their values cannot be read as the type ARM has).
    wrong = F.when(
        F.size(WRONG_TYPES) > 0,
        F.to_json(F.struct(F.col(WRONG_TYPES).alias("wrong_json_type"), *[F.col(c) for c in original])),
    )
    quarantine = quarantine_rows(
        checked.where(F.col("_reason").isNotNull()),
        "inventory",
        F.col("_reason"),
        F.coalesce(F.col(schemas.CORRUPT_RECORD), wrong, F.to_json(F.struct(*original))),
    )
    valid = checked.where(F.col("_reason").isNull()).withColumn(
        "_version", F.explode(F.when(disagree, F.array(F.lit(0), F.lit(1))).otherwise(F.array(F.lit(0))))
    )
    entity = _entity(kind, id_col)
    resources = valid.select(
        F.col(SOURCE_FILE),
        kind.alias("kind"),
        id_col,
        F.lower(namespace).alias("namespace"),
        namespace.alias("namespace_display"),
        entity.alias("entity"),
        F.lower(entity).alias("entity_key"),
        F.col("location"),
        F.col("sku.name").alias("sku_name"),
        F.col("sku.capacity").alias("sku_capacity"),
        F.col("tags"),
        *props,
    )
    return Inventory(resources=drop_exact_duplicates(resources), quarantine=quarantine)


def _impossible() -> Column:
    values = [F.coalesce(F.col(f"properties.{p}"), F.col(p)) for p in POSITIVE_PROPERTIES]
    values.append(F.col("sku.capacity"))
    return F.coalesce(F.greatest(*[F.coalesce(v < 1, F.lit(False)) for v in values]), F.lit(False))


def drop_exact_duplicates(resources: DataFrame) -> DataFrame:
    """One row per distinct version of each resource; `duplicates` counts the identical copies
    dropped. Versions that differ are all kept: `conflicts` reports them, the rules judge each."""
    content = F.to_json(F.struct(*[F.col(c) for c in CONTENT]))
    # Identical content within a group: any row's values are the group's (the first file by name).
    others = [c for c in COLUMNS if c not in IDENTITY]
    first = F.min_by(F.struct(*[F.col(c) for c in others]), F.col(SOURCE_FILE))
    return (
        resources.withColumn("_content", content)
        .groupBy(*IDENTITY, "_content")
        .agg(first.alias("_v"), (F.count(F.lit(1)) - 1).alias("duplicates"))
        .select(*IDENTITY, *[F.col(f"_v.{c}").alias(c) for c in others], "duplicates")
        .select(*COLUMNS, "duplicates")
    )
