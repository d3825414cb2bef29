"""Rules for backlog queues (paired-namespaces.md, "Backlog queues") and for the pair they serve."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import timedelta
from enum import Enum
from typing import Final

from pairedbus import contract, durations
from pairedbus.rules.entities import PARTITIONING, reported_size_matches
from pairedbus.rules.findings import (
    BACKLOG_QUEUE_SET,
    BACKLOG_QUEUE_SETTINGS,
    MANDATORY,
    PAIRED_REGIONS_DIFFER,
    Finding,
)
from pairedbus.rules.namespace import NamespaceView, namespace_view, normalise_region

#: Inputs that name a backlog queue and its place rather than configure it.
BACKLOG_IDENTITY_PROPERTIES: Final = frozenset({"name", "queueName", "namespaceName", "resourceGroupName"})
ABSENT: Final = "<absent>"


def _show(value: object) -> str:
    """A live value as the table writes its own: durations in ISO 8601 (`'PT30S'` beside the
    table's `'PT1M'`, not `0:00:30`), an SDK enum as its value (not `MessagingSku.STANDARD`)."""
    if isinstance(value, timedelta):
        return repr(durations.iso_duration(value))
    if isinstance(value, Enum):
        return repr(value.value)
    return repr(value)


def _finding(queue: str, ns: str | None, prop: str | None, expected: object, actual: object, why: str) -> Finding:
    return Finding(
        rule=BACKLOG_QUEUE_SETTINGS,
        entity=queue,
        namespace=ns,
        property=prop,
        expected=expected,
        actual=actual,
        severity=MANDATORY,
        message=f"backlog queue {queue}: {why}",
    )


def check_backlog_queue(
    queue_name: str,
    properties: Mapping[str, object],
    namespace: Mapping[str, object] | NamespaceView | None,
    *,
    live: bool = False,
) -> list[Finding]:
    """Every property of the backlog table present and exact; declared queues carry nothing else
    beyond name, namespace and the partitioning their namespace requires.

    `live=True`: `properties` were read back from the service, where every other property holds
    its service default, so only the table is checked (sizes partition-aware, durations as
    durations). Pulumi-internal inputs (`__provider` of a dynamic resource) are the caller's to drop.
    """
    ns = namespace_view(namespace) if namespace is not None else None
    ns_name = ns.name if ns is not None else None
    findings: list[Finding] = []
    for prop, expected in contract.BACKLOG_QUEUE_PROPERTIES.items():
        actual = properties.get(prop)
        if live and prop == "maxSizeInMegabytes":
            ok = reported_size_matches(
                expected,  # type: ignore[arg-type]  # the table's maxSizeInMegabytes is an int; the table is typed dict[str, object]
                actual,
                partitioned=properties.get(PARTITIONING) is True,
                sku=ns.sku if ns is not None else None,
            )
        else:
            ok = contract.backlog_value_matches(prop, expected, actual)
        if not ok:
            shown = ABSENT if prop not in properties else _show(actual)
            findings.append(
                _finding(queue_name, ns_name, prop, expected, actual, f"{prop} expected {expected!r}, got {shown}")
            )
    if live:
        return findings

    for prop in sorted(properties):
        if prop in contract.BACKLOG_QUEUE_PROPERTIES or prop in BACKLOG_IDENTITY_PROPERTIES or prop == PARTITIONING:
            continue
        findings.append(
            _finding(
                queue_name,
                ns_name,
                prop,
                ABSENT,
                properties[prop],
                f"{prop} expected {ABSENT} (only the backlog table is set), got {_show(properties[prop])}",
            )
        )
    if ns is not None:
        actual = properties.get(PARTITIONING)
        shown = ABSENT if PARTITIONING not in properties else _show(actual)
        if ns.requires_partitioned_entities and actual is not True:
            findings.append(
                _finding(
                    queue_name,
                    ns_name,
                    PARTITIONING,
                    True,
                    actual,
                    f"{PARTITIONING} expected true (namespace {ns.label} is partitioned Premium), got {shown}",
                )
            )
        elif not ns.requires_partitioned_entities and PARTITIONING in properties:
            findings.append(
                _finding(
                    queue_name,
                    ns_name,
                    PARTITIONING,
                    ABSENT,
                    actual,
                    f"{PARTITIONING} expected {ABSENT} (namespace {ns.label} does not require it), got {shown}",
                )
            )
    return findings


def _set_finding(entity: str, ns: str | None, prop: str | None, expected: object, actual: object, msg: str) -> Finding:
    return Finding(
        rule=BACKLOG_QUEUE_SET,
        entity=entity,
        namespace=ns,
        property=prop,
        expected=expected,
        actual=actual,
        severity=MANDATORY,
        message=msg,
    )


def extra_backlog_queues(backlog_queue_names: Sequence[str], count: int) -> list[str]:
    """Backlog queues beyond the configured count: explicitly allowed (paired-namespaces.md,
    "Backlog queues": five requested and index 7 present is a clean
    pair), so information, never a finding. Their settings are still checked against the table."""
    return [
        name
        for name in backlog_queue_names
        if (parsed := contract.parse_backlog_queue_name(name)) is not None and parsed[1] >= count
    ]


def check_pair(
    primary: Mapping[str, object] | NamespaceView,
    secondary: Mapping[str, object] | NamespaceView,
    backlog_queue_names: Sequence[str],
    *,
    count: int | None = None,
) -> list[Finding]:
    """The pair as a whole: the two namespaces in different regions; the backlog queues named with
    the primary's prefix, without repeats, and no index below the count missing.

    `count` is the configured backlogQueueCount. Queues at or beyond it are allowed extras
    (`extra_backlog_queues`), not findings. Without it (the audit reads only what exists), the
    number of distinct indices present stands in for it, a lower bound: a gap below it is missing.
    """
    p, s = namespace_view(primary), namespace_view(secondary)
    findings: list[Finding] = []
    if p.location and s.location and normalise_region(p.location) == normalise_region(s.location):
        findings.append(
            Finding(
                rule=PAIRED_REGIONS_DIFFER,
                entity=s.label,
                namespace=s.name,
                property="location",
                expected=f"a region other than {p.location}",
                actual=s.location,
                severity=MANDATORY,
                message=f"secondary {s.label} is in {s.location}, the same region as primary {p.label}",
            )
        )
    if not backlog_queue_names:
        findings.append(
            _set_finding(
                s.label,
                s.name,
                None,
                f"{contract.backlog_queue_prefix(p.label)}0..N-1",
                [],
                f"secondary {s.label}: no backlog queues for primary {p.label}",
            )
        )
        return findings
    indices: list[int] = []
    for name in backlog_queue_names:
        parsed = contract.parse_backlog_queue_name(name)
        if parsed is None:
            findings.append(
                _set_finding(
                    name,
                    s.name,
                    "queueName",
                    f"{contract.backlog_queue_prefix(p.label)}<index>",
                    name,
                    f"{name}: not a backlog queue name, expected {contract.backlog_queue_prefix(p.label)}<index>",
                )
            )
            continue
        prefix, index = parsed
        if p.name is not None and prefix.lower() != p.name.lower():
            findings.append(
                _set_finding(
                    name,
                    s.name,
                    "queueName",
                    contract.backlog_queue_name(p.name, index),
                    name,
                    f"{name}: prefix {prefix!r} is not the primary's name {p.name!r}",
                )
            )
        indices.append(index)
    for index, times in sorted(Counter(indices).items()):
        if times > 1:
            findings.append(
                _set_finding(
                    contract.backlog_queue_name(p.label, index),
                    s.name,
                    "queueName",
                    1,
                    times,
                    f"backlog index {index} appears {times} times",
                )
            )
    configured = count is not None
    expected = count if count is not None else len(set(indices))
    have = ", ".join(map(str, sorted(set(indices)))) or "none"
    for index in sorted(set(range(expected)) - set(indices)):
        name = contract.backlog_queue_name(p.label, index)
        why = (
            f"backlogQueueCount {expected} needs indices 0..{expected - 1}"
            if configured
            else f"{expected} backlog queues must be indexed 0..{expected - 1} without gaps"
        )
        findings.append(_set_finding(name, s.name, "queueName", name, None, f"{name} missing: {why} (have {have})"))
    return findings


def check_backlog_in_secondary(queue_name: str, namespace_name: str | None, secondary_name: str) -> list[Finding]:
    """A backlog queue lives in the secondary namespace, never the primary or a third one."""
    if namespace_name is not None and namespace_name.lower() == secondary_name.lower():
        return []
    return [
        _set_finding(
            queue_name,
            namespace_name,
            "namespaceName",
            secondary_name,
            namespace_name,
            f"backlog queue {queue_name} is in namespace {namespace_name!r}, expected the secondary {secondary_name!r}",
        )
    ]
