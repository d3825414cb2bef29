"""Rules for queues and topics: partitioning on Premium, size per tier, Standard's partitioned
entity quota, duplicate detection where paired senders write."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pairedbus import contract
from pairedbus.rules.findings import (
    ADVISORY,
    ENTITY_SIZE_ALLOWED_FOR_TIER,
    MANDATORY,
    PAIRED_ENTITIES_DUPLICATE_DETECTION,
    PREMIUM_ENTITIES_PARTITIONED,
    STANDARD_PARTITIONED_ENTITY_LIMIT,
    Finding,
)
from pairedbus.rules.namespace import NamespaceView, namespace_view

PARTITIONING = contract.BACKLOG_PARTITIONING_PROPERTY  # "enablePartitioning"


def whole(value: object) -> object:
    """2.0 -> 2: JSON, gRPC and Spark may hand integers over as doubles."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def reported_size_matches(configured_mb: int, reported: object, *, partitioned: bool, sku: str | None) -> bool:
    """Whether a size read back from the service is `configured_mb`.

    A partitioned entity reports its size times the fragments the service made for it (a 5 GB
    Standard queue reads back as 80 GB). Accept the plain size too: what counts is that the owner
    configured `configured_mb`.
    """
    reported = whole(reported)
    if reported == configured_mb and not isinstance(reported, bool):
        return True
    if not partitioned or not isinstance(reported, int):
        return False
    factors = (
        [contract.PARTITIONS_PER_ENTITY[sku]]
        if sku in contract.PARTITIONS_PER_ENTITY
        else list(contract.PARTITIONS_PER_ENTITY.values())
    )
    return any(reported == configured_mb * factor for factor in factors)


def configured_size(reported: int, *, partitioned: bool, sku: str | None, allowed: Sequence[int]) -> int | None:
    """The configured size behind a live reading, if it is one of `allowed`; None otherwise."""
    for size in allowed:
        if reported_size_matches(size, reported, partitioned=partitioned, sku=sku):
            return size
    return None


def is_partitioned(properties: Mapping[str, object]) -> bool:
    """Partitioning is on by default for new queues and topics (partitioning.md): only an explicit
    false makes an entity non-partitioned."""
    return properties.get(PARTITIONING) is not False


def check_premium_entity_partitioned(
    entity_name: str, properties: Mapping[str, object], namespace: Mapping[str, object] | NamespaceView | None
) -> list[Finding]:
    """In Premium every queue and topic is partitioned: the namespace has >= 2 messaging partitions
    and the entity says `enablePartitioning: true`."""
    if namespace is None:
        return []
    ns = namespace_view(namespace)
    if not ns.is_premium:
        return []
    findings: list[Finding] = []
    if ns.partitions < contract.MIN_PREMIUM_PARTITIONS_FOR_ENTITIES:
        findings.append(
            Finding(
                rule=PREMIUM_ENTITIES_PARTITIONED,
                entity=entity_name,
                namespace=ns.name,
                property="premiumMessagingPartitions",
                expected=f">= {contract.MIN_PREMIUM_PARTITIONS_FOR_ENTITIES}",
                actual=ns.premium_messaging_partitions,
                severity=MANDATORY,
                message=(
                    f"{entity_name}: Premium namespace {ns.label} has premiumMessagingPartitions "
                    f"{ns.premium_messaging_partitions!r}, expected >= {contract.MIN_PREMIUM_PARTITIONS_FOR_ENTITIES}"
                ),
            )
        )
    actual = properties.get(PARTITIONING)
    if actual is not True:
        findings.append(
            Finding(
                rule=PREMIUM_ENTITIES_PARTITIONED,
                entity=entity_name,
                namespace=ns.name,
                property=PARTITIONING,
                expected=True,
                actual=actual,
                severity=MANDATORY,
                message=f"{entity_name} in Premium namespace {ns.label}: enablePartitioning expected true, got {actual!r}",
            )
        )
    return findings


def check_entity_size(
    entity_name: str,
    properties: Mapping[str, object],
    namespace: Mapping[str, object] | NamespaceView | None,
    *,
    live: bool = False,
) -> list[Finding]:
    """`maxSizeInMegabytes` is one of the sizes the namespace's tier offers (unset: the 1 GB default)."""
    if namespace is None:
        return []
    ns = namespace_view(namespace)
    allowed = contract.ENTITY_SIZES_MB.get(ns.sku or "")
    size = whole(properties.get("maxSizeInMegabytes"))
    if allowed is None or size is None:
        return []
    if live and isinstance(size, int) and not isinstance(size, bool):
        ok = (
            configured_size(size, partitioned=properties.get(PARTITIONING) is True, sku=ns.sku, allowed=allowed)
            is not None
        )
    else:
        ok = size in allowed and not isinstance(size, bool)
    if ok:
        return []
    return [
        Finding(
            rule=ENTITY_SIZE_ALLOWED_FOR_TIER,
            entity=entity_name,
            namespace=ns.name,
            property="maxSizeInMegabytes",
            expected=list(allowed),
            actual=size,
            severity=MANDATORY,
            message=(
                f"{entity_name}: maxSizeInMegabytes {size!r} is not a {ns.sku} size, expected one of "
                f"{', '.join(map(str, allowed))}"
            ),
        )
    ]


def check_partitioned_entity_limit(
    namespace: Mapping[str, object] | NamespaceView, entities: Sequence[Mapping[str, object]]
) -> list[Finding]:
    """At most 100 partitioned queues and topics in a Standard namespace. `entities` are the
    property mappings of every queue and topic in it (backlog queues included); an entity without
    `enablePartitioning` counts, since the service partitions new entities by default."""
    ns = namespace_view(namespace)
    if ns.sku != contract.SKU_STANDARD:
        return []
    count = sum(1 for e in entities if is_partitioned(e))
    limit = contract.MAX_PARTITIONED_ENTITIES_PER_STANDARD_NAMESPACE
    if count <= limit:
        return []
    return [
        Finding(
            rule=STANDARD_PARTITIONED_ENTITY_LIMIT,
            entity=ns.label,
            namespace=ns.name,
            property=PARTITIONING,
            expected=f"<= {limit}",
            actual=count,
            severity=MANDATORY,
            message=f"Standard namespace {ns.label}: {count} partitioned queues and topics, at most {limit} allowed",
        )
    ]


def check_duplicate_detection(
    entity_name: str, properties: Mapping[str, object], namespace: Mapping[str, object] | NamespaceView | None
) -> list[Finding]:
    """Advisory: a queue or topic paired senders write to should drop the duplicate a repeated
    syphon move can produce (`requiresDuplicateDetection: true`)."""
    actual = properties.get("requiresDuplicateDetection")
    if actual is True:
        return []
    ns_name = namespace_view(namespace).name if namespace is not None else None
    return [
        Finding(
            rule=PAIRED_ENTITIES_DUPLICATE_DETECTION,
            entity=entity_name,
            namespace=ns_name,
            property="requiresDuplicateDetection",
            expected=True,
            actual=actual,
            severity=ADVISORY,
            message=f"{entity_name}: requiresDuplicateDetection expected true for an entity paired senders write to, got {actual!r}",
        )
    ]
