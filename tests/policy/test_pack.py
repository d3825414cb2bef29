"""Every policy of the pack against passing and failing fixtures built as the engine builds them."""

from __future__ import annotations

import pytest
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy, StackValidationPolicy

from pairedbus import contract
from pairedbus.policy import pack

from .fixtures import (
    PRIMARY,
    SECONDARY,
    UNKNOWN,
    backlog_inputs,
    namespace_inputs,
    paired_stack,
    queue_inputs,
    resource_args,
    topic_inputs,
    violations,
)

BACKLOG_0 = contract.backlog_queue_name(PRIMARY, 0)
#: The backlog component's own dynamic type, and the type of any module-less Python dynamic resource.
DYNAMIC_TYPES = [contract.TYPE_BACKLOG_QUEUE, contract.TYPE_DYNAMIC_RESOURCE]


def test_pack_lists_every_rule_once_with_explicit_levels():
    names = [p.name for p in pack.POLICIES]
    assert len(names) == len(set(names))
    assert {
        "premium-entities-partitioned",
        "backlog-queue-settings",
        "backlog-queue-set",
        "local-auth-disabled",
        "minimum-tls-1-2",
        "paired-regions-differ",
        "standard-partitioned-entity-limit",
        "entity-size-allowed-for-tier",
        "paired-entities-duplicate-detection",
    } <= set(names)
    levels = {p.name: p.enforcement_level for p in pack.POLICIES}
    # Every policy is mandatory (duplicate detection included, issue 11) but the one issue 20 asks to be advisory.
    assert levels.pop("production-namespace-diagnostics") == EnforcementLevel.ADVISORY
    assert set(levels.values()) == {EnforcementLevel.MANDATORY}


@pytest.mark.parametrize(
    ("policy", "mirrors"),
    [
        (pack.local_auth_disabled, "Azure.ServiceBus.DisableLocalAuth"),
        (pack.local_auth_disabled, "Azure Service Bus namespaces should have local authentication methods disabled"),
        (pack.minimum_tls, "Azure.ServiceBus.MinTLS"),
    ],
)
def test_security_policies_name_the_rule_they_mirror(policy, mirrors):
    assert mirrors in policy.description


def test_policy_kinds_match_what_they_can_see():
    assert isinstance(pack.backlog_queue_settings, ResourceValidationPolicy)
    assert isinstance(pack.local_auth_disabled, ResourceValidationPolicy)
    for stack_policy in (pack.premium_entities_partitioned, pack.backlog_queue_set, pack.paired_regions_differ):
        assert isinstance(stack_policy, StackValidationPolicy)


# --- local-auth-disabled / minimum-tls-1-2 ----------------------------------------------------


def test_local_auth_disabled_passes_a_namespace_with_disable_local_auth():
    args = resource_args(contract.TYPE_NAMESPACE, "primary", namespace_inputs())
    assert violations(pack.local_auth_disabled, args) == []


@pytest.mark.parametrize("value", [False, None])
def test_local_auth_disabled_fails_a_namespace_allowing_sas(value):
    inputs = namespace_inputs()
    if value is None:
        del inputs["disableLocalAuth"]
    else:
        inputs["disableLocalAuth"] = value
    [(message, _)] = violations(pack.local_auth_disabled, resource_args(contract.TYPE_NAMESPACE, "primary", inputs))
    assert PRIMARY in message and "disableLocalAuth" in message


def test_minimum_tls_passes_1_2_and_fails_1_0_or_unset():
    ok = resource_args(contract.TYPE_NAMESPACE, "primary", namespace_inputs())
    assert violations(pack.minimum_tls, ok) == []
    old = resource_args(contract.TYPE_NAMESPACE, "primary", namespace_inputs(minimumTlsVersion="1.0"))
    [(message, _)] = violations(pack.minimum_tls, old)
    assert "'1.0'" in message
    unset = namespace_inputs()
    del unset["minimumTlsVersion"]
    assert len(violations(pack.minimum_tls, resource_args(contract.TYPE_NAMESPACE, "primary", unset))) == 1


def test_namespace_policies_ignore_other_types():
    args = resource_args(contract.TYPE_QUEUE, "q", {"disableLocalAuth": False, "minimumTlsVersion": "1.0"})
    assert violations(pack.local_auth_disabled, args) == violations(pack.minimum_tls, args) == []


# --- backlog-queue-settings (resource level) ---------------------------------------------------


@pytest.mark.parametrize("dynamic_type", DYNAMIC_TYPES)
def test_backlog_settings_pass_the_dynamic_backlog_resource_ignoring_its_provider_input(dynamic_type):
    args = resource_args(dynamic_type, "backlog-0", backlog_inputs(0))
    assert violations(pack.backlog_queue_settings, args) == []


def test_backlog_settings_pass_an_azure_native_backlog_queue():
    inputs = {k: v for k, v in backlog_inputs(0).items() if k != "__provider"}
    inputs["resourceGroupName"] = "rg"
    assert violations(pack.backlog_queue_settings, resource_args(contract.TYPE_QUEUE, "b0", inputs)) == []


@pytest.mark.parametrize("dynamic_type", DYNAMIC_TYPES)
def test_backlog_settings_list_each_drifted_property_with_expected_and_actual(dynamic_type):
    inputs = backlog_inputs(0, lockDuration="PT5M", maxDeliveryCount=10)
    del inputs["enableBatchedOperations"]
    found = violations(pack.backlog_queue_settings, resource_args(dynamic_type, "backlog-0", inputs))
    messages = sorted(m for m, _ in found)
    assert len(messages) == 3
    assert any("enableBatchedOperations expected True, got <absent>" in m for m in messages)
    assert any("lockDuration expected 'PT1M', got 'PT5M'" in m for m in messages)
    assert any(f"maxDeliveryCount expected {contract.INT32_MAX}, got 10" in m for m in messages)
    assert all(BACKLOG_0 in m for m in messages)


def test_backlog_settings_accept_equal_durations_written_differently():
    args = resource_args(contract.TYPE_DYNAMIC_RESOURCE, "b", backlog_inputs(0, lockDuration="PT60S"))
    assert violations(pack.backlog_queue_settings, args) == []


def test_backlog_settings_fail_anything_beyond_the_table():
    inputs = backlog_inputs(0, requiresSession=False, forwardTo="elsewhere")
    found = violations(pack.backlog_queue_settings, resource_args(contract.TYPE_DYNAMIC_RESOURCE, "b", inputs))
    assert sorted(m.split(": ", 1)[1].split(" ", 1)[0] for m, _ in found) == ["forwardTo", "requiresSession"]


def test_backlog_settings_ignore_other_queues_and_other_dynamic_resources():
    plain_queue = resource_args(contract.TYPE_QUEUE, "orders", queue_inputs(lockDuration="PT5M"))
    other_dynamic = resource_args(contract.TYPE_DYNAMIC_RESOURCE, "x", {"queueName": BACKLOG_0, "__provider": "p"})
    assert violations(pack.backlog_queue_settings, plain_queue) == []
    assert violations(pack.backlog_queue_settings, other_dynamic) == []


# --- premium-entities-partitioned --------------------------------------------------------------


def test_premium_partitioned_passes_a_partitioned_premium_pair():
    stack = paired_stack(queues=[queue_inputs()], topics=[topic_inputs()])
    assert violations(pack.premium_entities_partitioned, stack.args()) == []


def test_premium_partitioned_fails_a_non_partitioned_queue_naming_it():
    stack = paired_stack(queues=[queue_inputs("payments", enablePartitioning=False)])
    [(message, urn)] = violations(pack.premium_entities_partitioned, stack.args())
    assert "payments" in message and "enablePartitioning" in message
    assert urn == stack.by_name("queue-payments").urn


@pytest.mark.parametrize("dynamic_type", DYNAMIC_TYPES)
def test_premium_partitioned_applies_to_backlog_dynamic_resources(dynamic_type):
    stack = paired_stack(backlog=[backlog_inputs(0), backlog_inputs(1, partitioned=None)], backlog_type=dynamic_type)
    [(message, urn)] = violations(pack.premium_entities_partitioned, stack.args())
    assert contract.backlog_queue_name(PRIMARY, 1) in message
    assert urn == stack.by_name("backlog-1").urn


def test_premium_partitioned_fails_entities_of_a_premium_namespace_with_one_partition():
    stack = paired_stack(primary=namespace_inputs(partitions=1), queues=[queue_inputs()])
    [(message, _)] = violations(pack.premium_entities_partitioned, stack.args())
    assert "premiumMessagingPartitions" in message


def test_premium_partitioned_finds_the_namespace_through_dependencies_when_its_name_is_unknown():
    # During a real preview a new namespace's name output is unknown to the queue.
    stack = paired_stack()
    primary = stack.by_name("primary")
    stack.add(
        contract.TYPE_QUEUE,
        "queue-late",
        queue_inputs("late", namespace=UNKNOWN, enablePartitioning=False),
        property_dependencies={"namespaceName": [primary]},
        depends_on=[primary],
    )
    [(message, urn)] = violations(pack.premium_entities_partitioned, stack.args())
    assert "late" in message and urn == stack.by_name("queue-late").urn


def test_premium_partitioned_finds_the_namespace_through_the_parent_chain():
    stack = paired_stack()
    primary = stack.by_name("primary")
    component = stack.add("pairedbus:messaging:MessagingEntities", "entities", {}, depends_on=[primary])
    stack.add(
        contract.TYPE_QUEUE,
        "queue-nested",
        queue_inputs("nested", namespace=UNKNOWN, enablePartitioning=False),
        parent=component,
    )
    [(message, _)] = violations(pack.premium_entities_partitioned, stack.args())
    assert "nested" in message


def test_premium_partitioned_leaves_standard_namespaces_alone():
    standard = namespace_inputs(sku=contract.SKU_STANDARD)
    stack = paired_stack(
        primary=standard,
        secondary=namespace_inputs(SECONDARY, "northeurope", sku=contract.SKU_STANDARD),
        backlog=[backlog_inputs(i, partitioned=None) for i in range(2)],
        queues=[queue_inputs(enablePartitioning=False)],
    )
    assert violations(pack.premium_entities_partitioned, stack.args()) == []


# --- backlog-queue-set (stack level) -----------------------------------------------------------


def test_backlog_set_passes_indices_0_to_n_minus_1_in_the_secondary():
    assert violations(pack.backlog_queue_set, paired_stack(backlog_count=10).args()) == []


def test_backlog_set_fails_a_gap_in_the_indices():
    stack = paired_stack(backlog=[backlog_inputs(0), backlog_inputs(2)])
    [(message, _)] = violations(pack.backlog_queue_set, stack.args())
    assert contract.backlog_queue_name(PRIMARY, 1) in message and "missing" in message


def _with_count(stack, count: int):
    from pulumi_policy import StackValidationArgs

    return StackValidationArgs(list(stack.resources), {"backlogQueueCount": count})


def test_backlog_set_passes_the_specs_own_example_five_configured_plus_seven():
    stack = paired_stack(backlog=[*(backlog_inputs(i) for i in range(5)), backlog_inputs(7)])
    assert violations(pack.backlog_queue_set, _with_count(stack, 5)) == []


def test_backlog_set_with_the_count_fails_only_an_index_missing_below_it():
    stack = paired_stack(backlog=[*(backlog_inputs(i) for i in (0, 1, 3, 4)), backlog_inputs(7)])
    [(message, _)] = violations(pack.backlog_queue_set, _with_count(stack, 5))
    assert message.startswith(f"{contract.backlog_queue_name(PRIMARY, 2)} missing: backlogQueueCount 5")


@pytest.mark.parametrize(
    ("count", "accepted"),
    # the spec's range: at least one backlog queue, at most a namespace's 10,000 entities (partitioning.md)
    [(1, True), (10_000, True), (0, False), (10_001, False)],
)
def test_backlog_set_config_schema_takes_the_counts_the_stack_config_takes(count: int, accepted: bool) -> None:
    import jsonschema  # the validator Pulumi's engine applies the pack's config schema with is JSON Schema too

    schema = {"type": "object", "properties": pack.backlog_queue_set.config_schema.properties}
    errors = list(jsonschema.Draft7Validator(schema).iter_errors({contract.BACKLOG_QUEUE_COUNT_KEY: count}))
    assert (errors == []) is accepted


def test_backlog_set_still_checks_the_settings_of_an_extra():
    stack = paired_stack(backlog=[*(backlog_inputs(i) for i in range(5)), backlog_inputs(7, maxDeliveryCount=10)])
    assert violations(pack.backlog_queue_set, _with_count(stack, 5)) == []
    extra = next(r for r in stack.resources if r.props.get("queueName") == contract.backlog_queue_name(PRIMARY, 7))
    found = violations(pack.backlog_queue_settings, resource_args(extra.resource_type, extra.name, dict(extra.props)))
    assert len(found) == 1 and "maxDeliveryCount" in found[0][0]


def test_backlog_set_fails_a_backlog_queue_in_the_primary():
    stack = paired_stack(backlog=[backlog_inputs(0), backlog_inputs(1, secondary=PRIMARY)])
    [(message, urn)] = violations(pack.backlog_queue_set, stack.args())
    assert SECONDARY in message and urn == stack.by_name("backlog-1").urn


def test_backlog_set_takes_roles_from_the_role_tags_over_logical_names():
    # The tags swap the roles the logical names suggest: the tags win.
    stack = paired_stack(
        primary=namespace_inputs(tags={contract.TAG_ROLE: contract.ROLE_SECONDARY}),
        secondary=namespace_inputs(SECONDARY, "northeurope", tags={contract.TAG_ROLE: contract.ROLE_PRIMARY}),
    )
    placements = [m for m, _ in violations(pack.backlog_queue_set, stack.args()) if "expected the secondary" in m]
    assert len(placements) == 3
    assert all(f"expected the secondary {PRIMARY!r}" in m for m in placements)


def test_backlog_set_fails_a_prefix_other_than_the_primary_name():
    stack = paired_stack(backlog=[backlog_inputs(0), backlog_inputs(1, primary="someone-else")])
    found = violations(pack.backlog_queue_set, stack.args())
    assert any("someone-else" in m and PRIMARY in m for m, _ in found)


# --- paired-regions-differ -----------------------------------------------------------------------


def test_regions_differ_passes_two_regions_and_fails_one_written_two_ways():
    assert violations(pack.paired_regions_differ, paired_stack().args()) == []
    same = paired_stack(secondary=namespace_inputs(SECONDARY, "West Europe"))
    [(message, urn)] = violations(pack.paired_regions_differ, same.args())
    assert SECONDARY in message and urn == same.by_name("secondary").urn


# --- standard-partitioned-entity-limit ---------------------------------------------------------


def _standard_stack(queue_count: int, backlog_count: int = 10):
    return paired_stack(
        primary=namespace_inputs(sku=contract.SKU_STANDARD),
        secondary=namespace_inputs(SECONDARY, "northeurope", sku=contract.SKU_STANDARD),
        backlog=[backlog_inputs(i, partitioned=None) for i in range(backlog_count)],
        queues=[queue_inputs(f"q{i}") for i in range(queue_count)],
    )


def test_partitioned_limit_passes_100_partitioned_entities_in_a_standard_namespace():
    assert violations(pack.standard_partitioned_entity_limit, _standard_stack(100).args()) == []


def test_partitioned_limit_fails_101_and_counts_backlog_queues_partitioned_by_default():
    [(message, urn)] = violations(pack.standard_partitioned_entity_limit, _standard_stack(101).args())
    assert PRIMARY in message and "101" in message
    stack = _standard_stack(0, backlog_count=101)
    [(message, urn)] = violations(pack.standard_partitioned_entity_limit, stack.args())
    assert SECONDARY in message and urn == stack.by_name("secondary").urn


def test_partitioned_limit_does_not_count_non_partitioned_entities():
    stack = paired_stack(
        primary=namespace_inputs(sku=contract.SKU_STANDARD),
        secondary=namespace_inputs(SECONDARY, "northeurope", sku=contract.SKU_STANDARD),
        backlog=[backlog_inputs(0, partitioned=None)],
        queues=[queue_inputs(f"q{i}", enablePartitioning=False) for i in range(150)],
    )
    assert violations(pack.standard_partitioned_entity_limit, stack.args()) == []


# --- entity-size-allowed-for-tier --------------------------------------------------------------


def test_entity_size_passes_80_gb_in_premium_and_fails_it_in_standard():
    premium = paired_stack(queues=[queue_inputs(maxSizeInMegabytes=81920)])
    assert violations(pack.entity_size_allowed_for_tier, premium.args()) == []
    standard = paired_stack(
        primary=namespace_inputs(sku=contract.SKU_STANDARD),
        backlog=[backlog_inputs(0)],
        queues=[queue_inputs("big", maxSizeInMegabytes=81920)],
    )
    [(message, urn)] = violations(pack.entity_size_allowed_for_tier, standard.args())
    assert "big" in message and "81920" in message and urn == standard.by_name("queue-big").urn


def test_entity_size_fails_a_size_no_tier_offers():
    stack = paired_stack(topics=[topic_inputs("odd", maxSizeInMegabytes=3000)])
    [(message, _)] = violations(pack.entity_size_allowed_for_tier, stack.args())
    assert "odd" in message


# --- paired-entities-duplicate-detection (mandatory) -------------------------------------------


def test_duplicate_detection_passes_primary_entities_with_it_on():
    stack = paired_stack(queues=[queue_inputs()], topics=[topic_inputs()])
    assert violations(pack.paired_entities_duplicate_detection, stack.args()) == []


def test_duplicate_detection_flags_primary_entities_without_it_but_never_backlog_queues():
    stack = paired_stack(queues=[queue_inputs("nodup", requiresDuplicateDetection=False)])
    [(message, urn)] = violations(pack.paired_entities_duplicate_detection, stack.args())
    assert "nodup" in message and urn == stack.by_name("queue-nodup").urn


def _dedup_args(stack, **settings):
    from pulumi_policy import StackValidationArgs

    return StackValidationArgs(list(stack.resources), settings)


def test_duplicate_detection_window_must_cover_the_max_outage_setting():
    stack = paired_stack(queues=[queue_inputs("short", duplicateDetectionHistoryTimeWindow="PT30M")])
    [(message, _)] = violations(pack.paired_entities_duplicate_detection, stack.args())  # default PT1H
    assert "short" in message and "maxOutage PT1H" in message
    assert violations(pack.paired_entities_duplicate_detection, _dedup_args(stack, maxOutage="PT30M")) == []
    [(message, _)] = violations(pack.paired_entities_duplicate_detection, _dedup_args(stack, maxOutage="PT2H"))
    assert "maxOutage PT2H" in message


def test_duplicate_detection_exempts_entities_opted_out_of_pairing():
    stack = paired_stack(
        queues=[queue_inputs("audit-log", requiresDuplicateDetection=False)],
        topics=[topic_inputs("telemetry", requiresDuplicateDetection=False)],
    )
    assert len(violations(pack.paired_entities_duplicate_detection, stack.args())) == 2
    exempt = _dedup_args(stack, unpaired=["audit-log", "Telemetry"])
    assert violations(pack.paired_entities_duplicate_detection, exempt) == []
