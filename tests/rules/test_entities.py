from __future__ import annotations

import pytest

from pairedbus.rules import (
    ENTITY_SIZE_ALLOWED_FOR_TIER,
    MANDATORY,
    PREMIUM_ENTITIES_PARTITIONED,
    check_duplicate_detection,
    check_entity_size,
    check_partitioned_entity_limit,
    check_premium_entity_partitioned,
)

PREMIUM = {"name": "ns", "sku": {"name": "Premium"}, "premiumMessagingPartitions": 2}
STANDARD = {"name": "ns", "sku": "Standard"}


def test_premium_entity_must_say_enable_partitioning_true():
    assert check_premium_entity_partitioned("orders", {"enablePartitioning": True}, PREMIUM) == []
    [finding] = check_premium_entity_partitioned("orders", {}, PREMIUM)
    assert finding.rule == PREMIUM_ENTITIES_PARTITIONED and finding.property == "enablePartitioning"
    assert finding.actual is None and "orders" in finding.message


def test_premium_namespace_with_one_partition_fails_its_entities():
    findings = check_premium_entity_partitioned(
        "orders", {"enablePartitioning": True}, {**PREMIUM, "premiumMessagingPartitions": 1}
    )
    assert [f.property for f in findings] == ["premiumMessagingPartitions"]


def test_premium_rule_ignores_standard_and_unknown_namespaces():
    assert check_premium_entity_partitioned("orders", {"enablePartitioning": False}, STANDARD) == []
    assert check_premium_entity_partitioned("orders", {"enablePartitioning": False}, None) == []


@pytest.mark.parametrize(
    ("sku", "size", "ok"),
    [("Standard", 5120, True), ("Standard", 10240, False), ("Premium", 81920, True), ("Premium", 3000, False)],
)
def test_declared_size_must_be_offered_by_the_tier(sku, size, ok):
    findings = check_entity_size("q", {"maxSizeInMegabytes": size}, {"name": "ns", "sku": sku})
    assert (findings == []) is ok
    if not ok:
        assert findings[0].rule == ENTITY_SIZE_ALLOWED_FOR_TIER and findings[0].actual == size


def test_unset_size_is_the_allowed_default():
    assert check_entity_size("q", {}, STANDARD) == []


def test_live_size_of_a_partitioned_standard_entity_is_divided_by_its_16_fragments():
    props = {"maxSizeInMegabytes": 5 * 1024 * 16, "enablePartitioning": True}
    assert check_entity_size("q", props, STANDARD, live=True) == []
    assert check_entity_size("q", props, STANDARD) != []  # declared, 80 GB is not a Standard size


def test_partitioned_limit_counts_entities_partitioned_by_default():
    entities = [{"enablePartitioning": True}] * 60 + [{}] * 41 + [{"enablePartitioning": False}] * 5
    [finding] = check_partitioned_entity_limit(STANDARD, entities)
    assert finding.actual == 101
    assert check_partitioned_entity_limit(STANDARD, entities[:100]) == []
    assert check_partitioned_entity_limit(PREMIUM, entities) == []


def test_duplicate_detection_is_mandatory_for_paired_entities():
    on = {"requiresDuplicateDetection": True, "duplicateDetectionHistoryTimeWindow": "PT1H"}
    assert check_duplicate_detection("q", on, STANDARD) == []
    [finding] = check_duplicate_detection("q", {}, STANDARD)
    assert finding.severity == MANDATORY and finding.namespace == "ns"
    assert finding.property == "requiresDuplicateDetection" and "paired: false" in finding.message
    [finding] = check_duplicate_detection("q", {**on, "requiresDuplicateDetection": False}, STANDARD)
    assert finding.actual is False


def test_an_entity_opted_out_of_pairing_is_exempt():
    assert check_duplicate_detection("q", {}, STANDARD, paired=False) == []
    assert check_duplicate_detection("q", {"requiresDuplicateDetection": False}, STANDARD, paired=False) == []


@pytest.mark.parametrize(
    ("window", "max_outage", "ok"),
    [
        ("PT1H", "PT1H", True),  # exactly the outage
        ("PT59M59S", "PT1H", False),  # a second short
        ("P1D", "PT4H", True),
        ("PT10M", "PT1H", False),
        ("P7D", "P7D", True),  # the service maximum window (Service Bus quotas: 7 days)
    ],
)
def test_the_window_must_cover_the_longest_outage(window: str, max_outage: str, ok: bool):
    props = {"requiresDuplicateDetection": True, "duplicateDetectionHistoryTimeWindow": window}
    found = check_duplicate_detection("q", props, STANDARD, max_outage=max_outage)
    assert (found == []) is ok
    if not ok:
        assert (
            found[0].property == "duplicateDetectionHistoryTimeWindow" and f"maxOutage {max_outage}" in found[0].message
        )


def test_an_absent_window_is_the_service_default_of_ten_minutes():
    [finding] = check_duplicate_detection("q", {"requiresDuplicateDetection": True}, STANDARD)
    assert "service default PT10M" in finding.message
    assert check_duplicate_detection("q", {"requiresDuplicateDetection": True}, STANDARD, max_outage="PT10M") == []


def test_a_window_unknown_offline_is_not_judged():
    props = {"requiresDuplicateDetection": True, "duplicateDetectionHistoryTimeWindow": None}
    assert check_duplicate_detection("q", props, STANDARD) == []


def test_whole_doubles_count_as_integers():
    assert (
        check_entity_size("q", {"maxSizeInMegabytes": 81920.0, "enablePartitioning": True}, STANDARD, live=True) == []
    )
    assert check_entity_size("q", {"maxSizeInMegabytes": 2048.0}, STANDARD) == []
    assert check_entity_size("q", {"maxSizeInMegabytes": 2048.5}, STANDARD) != []
