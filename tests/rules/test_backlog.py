from __future__ import annotations

from datetime import timedelta

import pytest

from pairedbus import contract, durations
from pairedbus.rules import (
    BACKLOG_QUEUE_SET,
    BACKLOG_QUEUE_SETTINGS,
    MANDATORY,
    PAIRED_REGIONS_DIFFER,
    check_backlog_in_secondary,
    check_backlog_queue,
    check_pair,
    extra_backlog_queues,
)

Q0 = contract.backlog_queue_name("contoso", 0)
PREMIUM_2 = {"name": "contoso-backlog", "sku": "Premium", "premiumMessagingPartitions": 2}
STANDARD = {"name": "contoso-backlog", "sku": "Standard"}


def table(**overrides):
    return {**contract.BACKLOG_QUEUE_PROPERTIES, **overrides}


def test_declared_table_passes_without_knowing_the_namespace():
    assert check_backlog_queue(Q0, table(namespaceName="x", queueName=Q0), None) == []


def test_each_drifted_property_is_one_finding_with_expected_and_actual():
    [finding] = check_backlog_queue(Q0, table(maxSizeInMegabytes=1024), STANDARD)
    assert finding.rule == BACKLOG_QUEUE_SETTINGS and finding.severity == MANDATORY
    assert (finding.entity, finding.namespace, finding.property) == (Q0, "contoso-backlog", "maxSizeInMegabytes")
    assert (finding.expected, finding.actual) == (5120, 1024)
    assert "maxSizeInMegabytes expected 5120, got 1024" in finding.message


def test_a_missing_table_property_is_drift():
    props = table()
    del props["autoDeleteOnIdle"]
    [finding] = check_backlog_queue(Q0, props, None)
    assert finding.property == "autoDeleteOnIdle" and "<absent>" in finding.message


def test_booleans_are_not_numbers():
    [finding] = check_backlog_queue(Q0, table(enableBatchedOperations=1), None)
    assert finding.property == "enableBatchedOperations"


def test_partitioning_is_required_in_a_partitioned_premium_namespace():
    assert check_backlog_queue(Q0, table(enablePartitioning=True), PREMIUM_2) == []
    [finding] = check_backlog_queue(Q0, table(), PREMIUM_2)
    assert finding.property == "enablePartitioning" and finding.expected is True


def test_partitioning_is_an_extra_property_where_the_namespace_does_not_require_it():
    [finding] = check_backlog_queue(Q0, table(enablePartitioning=True), STANDARD)
    assert finding.property == "enablePartitioning"
    assert check_backlog_queue(Q0, table(), STANDARD) == []


def test_live_values_compare_durations_as_durations():
    live = table(
        defaultMessageTimeToLive=durations.duration_timedelta(contract.TIMESPAN_MAX_ISO),
        autoDeleteOnIdle=contract.TIMESPAN_MAX_ISO,
        lockDuration=timedelta(seconds=60),
        requiresSession=False,
        status="Active",
        enablePartitioning=False,
    )
    assert check_backlog_queue(Q0, live, STANDARD, live=True) == []
    [finding] = check_backlog_queue(Q0, {**live, "lockDuration": timedelta(seconds=30)}, STANDARD, live=True)
    assert finding.property == "lockDuration"


@pytest.mark.parametrize(("sku", "reported"), [("Standard", 5120 * 16), ("Premium", 5120 * 2), ("Standard", 5120)])
def test_live_size_of_a_partitioned_queue_is_read_partition_aware(sku, reported):
    live = table(maxSizeInMegabytes=reported, enablePartitioning=True)
    assert check_backlog_queue(Q0, live, {"name": "ns", "sku": sku}, live=True) == []


def test_live_size_multiplied_but_not_partitioned_is_drift():
    live = table(maxSizeInMegabytes=5120 * 16, enablePartitioning=False)
    [finding] = check_backlog_queue(Q0, live, STANDARD, live=True)
    assert finding.property == "maxSizeInMegabytes" and finding.actual == 81920


def test_live_size_times_16_is_drift_in_premium():
    live = table(maxSizeInMegabytes=5120 * 16, enablePartitioning=True)
    assert [f.property for f in check_backlog_queue(Q0, live, PREMIUM_2, live=True)] == ["maxSizeInMegabytes"]


def test_arm_namespace_shape_is_accepted():
    arm = {
        "name": "contoso-backlog",
        "sku": {"name": "Premium", "tier": "Premium"},
        "properties": {"premiumMessagingPartitions": 4},
    }
    [finding] = check_backlog_queue(Q0, table(), arm)
    assert finding.property == "enablePartitioning"


# --- check_pair ---------------------------------------------------------------------------------


PRIMARY_NS = {"name": "contoso", "location": "westeurope"}
SECONDARY_NS = {"name": "contoso-backlog", "location": "northeurope"}


def test_pair_passes_different_regions_and_contiguous_indices():
    assert check_pair(PRIMARY_NS, SECONDARY_NS, contract.backlog_queue_names("contoso", 10)) == []


def test_pair_fails_one_region_spelled_two_ways():
    [finding] = check_pair(PRIMARY_NS, {**SECONDARY_NS, "location": "West Europe"}, [Q0])
    assert finding.rule == PAIRED_REGIONS_DIFFER and finding.entity == "contoso-backlog"


def test_pair_reports_each_missing_index():
    names = [contract.backlog_queue_name("contoso", i) for i in (0, 3, 4)]
    found = check_pair(PRIMARY_NS, SECONDARY_NS, names)
    assert {f.entity for f in found} == {contract.backlog_queue_name("contoso", i) for i in (1, 2)}
    assert all(f.rule == BACKLOG_QUEUE_SET for f in found)


def test_pair_fails_a_foreign_prefix_and_a_repeated_index():
    names = [Q0, Q0, contract.backlog_queue_name("other", 1)]
    messages = [f.message for f in check_pair(PRIMARY_NS, SECONDARY_NS, names)]
    assert any("'other'" in m for m in messages)
    assert any("appears 2 times" in m for m in messages)


def test_pair_without_backlog_queues_fails():
    [finding] = check_pair(PRIMARY_NS, SECONDARY_NS, [])
    assert finding.rule == BACKLOG_QUEUE_SET


def test_pair_rejects_names_that_are_not_backlog_names():
    found = check_pair(PRIMARY_NS, SECONDARY_NS, [Q0, "contoso/x-servicebus-transfer/01"])
    assert any(f.entity == "contoso/x-servicebus-transfer/01" for f in found)


def test_backlog_in_secondary_compares_names_case_insensitively():
    assert check_backlog_in_secondary(Q0, "Contoso-Backlog", "contoso-backlog") == []
    [finding] = check_backlog_in_secondary(Q0, "contoso", "contoso-backlog")
    assert finding.property == "namespaceName" and finding.actual == "contoso"


# --- Extras beyond the count (paired-namespaces.md: "explicitly allows" them) -------------------

SPEC_EXAMPLE = [*contract.backlog_queue_names("contoso", 5), "contoso/x-servicebus-transfer/7"]


def test_the_specs_own_example_five_configured_plus_seven_is_clean():
    assert check_pair(PRIMARY_NS, SECONDARY_NS, SPEC_EXAMPLE, count=5) == []
    assert extra_backlog_queues(SPEC_EXAMPLE, 5) == ["contoso/x-servicebus-transfer/7"]


def test_queues_left_by_a_lowered_count_are_extras_not_findings():
    names = contract.backlog_queue_names("contoso", 10)
    assert check_pair(PRIMARY_NS, SECONDARY_NS, names, count=3) == []
    assert extra_backlog_queues(names, 3) == names[3:]


def test_a_missing_index_below_the_count_fails_even_with_extras_beyond_it():
    names = [n for n in SPEC_EXAMPLE if not n.endswith("/2")]
    [finding] = check_pair(PRIMARY_NS, SECONDARY_NS, names, count=5)
    assert finding.rule == BACKLOG_QUEUE_SET and finding.entity == "contoso/x-servicebus-transfer/2"
    assert "backlogQueueCount 5 needs indices 0..4" in finding.message


def test_every_index_missing_below_the_count_is_named():
    found = check_pair(PRIMARY_NS, SECONDARY_NS, [Q0], count=3)
    assert [f.entity for f in found] == [contract.backlog_queue_name("contoso", i) for i in (1, 2)]
