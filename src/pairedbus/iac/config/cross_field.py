"""Rules that need more than one field of the stack config: one small function per rule, each
yielding `<key path>: expected ..., got ...` lines. `cross_field_problems` runs them all."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from pairedbus import contract, durations, limits
from pairedbus.iac.config.config_warnings import configured_locations
from pairedbus.iac.config.forwarding import FORWARDING_RULES
from pairedbus.iac.config.keys import CONFIG_NAMESPACE
from pairedbus.iac.config.regions import cloud_name, region, unknown_region_problem
from pairedbus.rules.namespace import normalise_region

if TYPE_CHECKING:
    from pairedbus.iac.config.schema import NamespaceConfig, StackConfig

ROLES = ("primary", "secondary")


def _namespaces(config: StackConfig) -> Iterator[tuple[str, NamespaceConfig]]:
    for role in ROLES:
        yield role, getattr(config, role)


def _entities(config: StackConfig) -> list[tuple[str, Any]]:
    return [
        *((f"queues[{i}]", q) for i, q in enumerate(config.queues)),
        *((f"topics[{i}]", t) for i, t in enumerate(config.topics)),
    ]


# --- The pair --------------------------------------------------------------------------------


def standard_has_no_messaging_units(config: StackConfig) -> Iterator[str]:
    """Quotas page: messaging units and messaging partitions are Premium features."""
    for role, ns in _namespaces(config):
        if not ns.is_premium and ns.capacity is not None:
            yield f"{role}.capacity: expected no capacity for a Standard namespace (messaging units are Premium only), got {ns.capacity}"
        if not ns.is_premium and ns.premium_messaging_partitions is not None:
            yield f"{role}.premiumMessagingPartitions: expected none for a Standard namespace, got {ns.premium_messaging_partitions}"


def premium_capacity_divides_into_partitions(config: StackConfig) -> Iterator[str]:
    for role, ns in _namespaces(config):
        if ns.is_premium and (ns.messaging_units or 1) % ns.partitions:
            yield f"{role}.capacity: expected a multiple of premiumMessagingPartitions ({ns.partitions}), got {ns.messaging_units}"


def pair_spans_two_regions(config: StackConfig) -> Iterator[str]:
    if normalise_region(config.primary.location) == normalise_region(config.secondary.location):
        yield f"secondary.location: expected a region other than the primary's ({config.primary.location!r})"


def regions_in_the_table(config: StackConfig) -> Iterator[str]:
    """A region-shaped name the table lacks (`northeurop`) is far more often a typo than a new region: refused
    with a did-you-mean unless the stack says it is new (`allowUnknownRegion: true`, then a warning)."""
    if config.allow_unknown_region:
        return
    for path, location in configured_locations(config):
        if location is not None and region(location) is None:
            yield unknown_region_problem(path, location, f"{CONFIG_NAMESPACE}:allowUnknownRegion")


def regions_in_one_cloud(config: StackConfig) -> Iterator[str]:
    """A stack deploys through one provider to one cloud: every region the table knows is in the primary's."""
    primary = region(config.primary.location)
    if primary is None:
        return
    for path, location in configured_locations(config):
        other = region(location) if location is not None and path != "primary.location" else None
        if other is not None and other.cloud != primary.cloud:
            yield (
                f"{path}: expected a region of the primary's cloud, got {other.name!r} ({cloud_name(other)}) beside "
                f"primary.location {primary.name!r} ({cloud_name(primary)}); a stack deploys to one cloud"
            )


def pair_is_two_namespaces(config: StackConfig) -> Iterator[str]:
    if config.primary.name.lower() == config.secondary.name.lower():  # DNS names: case-insensitive
        yield f"secondary.name: expected a namespace other than the primary ({config.primary.name!r})"


def resource_groups_created_once(config: StackConfig) -> Iterator[str]:
    """Resource group names are case-insensitive ([arm-common]): one group created twice fails."""
    groups = config.resource_groups
    if (
        groups.primary.name.lower() == groups.secondary.name.lower()
        and groups.primary.create
        and groups.secondary.create
    ):
        yield (
            f"resourceGroups.secondary.create: expected false when both namespaces share resource group "
            f"{groups.primary.name!r} (resource group names are case-insensitive; it can be created once)"
        )


def secondary_holds_the_backlog(config: StackConfig) -> Iterator[str]:
    sec = config.secondary
    if sec.is_premium and sec.partitions < contract.MIN_PREMIUM_PARTITIONS_FOR_ENTITIES:
        yield (
            f"secondary.premiumMessagingPartitions: expected >= {contract.MIN_PREMIUM_PARTITIONS_FOR_ENTITIES} "
            f"for a Premium namespace holding the backlog queues, got {sec.partitions}"
        )
    if not sec.is_premium and config.backlog_queue_count > contract.MAX_PARTITIONED_ENTITIES_PER_STANDARD_NAMESPACE:
        # The service partitions new Standard queues by default, so backlog queues count too.
        yield (
            f"backlogQueueCount: expected at most {contract.MAX_PARTITIONED_ENTITIES_PER_STANDARD_NAMESPACE} "
            f"in a Standard secondary, got {config.backlog_queue_count}"
        )


def production_denies_public_access(config: StackConfig) -> Iterator[str]:
    """A production pair is reached only through private endpoints (Premium)."""
    if not config.production:
        return
    for role, ns in _namespaces(config):
        if ns.public_network_access != "Disabled":
            yield (
                f"{role}.publicNetworkAccess: expected 'Disabled' when production is true (clients reach a "
                f"production namespace through private endpoints only), got {str(ns.public_network_access)!r}"
            )


def standard_keeps_public_access(config: StackConfig) -> Iterator[str]:
    """Service Bus network security docs: private endpoints and service endpoints are Premium only;
    a Standard namespace has IP firewall rules at most, so with public access Disabled nothing
    could reach it."""
    for role, ns in _namespaces(config):
        if not ns.is_premium and ns.public_network_access == "Disabled":
            yield (
                f"{role}.publicNetworkAccess: expected 'Enabled' for a Standard namespace (private endpoints "
                f"are Premium only, so Disabled would leave no way in), got 'Disabled'"
            )


def private_access_has_a_network(config: StackConfig) -> Iterator[str]:
    """A namespace that denies public access is reachable through a private endpoint only: without
    one, neither clients nor the syphon could reach it."""
    if config.network is not None:
        return
    for role, ns in _namespaces(config):
        if ns.is_premium and ns.public_network_access == "Disabled":  # Standard: standard_keeps_public_access
            yield (
                "network: expected privateEndpointSubnetId, privateDnsZoneId and syphonInfrastructureSubnetId when "
                f"{role}.publicNetworkAccess is 'Disabled' (nothing could reach the namespace otherwise), got none"
            )
            return


def network_has_a_premium_namespace(config: StackConfig) -> Iterator[str]:
    """Private endpoints are Premium only (Service Bus network security docs)."""
    if config.network is not None and not any(ns.is_premium for _, ns in _namespaces(config)):
        yield (
            "network: expected at least one Premium namespace (private endpoints are Premium only; a Standard "
            "namespace has IP firewall rules at most), got two Standard namespaces"
        )


def network_subnets_distinct(config: StackConfig) -> Iterator[str]:
    """A Container Apps environment's infrastructure subnet is delegated to it alone
    (learn.microsoft.com/azure/container-apps/custom-virtual-networks): the private endpoints need another."""
    network = config.network
    if (
        network is not None
        and network.private_endpoint_subnet_id.lower() == network.syphon_infrastructure_subnet_id.lower()
    ):
        yield (
            "network.syphonInfrastructureSubnetId: expected a subnet other than privateEndpointSubnetId (the "
            "Container Apps environment's subnet is dedicated to it)"
        )


# --- Production hardening (what AVM's avm/res/service-bus/namespace gives a namespace) ----------


def encryption_needs_premium(config: StackConfig) -> Iterator[str]:
    """Customer-managed keys are a Premium feature ([sb-cmk] in limits.py)."""
    for role, ns in _namespaces(config):
        if ns.encryption is not None and not ns.is_premium:
            yield f"{role}.encryption: expected none for a Standard namespace (customer-managed keys are Premium only), got a key"


def network_rules_need_public_access(config: StackConfig) -> Iterator[str]:
    """A network rule set filters the public endpoint; with public access Disabled there is none to filter, and
    the rule set's own publicNetworkAccess would contend with the namespace's."""
    for role, ns in _namespaces(config):
        if ns.network_rule_set is not None and ns.public_network_access != "Enabled":
            yield (
                f"{role}.networkRuleSet: expected none when publicNetworkAccess is {str(ns.public_network_access)!r} "
                "(firewall rules filter the public endpoint only)"
            )


def virtual_network_rules_need_premium(config: StackConfig) -> Iterator[str]:
    """Service Bus network security docs: "Virtual Networks are supported only in Premium tier"."""
    for role, ns in _namespaces(config):
        rules = ns.network_rule_set
        if rules is not None and rules.virtual_network_rules and not ns.is_premium:
            yield (
                f"{role}.networkRuleSet.virtualNetworkRules: expected none for a Standard namespace (service "
                f"endpoints are Premium only; use ipRules), got {len(rules.virtual_network_rules)}"
            )


def network_rules_need_deny(config: StackConfig) -> Iterator[str]:
    """With defaultAction Allow every address gets in: rules would change nothing, which is never what was meant."""
    for role, ns in _namespaces(config):
        rules = ns.network_rule_set
        if rules is not None and rules.default_action == "Allow" and (rules.ip_rules or rules.virtual_network_rules):
            yield (
                f"{role}.networkRuleSet.defaultAction: expected 'Deny' when ipRules or virtualNetworkRules are given "
                "(with Allow every address gets in and the rules change nothing), got 'Allow'"
            )


def premium_only_log_categories(config: StackConfig) -> Iterator[str]:
    """Runtime audit logs are emitted by Premium namespaces only ([sb-monitor] in limits.py)."""
    if config.diagnostics is None:
        return
    for role, ns in _namespaces(config):
        for category in config.diagnostics.logs:
            if category in limits.PREMIUM_ONLY_LOG_CATEGORIES and not ns.is_premium:
                yield (
                    f"diagnostics.logs: expected no {category} while {role} is Standard (Premium only; the allLogs "
                    "group takes what each namespace emits), got it"
                )
                return


# --- Entities ---------------------------------------------------------------------------------


def entity_names_unique(config: StackConfig) -> Iterator[str]:
    seen: dict[str, str] = {}
    for path, entity in _entities(config):
        key = entity.name.lower()  # entity paths are case-insensitive in Service Bus
        if key in seen:
            yield f"{path}.name: expected a name unique among queues and topics, {entity.name!r} is also {seen[key]}"
        seen.setdefault(key, path)


def entity_sizes_of_the_tier(config: StackConfig) -> Iterator[str]:
    ns = config.primary
    sizes = contract.ENTITY_SIZES_MB[ns.sku]
    for path, entity in _entities(config):
        if entity.max_size_in_megabytes not in sizes:
            yield (
                f"{path}.maxSizeInMegabytes: expected one of {', '.join(map(str, sizes))} for a {ns.sku} "
                f"namespace, got {entity.max_size_in_megabytes}"
            )


def premium_entities_partitioned(config: StackConfig) -> Iterator[str]:
    ns = config.primary
    for path, entity in _entities(config):
        if ns.is_premium and not entity.enable_partitioning:
            yield f"{path}.enablePartitioning: expected true: every Premium queue and topic is partitioned"
    if ns.is_premium and _entities(config) and ns.partitions < contract.MIN_PREMIUM_PARTITIONS_FOR_ENTITIES:
        yield (
            f"primary.premiumMessagingPartitions: expected >= {contract.MIN_PREMIUM_PARTITIONS_FOR_ENTITIES} "
            f"for a Premium namespace holding queues or topics, got {ns.partitions}"
        )


def namespace_entity_quotas(config: StackConfig) -> Iterator[str]:
    """Quotas page: 10,000 queues and topics per Standard namespace, 100 of them partitioned."""
    ns, entities = config.primary, _entities(config)
    partitioned = sum(1 for _, e in entities if e.enable_partitioning)
    if not ns.is_premium and partitioned > contract.MAX_PARTITIONED_ENTITIES_PER_STANDARD_NAMESPACE:
        yield (
            f"queues/topics: expected at most {contract.MAX_PARTITIONED_ENTITIES_PER_STANDARD_NAMESPACE} "
            f"partitioned entities in Standard namespace {ns.name!r}, got {partitioned}"
        )
    if not ns.is_premium and len(entities) > contract.MAX_ENTITIES_PER_NAMESPACE:
        yield f"queues/topics: expected at most {contract.MAX_ENTITIES_PER_NAMESPACE} entities, got {len(entities)}"


def subscriptions_per_topic(config: StackConfig) -> Iterator[str]:
    for i, topic in enumerate(config.topics):
        if len(topic.subscriptions) > limits.MAX_SUBSCRIPTIONS_PER_TOPIC:
            yield (
                f"topics[{i}].subscriptions: expected at most {limits.MAX_SUBSCRIPTIONS_PER_TOPIC} subscriptions "
                f"per topic (Service Bus quotas), got {len(topic.subscriptions)}"
            )


def subscription_names_unique(config: StackConfig) -> Iterator[str]:
    for i, topic in enumerate(config.topics):
        names = [s.name.lower() for s in topic.subscriptions]
        for j, name in enumerate(names):
            if name in names[:j]:
                yield f"topics[{i}].subscriptions[{j}].name: expected a name unique within topic {topic.name!r}, got {name!r} twice"


def paired_entities_detect_duplicates(config: StackConfig) -> Iterator[str]:
    """A paired entity receives the copies a timed-out send or a repeated syphon move makes;
    only duplicate detection at the destination removes them (paired-namespaces.md, Duplicates)."""
    for path, entity in _entities(config):
        if entity.paired and entity.requires_duplicate_detection is False:
            yield (
                f"{path}.requiresDuplicateDetection: expected true for an entity paired senders write to "
                f"(or paired: false to opt it out of pairing), got false"
            )


def duplicate_window_covers_the_outage(config: StackConfig) -> Iterator[str]:
    outage = durations.duration_ticks(config.max_outage)
    for path, entity in _entities(config):
        window = entity.duplicate_detection_history_time_window
        if (
            entity.paired
            and entity.duplicate_detection
            and window is not None
            and durations.duration_ticks(window) < outage
        ):
            yield (
                f"{path}.duplicateDetectionHistoryTimeWindow: expected at least maxOutage ({config.max_outage}) for "
                f"a paired entity, so copies made during an outage are still recognised, got {window!r}"
            )


# --- Tags ([tags] in limits.py) ----------------------------------------------------------------


def tag_names_and_values(config: StackConfig) -> Iterator[str]:
    for name, value in config.tags.items():
        path = f"tags.{name[:60]}"
        if not 1 <= len(name) <= limits.TAG_NAME_MAX:
            yield f"{path}: expected a tag name of 1-{limits.TAG_NAME_MAX} characters, got {len(name)}"
        if any(c in limits.TAG_NAME_FORBIDDEN_CHARACTERS for c in name):
            yield f"{path}: expected a tag name without any of {' '.join(limits.TAG_NAME_FORBIDDEN_CHARACTERS)}, got {name!r}"
        if len(value) > limits.TAG_VALUE_MAX:
            yield f"{path}: expected a tag value of at most {limits.TAG_VALUE_MAX} characters, got {len(value)}"


def tag_count(config: StackConfig) -> Iterator[str]:
    allowed = limits.MAX_TAGS_PER_RESOURCE - len(limits.RESERVED_TAGS)
    if len(config.tags) > allowed:
        yield (
            f"tags: expected at most {allowed} tags (ARM allows {limits.MAX_TAGS_PER_RESOURCE} per resource and "
            f"each namespace also gets {', '.join(limits.RESERVED_TAGS)}), got {len(config.tags)}"
        )


def tag_names_distinct(config: StackConfig) -> Iterator[str]:
    """Tag names are case-insensitive in ARM: `Env` and `env` are one tag, and this project's own
    tags cannot be set by the stack."""
    seen: dict[str, str] = {reserved: reserved for reserved in limits.RESERVED_TAGS}
    for name in config.tags:
        other = seen.get(name.lower())
        if other is not None:
            what = "this project's own tag" if other in limits.RESERVED_TAGS else f"tag {other!r}"
            yield f"tags.{name[:60]}: expected a tag name distinct from {what} (tag names are case-insensitive)"
        seen.setdefault(name.lower(), name)


# --- The syphon -------------------------------------------------------------------------------


def syphon_replicas_ordered(config: StackConfig) -> Iterator[str]:
    syphon = config.syphon
    if syphon.max_replicas < syphon.min_replicas:
        yield f"syphon.maxReplicas: expected >= minReplicas ({syphon.min_replicas}), got {syphon.max_replicas}"


def syphon_memory_matches_cpu(config: StackConfig) -> Iterator[str]:
    """Container Apps consumption sizes: memory is twice the CPU in GiB (0.25 CPU / 0.5Gi ... 2 / 4Gi)."""
    cpu = config.syphon.cpu
    expected = f"{cpu * 2:g}Gi"
    if config.syphon.memory not in (expected, f"{cpu * 2:.1f}Gi"):
        yield f"syphon.memory: expected {expected} for {cpu:g} CPU (Container Apps sizes), got {config.syphon.memory!r}"


Rule = Callable[["StackConfig"], Iterable[str]]

CROSS_FIELD_RULES: tuple[Rule, ...] = (
    standard_has_no_messaging_units,
    premium_capacity_divides_into_partitions,
    pair_spans_two_regions,
    regions_in_the_table,
    regions_in_one_cloud,
    pair_is_two_namespaces,
    resource_groups_created_once,
    secondary_holds_the_backlog,
    production_denies_public_access,
    standard_keeps_public_access,
    private_access_has_a_network,
    network_has_a_premium_namespace,
    network_subnets_distinct,
    encryption_needs_premium,
    network_rules_need_public_access,
    virtual_network_rules_need_premium,
    network_rules_need_deny,
    premium_only_log_categories,
    entity_names_unique,
    entity_sizes_of_the_tier,
    premium_entities_partitioned,
    namespace_entity_quotas,
    subscriptions_per_topic,
    subscription_names_unique,
    paired_entities_detect_duplicates,
    duplicate_window_covers_the_outage,
    *FORWARDING_RULES,
    tag_names_and_values,
    tag_count,
    tag_names_distinct,
    syphon_replicas_ordered,
    syphon_memory_matches_cpu,
)


def cross_field_problems(config: StackConfig) -> list[str]:
    """Every cross-field problem, in rule order (pair, entities, forwarding, tags, syphon)."""
    return [problem for rule in CROSS_FIELD_RULES for problem in rule(config)]
