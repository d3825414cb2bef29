"""The rules, as pure functions over plain mappings (ARM camelCase names): the CrossGuard policy
pack, the offline gate, `pairedbus drift` and the Spark audit all apply these same functions."""

from pairedbus.rules.backlog import (
    BACKLOG_IDENTITY_PROPERTIES,
    check_backlog_in_secondary,
    check_backlog_queue,
    check_pair,
    extra_backlog_queues,
)
from pairedbus.rules.entities import (
    check_duplicate_detection,
    check_entity_size,
    check_partitioned_entity_limit,
    check_premium_entity_partitioned,
    is_partitioned,
    reported_size_matches,
)
from pairedbus.rules.findings import (
    ADVISORY,
    BACKLOG_QUEUE_SET,
    BACKLOG_QUEUE_SETTINGS,
    ENTITY_SIZE_ALLOWED_FOR_TIER,
    LOCAL_AUTH_DISABLED,
    MANDATORY,
    MINIMUM_TLS,
    PAIRED_ENTITIES_DUPLICATE_DETECTION,
    PAIRED_REGIONS_DIFFER,
    PREMIUM_ENTITIES_PARTITIONED,
    PRODUCTION_NAMESPACE_DIAGNOSTICS,
    RULES,
    STANDARD_PARTITIONED_ENTITY_LIMIT,
    Finding,
)
from pairedbus.rules.hardening import check_production_diagnostics
from pairedbus.rules.namespace import NamespaceView, check_namespace_security, namespace_view, normalise_region

__all__ = [
    "ADVISORY",
    "BACKLOG_IDENTITY_PROPERTIES",
    "BACKLOG_QUEUE_SET",
    "BACKLOG_QUEUE_SETTINGS",
    "ENTITY_SIZE_ALLOWED_FOR_TIER",
    "LOCAL_AUTH_DISABLED",
    "MANDATORY",
    "MINIMUM_TLS",
    "PAIRED_ENTITIES_DUPLICATE_DETECTION",
    "PAIRED_REGIONS_DIFFER",
    "PREMIUM_ENTITIES_PARTITIONED",
    "PRODUCTION_NAMESPACE_DIAGNOSTICS",
    "RULES",
    "STANDARD_PARTITIONED_ENTITY_LIMIT",
    "Finding",
    "NamespaceView",
    "check_backlog_in_secondary",
    "check_backlog_queue",
    "check_duplicate_detection",
    "check_entity_size",
    "check_namespace_security",
    "check_pair",
    "check_partitioned_entity_limit",
    "check_premium_entity_partitioned",
    "check_production_diagnostics",
    "extra_backlog_queues",
    "is_partitioned",
    "namespace_view",
    "normalise_region",
    "reported_size_matches",
]
