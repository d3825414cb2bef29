"""Stacks exactly at the service's limits are valid: each parses and renders through the offline
plan. The limits are the literals their sources state (see pairedbus/limits.py)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from pairedbus import contract
from pairedbus.iac.render import render_stack
from tests.iac.config.conftest import stack_document

Doc = dict[str, Any]
P = "pairedbus:"


def _queue(doc: Doc, index: int, **values: Any) -> Doc:
    doc["config"][P + "queues"][index].update(values)
    return doc


def _lock_durations(doc: Doc) -> Doc:
    _queue(doc, 0, lockDuration="PT5S")  # .NET MinimumLockDuration
    doc["config"][P + "topics"][0]["subscriptions"][1]["lockDuration"] = "PT5M"  # MaximumLockDuration
    return doc


def _longest_window(doc: Doc) -> Doc:
    doc["config"][P + "maxOutage"] = "P7D"  # MaximumDuplicateDetectionHistoryTimeWindow
    _queue(doc, 1, duplicateDetectionHistoryTimeWindow="P7D")
    return doc


def _shortest_window(doc: Doc) -> Doc:
    doc["config"][P + "maxOutage"] = "PT20S"  # MinimumDuplicateDetectionHistoryTimeWindow
    doc["config"][P + "topics"][0]["duplicateDetectionHistoryTimeWindow"] = "PT20S"
    return doc


def _time_to_live_and_auto_delete(doc: Doc) -> Doc:
    _queue(doc, 0, defaultMessageTimeToLive="PT1S", autoDeleteOnIdle=contract.TIMESPAN_MAX_ISO)
    _queue(doc, 1, defaultMessageTimeToLive=contract.TIMESPAN_MAX_ISO, autoDeleteOnIdle="PT5M")
    return doc


def _namespace_names(doc: Doc) -> Doc:
    doc["config"][P + "primary"]["name"] = "abcde1"  # 6, ends with a digit
    doc["config"][P + "secondary"]["name"] = "c" + "-sb-mgmt" * 6 + "x"  # 50, -sb inside is fine
    return doc


def _resource_group_names(doc: Doc) -> Doc:
    name = "rg_(é)." + "r" * 82 + "9"  # 90 characters; ARM's \w is Unicode
    doc["config"][P + "resourceGroups"]["primary"]["name"] = name
    # Names are case-insensitive: the same group, referenced once more (not created twice).
    doc["config"][P + "resourceGroups"]["secondary"] = {"name": name.upper(), "create": False}
    return doc


def _tags_at_the_limit(doc: Doc) -> Doc:
    tags = {f"tag{i}": "v" for i in range(45)}
    tags["k" * 512] = "v" * 256  # ARM: names 512, values 256
    tags["owner"] = ""
    doc["config"][P + "tags"] = tags  # 47 + this project's 3 on the secondary (role, pair, backlog count) = ARM's 50
    return doc


def _counts_at_the_limit(doc: Doc) -> Doc:
    _queue(doc, 0, maxDeliveryCount=contract.INT32_MAX)
    doc["config"][P + "topics"][0]["subscriptions"][0]["maxDeliveryCount"] = 1  # MinAllowedMaxDeliveryCount
    doc["config"][P + "backlogQueueCount"] = 1
    return doc


def _regions_and_syphon_size(doc: Doc) -> Doc:
    doc["config"][P + "primary"]["location"] = "West Europe"  # display name, as ARM accepts it
    doc["config"][P + "secondary"]["location"] = "NorthEurope"
    doc["config"][P + "syphon"].update(cpu=2.0, memory="4Gi", maxReplicas=30, location="swedencentral")
    doc["config"][P + "syphon"]["image"] = "ghcr.io/contoso/pairedbus-syphon@sha256:" + "a" * 64
    return doc


def _prod_with_forwarding_and_an_unpaired_entity(doc: Doc) -> Doc:
    doc = stack_document("prod")
    doc["config"][P + "deployerPrincipalType"] = "ServicePrincipal"
    doc["config"][P + "queues"].append({"name": "audit-sink", "paired": False, "requiresDuplicateDetection": False})
    doc["config"][P + "queues"][1]["forwardTo"] = "events"  # invoices -> events -> audit -> audit-sink
    doc["config"][P + "topics"][0]["subscriptions"][0]["forwardTo"] = "audit-sink"
    return doc


EDGES: list[tuple[str, Callable[[Doc], Doc]]] = [
    ("lock durations of 5 s and 5 min", _lock_durations),
    ("duplicate window and outage of 7 days", _longest_window),
    ("duplicate window and outage of 20 s", _shortest_window),
    ("TTL of 1 s and TimeSpan.MaxValue, auto-delete of 5 min", _time_to_live_and_auto_delete),
    ("namespace names of 6 and 50", _namespace_names),
    ("resource group of 90 with every allowed character, shared", _resource_group_names),
    ("47 tags, name 512, value 256 and empty", _tags_at_the_limit),
    ("delivery counts 1 and int32 max, one backlog queue", _counts_at_the_limit),
    ("display-name regions, largest syphon, digest image", _regions_and_syphon_size),
    ("prod: service principal, forwarding chain, unpaired sink", _prod_with_forwarding_and_an_unpaired_entity),
]


@pytest.mark.parametrize("edit", [e for _, e in EDGES], ids=[n for n, _ in EDGES])
def test_a_stack_at_the_limits_parses_and_renders(write_stack, dev_document, edit):
    project = write_stack(edit(copy.deepcopy(dev_document)))
    config, plan = render_stack(project, "case")
    rendered = {r.inputs["queueName"]: r.inputs for r in plan.of_type(contract.TYPE_QUEUE)}
    assert set(rendered) == {q.name for q in config.queues}
    assert len(plan.of_type(contract.TYPE_BACKLOG_QUEUE)) == config.backlog_queue_count
    for queue in config.queues:  # the values at the limit reach the resources unchanged
        for field, arm_name in (
            ("lock_duration", "lockDuration"),
            ("max_delivery_count", "maxDeliveryCount"),
            ("default_message_time_to_live", "defaultMessageTimeToLive"),
            ("duplicate_detection_history_time_window", "duplicateDetectionHistoryTimeWindow"),
        ):
            if getattr(queue, field) is not None:
                assert rendered[queue.name][arm_name] == getattr(queue, field), (queue.name, arm_name)


def test_regions_render_by_their_canonical_name(write_stack, dev_document):
    _config, plan = render_stack(write_stack(_regions_and_syphon_size(copy.deepcopy(dev_document))), "case")
    locations = {r.inputs["namespaceName"]: r.inputs["location"] for r in plan.of_type(contract.TYPE_NAMESPACE)}
    assert locations == {"contoso-dev-weu": "westeurope", "contoso-dev-neu": "northeurope"}


def test_there_are_ten_edge_stacks():
    assert len(EDGES) >= 10


def test_paired_entities_without_a_window_get_the_outage(write_stack, dev_document):
    document = copy.deepcopy(dev_document)
    document["config"][P + "maxOutage"] = "PT3H"
    _config, plan = render_stack(write_stack(document), "case")
    entities = plan.of_type(contract.TYPE_QUEUE) + plan.of_type(contract.TYPE_TOPIC)
    assert {e.inputs["duplicateDetectionHistoryTimeWindow"] for e in entities} == {"PT3H"}
    assert all(e.inputs["requiresDuplicateDetection"] is True for e in entities)
