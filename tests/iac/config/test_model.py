"""The stack config model rejects what the service or ARM would, one clear line per problem."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pairedbus import contract
from pairedbus.iac.config import StackConfigError, config_from_pulumi_settings, parse_stack_config
from tests.conftest import BASE_CONFIG, PREMIUM


def _with(path: str, value: Any, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """A copy of the base config with `a.b[0].c` set to value (or removed for ...)."""
    config = copy.deepcopy(base or BASE_CONFIG)
    node: Any = config
    parts = path.replace("]", "").replace("[", ".").split(".")
    for part in parts[:-1]:
        node = node[int(part)] if part.isdigit() else node[part]
    last = parts[-1]
    if value is ...:
        del node[last]
    elif last.isdigit():
        node[int(last)] = value
    else:
        node[last] = value
    return config


def _premium() -> dict[str, Any]:
    config = copy.deepcopy(BASE_CONFIG)
    config["primary"].update(PREMIUM)
    config["secondary"].update(PREMIUM)
    return config


MALFORMED: list[tuple[str, dict[str, Any], str]] = [
    ("short namespace name", _with("primary.name", "abc"), "pairedbus:primary.name: expected 6-50"),
    (
        "namespace name starting with a digit",
        _with("primary.name", "1contoso"),
        "pairedbus:primary.name: expected 6-50",
    ),
    ("namespace name ending in -sb", _with("secondary.name", "contoso-sb"), "pairedbus:secondary.name: expected"),
    ("namespace name ending in -mgmt", _with("secondary.name", "contoso-mgmt"), "not ending in"),
    ("namespace name ending in -", _with("primary.name", "contoso-"), "pairedbus:primary.name"),
    ("namespace name too long", _with("primary.name", "c" * 51), "pairedbus:primary.name: expected 6-50"),
    (
        "same region twice",
        _with("secondary.location", "WestEurope"),
        "pairedbus:secondary.location: expected a region other than",
    ),
    (
        "same namespace twice",
        _with("secondary.name", "contoso-primary"),
        "pairedbus:secondary.name: expected a namespace other than",
    ),
    ("unknown SKU", _with("primary.sku", "Basic"), "pairedbus:primary.sku: expected 'Standard' or 'Premium'"),
    (
        "capacity on Standard",
        _with("primary.capacity", 2),
        "pairedbus:primary.capacity: expected no capacity for a Standard",
    ),
    (
        "partitions not 1/2/4",
        _with("primary.premiumMessagingPartitions", 3, _premium()),
        "pairedbus:primary.premiumMessagingPartitions: expected 1, 2 or 4, got 3",
    ),
    (
        "Premium with one partition and entities",
        _with("primary.premiumMessagingPartitions", 1, _with("primary.capacity", 1, _premium())),
        "pairedbus:primary.premiumMessagingPartitions: expected >= 2",
    ),
    (
        "capacity not a multiple of partitions",
        _with("primary.premiumMessagingPartitions", 4, _premium()),
        "pairedbus:primary.capacity: expected a multiple of premiumMessagingPartitions (4), got 2",
    ),
    (
        "Standard size not a 1 GB step",
        _with("queues[1].maxSizeInMegabytes", 1000),
        "pairedbus:queues[1].maxSizeInMegabytes: expected one of 1024, 2048, 3072, 4096, 5120 for a Standard namespace, got 1000",
    ),
    (
        "Premium-only size on Standard",
        _with("topics[0].maxSizeInMegabytes", 10240),
        "pairedbus:topics[0].maxSizeInMegabytes: expected one of 1024",
    ),
    (
        "Premium size not allowed",
        _with("queues[0].maxSizeInMegabytes", 6144, _premium()),
        "for a Premium namespace, got 6144",
    ),
    (
        "non-partitioned Premium queue",
        _with("queues[1].enablePartitioning", False, _premium()),
        "pairedbus:queues[1].enablePartitioning: expected true",
    ),
    ("entity name with a slash", _with("queues[0].name", "orders/eu"), "pairedbus:queues[0].name: expected 1-260"),
    ("entity name with a leading slash", _with("queues[0].name", "/orders"), "pairedbus:queues[0].name"),
    ("empty entity name", _with("topics[0].name", ""), "pairedbus:topics[0].name: expected 1-260"),
    ("entity name too long", _with("queues[0].name", "q" * 261), "pairedbus:queues[0].name: expected 1-260"),
    (
        "subscription name too long",
        _with("topics[0].subscriptions[0].name", "s" * 51),
        "pairedbus:topics[0].subscriptions[0].name: expected 1-50",
    ),
    (
        "queue and topic with one name",
        _with("queues[1].name", "Events"),
        "pairedbus:topics[0].name: expected a name unique among queues and topics",
    ),
    (
        "duplicate subscription",
        _with("topics[0].subscriptions[1].name", "AUDIT"),
        "pairedbus:topics[0].subscriptions[1].name: expected a name unique within topic",
    ),
    (
        "zero backlog queues",
        _with("backlogQueueCount", 0),
        "pairedbus:backlogQueueCount: expected greater than or equal to 1, got 0",
    ),
    ("backlog count not a number", _with("backlogQueueCount", "ten"), "pairedbus:backlogQueueCount"),
    (
        "bad lock duration",
        _with("queues[0].lockDuration", "1 minute"),
        "pairedbus:queues[0].lockDuration: expected an ISO 8601 duration",
    ),
    (
        "bad TTL on a subscription",
        _with("topics[0].subscriptions[0].defaultMessageTimeToLive", "P1X"),
        "pairedbus:topics[0].subscriptions[0].defaultMessageTimeToLive: expected an ISO 8601 duration",
    ),
    ("max delivery count of zero", _with("queues[0].maxDeliveryCount", 0), "pairedbus:queues[0].maxDeliveryCount"),
    (
        "forward to an unknown entity",
        _with("queues[1].forwardTo", "nowhere"),
        "pairedbus:queues[1].forwardTo: expected a queue or topic of this stack's primary, got 'nowhere'",
    ),
    (
        "forwarding cycle",
        _with("queues[1].forwardTo", "orders", _with("queues[0].forwardTo", "invoices")),
        "expected no forwarding cycle",
    ),
    ("misspelt key", _with("primary.skew", "Standard"), "pairedbus:primary.skew: unknown key"),
    ("missing primary", _with("primary", ...), "pairedbus:primary: expected a value, none given"),
    ("missing syphon image", _with("syphon.image", ...), "pairedbus:syphon.image: expected a value, none given"),
    ("syphon with zero replicas", _with("syphon.minReplicas", 0), "pairedbus:syphon.minReplicas"),
    (
        "syphon memory not twice the CPU",
        _with("syphon.memory", "4Gi"),
        "pairedbus:syphon.memory: expected 1Gi for 0.5 CPU",
    ),
    ("SAS auth mode misspelt", _with("backlogAuth", "key"), "pairedbus:backlogAuth: expected 'entra' or 'sas'"),
    (
        "Premium secondary with one partition",
        _with("secondary.premiumMessagingPartitions", 1, _with("secondary.capacity", 1, _premium())),
        "pairedbus:secondary.premiumMessagingPartitions: expected >= 2 for a Premium namespace holding the backlog queues",
    ),
    (
        "more than 100 partitioned Standard entities",
        _with("queues", [{"name": f"q{i}"} for i in range(101)]),
        "expected at most 100 partitioned entities in Standard namespace 'contoso-primary', got 102",
    ),
]


@pytest.mark.parametrize(("config", "expected"), [(c, e) for _, c, e in MALFORMED], ids=[n for n, _, _ in MALFORMED])
def test_malformed_config_is_rejected_with_its_own_line(config: dict[str, Any], expected: str) -> None:
    with pytest.raises(StackConfigError) as info:
        parse_stack_config(config)
    assert any(expected in problem for problem in info.value.problems), info.value.problems
    assert all("\n" not in problem for problem in info.value.problems)


def test_every_problem_is_reported_at_once() -> None:
    config = _with("queues[0].maxSizeInMegabytes", 999, _with("secondary.location", "westeurope"))
    with pytest.raises(StackConfigError) as info:
        parse_stack_config(config)
    assert len(info.value.problems) == 2


def test_malformed_cases_each_get_a_distinct_message() -> None:
    messages = set()
    for _, config, _ in MALFORMED:
        with pytest.raises(StackConfigError) as info:
            parse_stack_config(config)
        messages.add(tuple(info.value.problems))
    assert len(MALFORMED) >= 20
    assert len(messages) == len(MALFORMED)


def test_defaults_follow_the_spec() -> None:
    config = parse_stack_config(_with("backlogQueueCount", ...))
    assert config.backlog_queue_count == contract.DEFAULT_BACKLOG_QUEUE_COUNT
    assert config.queues[1].enable_partitioning is True
    assert config.queues[1].duplicate_detection is True  # paired entities default to it
    assert config.backlog_auth == "entra"
    assert config.backlog_queue_names[0] == "contoso-primary/x-servicebus-transfer/0"


def test_unpaired_entity_keeps_duplicate_detection_off_unless_asked() -> None:
    config = parse_stack_config(_with("queues[1].paired", False))
    assert config.queues[1].duplicate_detection is False


def test_premium_capacity_defaults_to_one_unit_per_partition() -> None:
    config = parse_stack_config(_with("primary.capacity", ..., _premium()))
    assert config.primary.messaging_units == 2
    assert config.primary.requires_partitioned_entities


def test_pulumi_settings_are_decoded_like_the_cli_passes_them() -> None:
    settings = {
        "pairedbus:backlogQueueCount": "4",
        "pairedbus:production": "true",
        "pairedbus:backlogAuth": "entra",
        "pairedbus:primary": '{"name": "contoso-primary"}',
        "azure-native:location": "westeurope",
    }
    assert config_from_pulumi_settings(settings) == {
        "backlogQueueCount": 4,
        "production": True,
        "backlogAuth": "entra",
        "primary": {"name": "contoso-primary"},
    }


def test_a_production_stack_is_premium_with_public_access_denied(production_config_dict) -> None:
    config = parse_stack_config(production_config_dict)
    assert config.production and {config.primary.public_network_access, config.secondary.public_network_access} == {
        "Disabled"
    }


def test_new_settings_default_as_documented() -> None:
    config = parse_stack_config(BASE_CONFIG)
    assert config.deployer_principal_type == "User"  # what `pulumi up` on a laptop signs in as
    assert config.max_outage == "PT1H"
    # Paired entities without a window of their own get the outage as their window.
    assert {q.duplicate_detection_history_time_window for q in config.queues} == {"PT1H"}


def test_network_ids_are_compared_as_arm_compares_them_without_regard_to_case(production_config_dict) -> None:
    # ARM resource ids are case-insensitive (resource-name-rules: "Always perform a case-insensitive
    # comparison of names"): an id as the portal or the CLI may print it is accepted unchanged.
    network = production_config_dict["network"]
    network["privateEndpointSubnetId"] = network["privateEndpointSubnetId"].replace(
        "Microsoft.Network", "microsoft.network"
    )
    network["privateDnsZoneId"] = network["privateDnsZoneId"].replace(
        "privatelink.servicebus", "PrivateLink.ServiceBus"
    )
    config = parse_stack_config(production_config_dict)
    assert config.network is not None
    assert config.network.private_endpoint_subnet_id == network["privateEndpointSubnetId"]


def test_the_same_subnet_in_another_letter_case_is_still_the_same_subnet(production_config_dict) -> None:
    network = production_config_dict["network"]
    network["syphonInfrastructureSubnetId"] = (
        network["privateEndpointSubnetId"].upper().replace("/SUBSCRIPTIONS/", "/subscriptions/")
    )
    with pytest.raises(StackConfigError, match=r"network\.syphonInfrastructureSubnetId: expected a subnet other"):
        parse_stack_config(production_config_dict)


# --- Defaults valid for every tier -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("primary", "secondary"),
    [("Standard", "Standard"), ("Premium", "Standard"), ("Standard", "Premium"), ("Premium", "Premium")],
)
def test_a_pair_is_valid_on_its_defaults_whatever_its_tiers(primary: str, secondary: str) -> None:
    """Only the tier written: every other setting is the default, and the default must be one Azure takes."""
    config = parse_stack_config(_with("secondary.sku", secondary, _with("primary.sku", primary)))
    for role, tier in (("primary", primary), ("secondary", secondary)):
        namespace = getattr(config, role)
        if tier == contract.SKU_PREMIUM:  # both hold entities here: partitioned, one messaging unit per partition
            assert namespace.premium_messaging_partitions == contract.MIN_PREMIUM_PARTITIONS_FOR_ENTITIES
            assert namespace.messaging_units == contract.MIN_PREMIUM_PARTITIONS_FOR_ENTITIES
            assert namespace.requires_partitioned_entities
        else:
            assert namespace.premium_messaging_partitions is None and namespace.messaging_units is None


def test_a_premium_primary_without_queues_or_topics_keeps_the_service_default() -> None:
    """It was valid with the service's 1 partition, and the count cannot change on an existing namespace: a new
    default would replace a deployed namespace."""
    config = parse_stack_config({**_with("primary.sku", "Premium"), "queues": [], "topics": []})
    assert config.primary.premium_messaging_partitions is None and config.primary.messaging_units == 1


def test_partitions_written_are_kept_and_checked() -> None:
    written = _with("secondary.premiumMessagingPartitions", 1, _with("secondary.sku", "Premium"))
    with pytest.raises(StackConfigError) as caught:
        parse_stack_config(written)
    assert caught.value.problems == [
        "pairedbus:secondary.premiumMessagingPartitions: expected >= 2 for a Premium namespace holding the backlog "
        "queues, got 1"
    ]
    four = parse_stack_config(_with("secondary.premiumMessagingPartitions", 4, _with("secondary.sku", "Premium")))
    assert four.secondary.premium_messaging_partitions == 4 and four.secondary.messaging_units == 4
