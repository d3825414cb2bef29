"""The pipeline's explicit Spark schemas (`pipeline/schemas.py`), checked against the ARM models of the
installed azure-mgmt-servicebus (no Spark session: schemas are plain pyspark types)."""

from __future__ import annotations

from azure.mgmt.servicebus import models
from pyspark.sql.types import BooleanType, LongType, MapType, StringType, StructType, VariantType

from pairedbus.pipeline.schemas import CORRUPT_RECORD, FLAT_INVENTORY, INVENTORY, INVENTORY_JSON, PROPERTY_TYPES
from pairedbus.sdk import rest_names

ARM_PROPERTIES = (
    models.SBQueueProperties,
    models.SBTopicProperties,
    models.SBSubscriptionProperties,
    models.SBNamespaceProperties,
)


def _arm_annotations() -> dict[str, set[str]]:
    """ARM JSON property name -> the generated models' annotations for it (as text)."""
    found: dict[str, set[str]] = {}
    for model in ARM_PROPERTIES:
        annotations: dict[str, object] = {}
        for klass in reversed(model.__mro__):
            annotations.update(getattr(klass, "__annotations__", {}))
        for attr, rest in rest_names(model).items():
            found.setdefault(rest, set()).add(str(annotations.get(attr)))
    return found


def test_each_property_has_the_json_type_arm_gives_it() -> None:
    # int -> long; bool -> boolean; str, enums and durations (ISO 8601 text on the wire) -> string
    arm = _arm_annotations()
    for name, dtype in PROPERTY_TYPES.items():
        kinds = arm[name]
        if isinstance(dtype, LongType):
            assert kinds == {"typing.Optional[int]"}, name
        elif isinstance(dtype, BooleanType):
            assert kinds == {"typing.Optional[bool]"}, name
        else:
            assert isinstance(dtype, StringType), name
            assert all("str" in k or "timedelta" in k for k in kinds), (name, kinds)


def test_the_json_reader_takes_every_string_as_a_variant_except_the_corrupt_record() -> None:
    fields = {f.name: f.dataType for f in INVENTORY_JSON.fields}
    assert fields[CORRUPT_RECORD] == StringType()
    assert fields["id"] == VariantType() and fields["lockDuration"] == VariantType()
    assert fields["maxDeliveryCount"] == LongType()
    assert isinstance(fields["tags"], MapType) and fields["tags"].valueType == VariantType()
    properties = fields["properties"]
    assert isinstance(properties, StructType)
    assert properties["forwardTo"].dataType == VariantType() and properties["requiresSession"].dataType == BooleanType()
    assert [f.name for f in INVENTORY_JSON.fields] == [f.name for f in INVENTORY.fields]


def test_the_flat_layout_spells_out_the_sku_and_has_every_property() -> None:
    assert {"sku_name", "sku_tier", "sku_capacity"} <= set(FLAT_INVENTORY)
    assert set(PROPERTY_TYPES) <= set(FLAT_INVENTORY)
