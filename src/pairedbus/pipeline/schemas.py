"""Explicit Spark schemas for the pipeline's inputs (no inference: a type surprise is a finding).

The inventory schema is the union of two shapes of the same resource: ARM (`properties` nested,
what `pairedbus inventory export` writes) and the flattened shape `az servicebus ... list` prints
(the same camelCase properties at the top level). The reader coalesces the two.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
    VariantType,
)

CORRUPT_RECORD = "_corrupt_record"

#: The ARM camelCase properties the audit reads, with their JSON types. Durations stay strings
#: (ISO 8601): the shared rules compare them as durations.
PROPERTY_TYPES: dict[str, DataType] = {
    # queues, topics, subscriptions
    "maxSizeInMegabytes": LongType(),
    "maxDeliveryCount": LongType(),
    "maxMessageSizeInKilobytes": LongType(),
    "defaultMessageTimeToLive": StringType(),
    "autoDeleteOnIdle": StringType(),
    "lockDuration": StringType(),
    "duplicateDetectionHistoryTimeWindow": StringType(),
    "deadLetteringOnMessageExpiration": BooleanType(),
    "enableBatchedOperations": BooleanType(),
    "enablePartitioning": BooleanType(),
    "enableExpress": BooleanType(),
    "requiresSession": BooleanType(),
    "requiresDuplicateDetection": BooleanType(),
    "supportOrdering": BooleanType(),
    "forwardTo": StringType(),
    "forwardDeadLetteredMessagesTo": StringType(),
    "status": StringType(),
    # namespaces
    "premiumMessagingPartitions": LongType(),
    "disableLocalAuth": BooleanType(),
    "minimumTlsVersion": StringType(),
    "zoneRedundant": BooleanType(),
    "publicNetworkAccess": StringType(),
    "serviceBusEndpoint": StringType(),
}

SKU = StructType(
    [
        StructField("name", StringType()),
        StructField("tier", StringType()),
        StructField("capacity", LongType()),
    ]
)

PROPERTIES = StructType([StructField(name, dtype) for name, dtype in PROPERTY_TYPES.items()])

INVENTORY = StructType(
    [
        StructField("id", StringType()),
        StructField("name", StringType()),
        StructField("type", StringType()),
        StructField("location", StringType()),
        StructField("sku", SKU),
        StructField("tags", MapType(StringType(), StringType())),
        StructField("properties", PROPERTIES),
        *[StructField(name, dtype) for name, dtype in PROPERTY_TYPES.items()],
        StructField(CORRUPT_RECORD, StringType()),
    ]
)


def _strings_as_variants(dtype: DataType) -> DataType:
    if isinstance(dtype, StringType):
        return VariantType()
    if isinstance(dtype, StructType):
        return StructType([StructField(f.name, _strings_as_variants(f.dataType)) for f in dtype.fields])
    if isinstance(dtype, MapType):
        return MapType(dtype.keyType, _strings_as_variants(dtype.valueType))
    return dtype


#: INVENTORY as the JSON reader takes it: every string a variant. Spark's JSON reader turns any
#: value into a string field's text (`"lockDuration": 60` reads as "60", an object as its JSON), so
#: strings are read as variants and their JSON type checked (inventory.strict_strings).
INVENTORY_JSON = StructType(
    [f if f.name == CORRUPT_RECORD else StructField(f.name, _strings_as_variants(f.dataType)) for f in INVENTORY.fields]
)

#: The flat layout of inventory CSV and Parquet files: the `az` shape with the SKU spelled out.
FLAT_INVENTORY: dict[str, DataType] = {
    "id": StringType(),
    "name": StringType(),
    "type": StringType(),
    "location": StringType(),
    "sku_name": StringType(),
    "sku_tier": StringType(),
    "sku_capacity": LongType(),
    **PROPERTY_TYPES,
}

_LOCALIZABLE = StructType([StructField("value", StringType()), StructField("localizedValue", StringType())])

#: One Azure Monitor Metrics REST response (`GET .../providers/Microsoft.Insights/metrics`).
#: `timeStamp` stays a string so that one bad point is quarantined, not the whole document.
METRICS_RESPONSE = StructType(
    [
        StructField("cost", LongType()),
        StructField("timespan", StringType()),
        StructField("interval", StringType()),
        StructField("namespace", StringType()),
        StructField("resourceregion", StringType()),
        StructField(
            "value",
            ArrayType(
                StructType(
                    [
                        StructField("id", StringType()),
                        StructField("type", StringType()),
                        StructField("name", _LOCALIZABLE),
                        StructField("unit", StringType()),
                        StructField("errorCode", StringType()),
                        StructField(
                            "timeseries",
                            ArrayType(
                                StructType(
                                    [
                                        StructField(
                                            "metadatavalues",
                                            ArrayType(
                                                StructType(
                                                    [
                                                        StructField("name", _LOCALIZABLE),
                                                        StructField("value", StringType()),
                                                    ]
                                                )
                                            ),
                                        ),
                                        StructField(
                                            "data",
                                            ArrayType(
                                                StructType(
                                                    [
                                                        StructField("timeStamp", StringType()),
                                                        StructField("total", DoubleType()),
                                                        StructField("average", DoubleType()),
                                                        StructField("minimum", DoubleType()),
                                                        StructField("maximum", DoubleType()),
                                                        StructField("count", DoubleType()),
                                                    ]
                                                )
                                            ),
                                        ),
                                    ]
                                )
                            ),
                        ),
                    ]
                )
            ),
        ),
        StructField(CORRUPT_RECORD, StringType()),
    ]
)


def _only(struct: StructType, names: tuple[str, ...]) -> StructType:
    return StructType([f for f in struct.fields if f.name in names])


_FULL_POINT = (
    METRICS_RESPONSE["value"].dataType.elementType["timeseries"].dataType.elementType["data"].dataType.elementType  # type: ignore[attr-defined]  # each of these fields is an ArrayType; pyspark types a field's dataType as DataType
)
#: A point as the audit reads it: its time and its `total` (what the counters are exported with).
#: Spark's JSON reader does per-field work for every object it builds (the field's existence default,
#: its filters), and points are nearly all the objects: two fields instead of six took a tenth off the
#: parse (docs/benchmarks.md#figures-behind-the-codes-comments).
_POINT = _only(_FULL_POINT, ("timeStamp", "total"))
_DIMENSION = StructType([StructField("name", _only(_LOCALIZABLE, ("value",))), StructField("value", StringType())])

#: METRICS_RESPONSE narrowed to what the audit reads: Jackson still steps over the other fields, but
#: builds no values for them (the document's `cost`, `timespan`, region, the metric's type, unit and
#: localized names, and a data point's `average`, `minimum`, `maximum` and `count`). A quarantined
#: point is shown with its time and total: a counter's point as it was read (they are queried for
#: Total only), a gauge's (Average, Maximum; never among the rows) with its time alone.
#: A field left out is also no longer checked for its JSON type, which no output depended on.
METRICS_READ = StructType(
    [
        StructField("interval", StringType()),
        StructField(
            "value",
            ArrayType(
                StructType(
                    [
                        StructField("id", StringType()),
                        StructField("name", _only(_LOCALIZABLE, ("value",))),
                        StructField(
                            "timeseries",
                            ArrayType(
                                StructType(
                                    [
                                        StructField("metadatavalues", ArrayType(_DIMENSION)),
                                        StructField("data", ArrayType(_POINT)),
                                    ]
                                )
                            ),
                        ),
                    ]
                )
            ),
        ),
        StructField(CORRUPT_RECORD, StringType()),
    ]
)

#: The flat layout of metrics CSV and Parquet files: one row per data point, as the audit uses them.
FLAT_METRICS: dict[str, DataType] = {
    "namespace": StringType(),
    "metric": StringType(),
    "entity": StringType(),
    "timestamp": TimestampType(),
    "total": DoubleType(),
    "interval_minutes": LongType(),
}

QUARANTINE = StructType(
    [
        StructField("input", StringType()),
        StructField("source_file", StringType()),
        StructField("reason", StringType()),
        StructField("record", StringType()),
    ]
)
