"""The audit's transform (`pipeline/transform.py`): a resource whose versions differ is one conflict row,
with its versions and the files they came from; identical copies are no conflict. The tables are built on
checkpoints of the small tables before them, not on their plans."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pairedbus.pipeline.inventory import read_inventory
from pairedbus.pipeline.prices import load_prices
from pairedbus.pipeline.read import read_estate
from pairedbus.pipeline.transform import conflicting_resources, transform

from .conftest import ns_id

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "estate"

pytestmark = pytest.mark.spark


def test_differing_versions_of_a_resource_are_one_conflict_naming_both_files(spark, write_lines) -> None:
    orders = f"{ns_id('contoso')}/queues/orders"
    invoices = f"{ns_id('contoso')}/queues/invoices"
    write_lines("inv/a.jsonl", [{"id": orders, "properties": {"lockDuration": "PT1M"}}, {"id": invoices}])
    directory = write_lines("inv/b.jsonl", [{"id": orders, "properties": {"lockDuration": "PT5M"}}, {"id": invoices}])
    [conflict] = conflicting_resources(read_inventory(spark, str(directory)).resources).collect()
    assert (conflict.entity, conflict.versions) == ("orders", 2)
    assert sorted(json.loads(c)["lockDuration"] for c in conflict.contents) == ["PT1M", "PT5M"]
    assert [f.rsplit("/", 1)[1] for f in conflict.source_files.split(" ")] == ["a.jsonl", "b.jsonl"]


def leaves(frame) -> list[str]:
    """The kinds of the leaves of a frame's analyzed plan: `LogicalRDD` for a checkpoint,
    `LogicalRelation` for a file scan."""
    found = frame._jdf.queryExecution().analyzed().collectLeaves()
    return sorted({found.apply(i).getClass().getSimpleName() for i in range(found.size())})


def test_the_tables_are_planned_on_checkpoints_not_on_the_input_files(spark) -> None:
    estate = read_estate(spark, str(SAMPLES / "inventory"), str(SAMPLES / "metrics"), str(SAMPLES / "costs"))
    tables = transform(spark, estate, load_prices())
    # Cached instead, the pairing's plan held 74 file scans, the inventory's over and over (1,439 operators).
    for name in ("resources", "grains", "cost", "pairs", "pairing", "attribution", "conflicts"):
        assert leaves(getattr(tables, name)) == ["LogicalRDD"], name
    assert "LogicalRelation" in leaves(tables.quarantine)  # the one second pass over the files, by design
