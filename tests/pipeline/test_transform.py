"""The audit's transform (`pipeline/transform.py`): a resource whose versions differ is one conflict row,
with its versions and the files they came from; identical copies are no conflict."""

from __future__ import annotations

import json

import pytest

from pairedbus.pipeline.inventory import read_inventory
from pairedbus.pipeline.transform import conflicting_resources

from .conftest import ns_id

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
