"""The backlog rules' findings whole (issue 22): entity, namespace, property, expected, actual,
severity and message are the audit's and the gate's columns, so each finding is stated in full."""

from __future__ import annotations

from pairedbus.rules import Finding, check_backlog_in_secondary, check_backlog_queue, check_pair

Q0 = "contoso/x-servicebus-transfer/0"
TABLE = {
    "maxSizeInMegabytes": 5120,
    "maxDeliveryCount": 2147483647,
    "defaultMessageTimeToLive": "P10675199DT2H48M5.4775807S",
    "autoDeleteOnIdle": "P10675199DT2H48M5.4775807S",
    "lockDuration": "PT1M",
    "deadLetteringOnMessageExpiration": True,
    "enableBatchedOperations": True,
}
PREMIUM_2 = {"name": "contoso-backlog", "sku": "Premium", "premiumMessagingPartitions": 2}
STANDARD = {"name": "contoso-backlog", "sku": "Standard"}
PRIMARY_NS = {"name": "contoso", "location": "westeurope"}
SECONDARY_NS = {"name": "contoso-backlog", "location": "northeurope"}


def settings(prop, expected, actual, message, *, ns="contoso-backlog", entity=Q0):
    return Finding("backlog-queue-settings", entity, ns, prop, expected, actual, "mandatory", message)


def in_set(entity, prop, expected, actual, message, *, ns="contoso-backlog"):
    return Finding("backlog-queue-set", entity, ns, prop, expected, actual, "mandatory", message)


def test_a_drifted_table_value_is_stated_in_full():
    assert check_backlog_queue(Q0, {**TABLE, "lockDuration": "PT30S"}, STANDARD) == [
        settings(
            "lockDuration",
            "PT1M",
            "PT30S",
            f"backlog queue {Q0}: lockDuration expected 'PT1M', got 'PT30S'",
        )
    ]


def test_an_absent_table_value_is_stated_in_full():
    props = {k: v for k, v in TABLE.items() if k != "maxDeliveryCount"}
    assert check_backlog_queue(Q0, props, None) == [
        settings(
            "maxDeliveryCount",
            2147483647,
            None,
            f"backlog queue {Q0}: maxDeliveryCount expected 2147483647, got <absent>",
            ns=None,
        )
    ]


def test_each_extra_property_is_one_finding_in_name_order():
    props = {**TABLE, "requiresSession": False, "forwardTo": "orders", "queueName": Q0, "namespaceName": "x"}
    assert check_backlog_queue(Q0, props, None) == [
        settings(
            "forwardTo",
            "<absent>",
            "orders",
            f"backlog queue {Q0}: forwardTo expected <absent> (only the backlog table is set), got 'orders'",
            ns=None,
        ),
        settings(
            "requiresSession",
            "<absent>",
            False,
            f"backlog queue {Q0}: requiresSession expected <absent> (only the backlog table is set), got False",
            ns=None,
        ),
    ]


def test_identity_inputs_are_not_extras():
    props = {**TABLE, "name": Q0, "queueName": Q0, "namespaceName": "contoso-backlog", "resourceGroupName": "rg"}
    assert check_backlog_queue(Q0, props, None) == []


def test_live_properties_are_checked_against_the_table_only():
    props = {**TABLE, "requiresSession": False, "maxSizeInMegabytes": 5120}
    assert check_backlog_queue(Q0, props, STANDARD, live=True) == []


def test_partitioning_missing_in_a_partitioned_premium_namespace_is_stated_in_full():
    assert check_backlog_queue(Q0, dict(TABLE), PREMIUM_2) == [
        settings(
            "enablePartitioning",
            True,
            None,
            f"backlog queue {Q0}: enablePartitioning expected true (namespace contoso-backlog is partitioned "
            "Premium), got <absent>",
        )
    ]
    assert check_backlog_queue(Q0, {**TABLE, "enablePartitioning": False}, PREMIUM_2)[0].message.endswith("got False")


def test_partitioning_where_the_namespace_does_not_require_it_is_stated_in_full():
    assert check_backlog_queue(Q0, {**TABLE, "enablePartitioning": False}, STANDARD) == [
        settings(
            "enablePartitioning",
            "<absent>",
            False,
            f"backlog queue {Q0}: enablePartitioning expected <absent> (namespace contoso-backlog does not "
            "require it), got False",
        )
    ]


def test_a_pair_in_one_region_is_stated_in_full():
    assert check_pair(PRIMARY_NS, {**SECONDARY_NS, "location": "West Europe"}, [Q0]) == [
        Finding(
            "paired-regions-differ",
            "contoso-backlog",
            "contoso-backlog",
            "location",
            "a region other than westeurope",
            "West Europe",
            "mandatory",
            "secondary contoso-backlog is in West Europe, the same region as primary contoso",
        )
    ]


def test_a_pair_without_backlog_queues_is_stated_in_full():
    assert check_pair(PRIMARY_NS, SECONDARY_NS, []) == [
        in_set(
            "contoso-backlog",
            None,
            "contoso/x-servicebus-transfer/0..N-1",
            [],
            "secondary contoso-backlog: no backlog queues for primary contoso",
        )
    ]


def test_a_stray_name_does_not_end_the_check_of_the_names_after_it():
    names = [
        "contoso/x-servicebus-transfer/0",
        "orders",
        "other/x-servicebus-transfer/1",
        "contoso/x-servicebus-transfer/1",
        "contoso/x-servicebus-transfer/1",
    ]
    assert check_pair(PRIMARY_NS, SECONDARY_NS, names) == [
        in_set(
            "orders",
            "queueName",
            "contoso/x-servicebus-transfer/<index>",
            "orders",
            "orders: not a backlog queue name, expected contoso/x-servicebus-transfer/<index>",
        ),
        in_set(
            "other/x-servicebus-transfer/1",
            "queueName",
            "contoso/x-servicebus-transfer/1",
            "other/x-servicebus-transfer/1",
            "other/x-servicebus-transfer/1: prefix 'other' is not the primary's name 'contoso'",
        ),
        in_set(
            "contoso/x-servicebus-transfer/1",
            "queueName",
            1,
            3,
            "backlog index 1 appears 3 times",
        ),
    ]


def test_a_prefix_in_another_case_is_the_primarys():
    names = ["Contoso/x-servicebus-transfer/0", "CONTOSO/x-servicebus-transfer/1"]
    assert check_pair(PRIMARY_NS, SECONDARY_NS, names) == []


def test_a_missing_index_without_a_configured_count_is_stated_in_full():
    names = ["contoso/x-servicebus-transfer/0", "contoso/x-servicebus-transfer/2"]
    assert check_pair(PRIMARY_NS, SECONDARY_NS, names) == [
        in_set(
            "contoso/x-servicebus-transfer/1",
            "queueName",
            "contoso/x-servicebus-transfer/1",
            None,
            "contoso/x-servicebus-transfer/1 missing: 2 backlog queues must be indexed 0..1 without gaps (have 0, 2)",
        )
    ]


def test_a_missing_index_below_the_configured_count_is_stated_in_full():
    assert check_pair(PRIMARY_NS, SECONDARY_NS, [Q0], count=2) == [
        in_set(
            "contoso/x-servicebus-transfer/1",
            "queueName",
            "contoso/x-servicebus-transfer/1",
            None,
            "contoso/x-servicebus-transfer/1 missing: backlogQueueCount 2 needs indices 0..1 (have 0)",
        )
    ]


def test_a_backlog_queue_outside_the_secondary_is_stated_in_full():
    assert check_backlog_in_secondary(Q0, "contoso", "contoso-backlog") == [
        in_set(
            Q0,
            "namespaceName",
            "contoso-backlog",
            "contoso",
            f"backlog queue {Q0} is in namespace 'contoso', expected the secondary 'contoso-backlog'",
            ns="contoso",
        )
    ]
    assert check_backlog_in_secondary(Q0, None, "contoso-backlog")[0].message.endswith(
        "namespace None, expected the secondary 'contoso-backlog'"
    )
