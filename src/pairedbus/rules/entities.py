"""Rules for queues and topics: partitioning on Premium, size per tier, Standard's partitioned
entity quota, duplicate detection where paired senders write."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pairedbus import contract, durations
from pairedbus.rules.findings import (
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


DUPLICATE_DETECTION = "requiresDuplicateDetection"
DUPLICATE_WINDOW = "duplicateDetectionHistoryTimeWindow"


def check_duplicate_detection(
    entity_name: str,
    properties: Mapping[str, object],
    namespace: Mapping[str, object] | NamespaceView | None,
    *,
    max_outage: str = contract.DEFAULT_MAX_OUTAGE,
    paired: bool = True,
) -> list[Finding]:
    """Mandatory for a queue or topic paired senders write to: duplicate detection on, with a window
    at least as long as the longest outage the pair must absorb.

    Two real paths make a second copy (paired-namespaces.md, "Duplicates"): a send that timed out
    after the primary stored the message is parked too, and a syphon whose complete fails after its
    send moves the message again. The copy reaches the destination up to an outage after the first,
    so only detection by MessageId over a window that long removes it. `paired=False` (the entity is
    opted out of pairing) exempts it. An absent window is the service default, 10 minutes.
    """
    if not paired:
        return []
    ns_name = namespace_view(namespace).name if namespace is not None else None

    def finding(prop: str, expected: object, actual: object, why: str) -> Finding:
        return Finding(
            rule=PAIRED_ENTITIES_DUPLICATE_DETECTION,
            entity=entity_name,
            namespace=ns_name,
            property=prop,
            expected=expected,
            actual=actual,
            severity=MANDATORY,
            message=f"{entity_name}: {why} (or mark it paired: false)",
        )

    enabled = properties.get(DUPLICATE_DETECTION)
    if enabled is not True:
        return [
            finding(
                DUPLICATE_DETECTION,
                True,
                enabled,
                f"{DUPLICATE_DETECTION} expected true for an entity paired senders write to, got {enabled!r}",
            )
        ]
    window = properties.get(DUPLICATE_WINDOW)
    if window is None and DUPLICATE_WINDOW in properties:
        return []  # not known until deployment: nothing to judge offline
    shown = (
        window if window is not None else f"the service default {contract.SERVICE_DEFAULT_DUPLICATE_DETECTION_WINDOW}"
    )
    try:
        ticks = durations.duration_ticks(
            window if window is not None else contract.SERVICE_DEFAULT_DUPLICATE_DETECTION_WINDOW  # type: ignore[arg-type]  # a planned property is any JSON value: a non-duration raises ValueError, judged below
        )
    except ValueError:
        ticks = -1
    if ticks < durations.duration_ticks(max_outage):
        return [
            finding(
                DUPLICATE_WINDOW,
                f">= {max_outage}",
                window,
                f"{DUPLICATE_WINDOW} expected at least maxOutage {max_outage}, so copies made during an outage are "
                f"still recognised, got {shown}",
            )
        ]
    return []
