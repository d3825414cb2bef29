"""Applying the shared rules (`pairedbus.rules`, the policy pack's own functions) to the inventory.

The inventory is small next to the metrics, so its rows come to the driver and go through the
rule functions there: one implementation of every rule, whether it runs in a Pulumi preview or
over an estate. A record a rule cannot read is quarantined, never a crash.

A pair's backlog set is judged as the policy pack and `drift` judge it: against the count the pair
was deployed with, which the component records on the secondary namespace as the tag
`pairedbus-backlog-queue-count` (extras beyond it allowed, a missing index below it mandatory).
A secondary without the tag (deployed before it existed, or by other tools) falls back to what
exists: the number of distinct indices present stands in for the count, so a gap below the highest
index is reported, *advisory*, because the audit cannot tell a gap from an allowed extra (five
requested and `/7` present looks like a gap at 5 and 6). A tag that is not a whole number in
`contract.MIN_BACKLOG_QUEUE_COUNT`..`contract.MAX_BACKLOG_QUEUE_COUNT` is reported and treated as absent.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql.types import StringType, StructField, StructType

from pairedbus import contract, rules
from pairedbus.pipeline import schemas
from pairedbus.pipeline.inventory import KIND_NAMESPACE, KIND_QUEUE, KIND_TOPIC

#: Rule name of the finding a malformed backlog-count tag gives.
BACKLOG_COUNT_TAG_RULE = "backlog-queue-count-tag"
NO_COUNT_TAG_NOTE = (
    f" (advisory: no {contract.TAG_BACKLOG_QUEUE_COUNT} tag on the secondary, so the count is inferred from the"
    " queues present and a gap may be an allowed extra)"
)

VIOLATION_COLUMNS = ("namespace", "entity", "rule", "property", "expected", "actual", "severity")
VIOLATIONS = StructType([StructField(c, StringType()) for c in (*VIOLATION_COLUMNS, "message")])

#: The namespace properties the rules read, as the rules' namespace mapping carries them.
NAMESPACE_FIELDS = ("premiumMessagingPartitions", "disableLocalAuth", "minimumTlsVersion")


@dataclass(frozen=True)
class Rejected:
    """An inventory record a rule function could not evaluate."""

    source_file: str
    reason: str
    record: str


def format_value(value: object) -> str:
    """A rule's expected/actual value as a CSV cell: JSON spelling for booleans and null."""
    if value is None:
        return ""
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except TypeError:
        return str(value)


def entity_properties(row: Mapping[str, Any]) -> dict[str, Any]:
    """The ARM camelCase properties a record carries (absent ones are left out, not None)."""
    return {name: row[name] for name in schemas.PROPERTY_TYPES if row.get(name) is not None}


def namespace_mapping(row: Mapping[str, Any]) -> dict[str, Any]:
    """The namespace mapping the shared rules take (ARM sku object, ARM property names)."""
    sku = {"name": row.get("sku_name")}
    if row.get("sku_capacity") is not None:
        sku["capacity"] = row["sku_capacity"]
    mapping: dict[str, Any] = {"name": row["namespace_display"], "location": row.get("location"), "sku": sku}
    mapping.update({field: row.get(field) for field in NAMESPACE_FIELDS})
    return mapping


def backlog_count(tags: Mapping[str, Any] | None) -> tuple[int | None, str | None]:
    """(count, problem): the secondary's `pairedbus-backlog-queue-count` tag as a count; None and why
    when the tag is there but not a whole number in the count's range (absent: None, None)."""
    value = (tags or {}).get(contract.TAG_BACKLOG_QUEUE_COUNT)
    if value is None:
        # Tag names are case-insensitive in Azure (ARM keeps the case it was given).
        value = next((v for k, v in (tags or {}).items() if k.lower() == contract.TAG_BACKLOG_QUEUE_COUNT), None)
    if value is None:
        return None, None
    text = str(value).strip()
    if (
        text.isascii()
        and text.isdigit()
        and contract.MIN_BACKLOG_QUEUE_COUNT <= int(text) <= contract.MAX_BACKLOG_QUEUE_COUNT
    ):
        return int(text), None
    bounds = f"{contract.MIN_BACKLOG_QUEUE_COUNT}..{contract.MAX_BACKLOG_QUEUE_COUNT}"
    return None, f"tag {contract.TAG_BACKLOG_QUEUE_COUNT}={value!r} is not a whole number in {bounds}: count inferred"


#: A rule check by name, and its keyword options (None: a namespace check, given the namespace alone).
_Check = tuple[str, Callable[..., list[Any]], dict[str, Any] | None]


def _checks(kind: str, entity: str) -> list[_Check]:
    checks: list[_Check] = []
    if kind == KIND_QUEUE and contract.is_backlog_queue_name(entity):
        checks.append(("check_backlog_queue", rules.check_backlog_queue, {"live": True}))
    if kind in (KIND_QUEUE, KIND_TOPIC):
        checks.append(("check_premium_entity_partitioned", rules.check_premium_entity_partitioned, {}))
        checks.append(("check_entity_size", rules.check_entity_size, {"live": True}))
    return checks


class _Violations:
    """Violation tuples in VIOLATIONS order, each (namespace, entity, rule, property) once: two inputs of the same
    resource (ARM '~' and data-plane '/') give the same finding twice."""

    def __init__(self) -> None:
        self.seen: set[tuple[str, str, str, str]] = set()
        self.rows: list[tuple[str, ...]] = []

    def add(self, namespace_display: str, findings: Iterable[Any]) -> None:
        for f in findings:
            key = (namespace_display, f.entity, f.rule, f.property or "")
            if key in self.seen:
                continue
            self.seen.add(key)
            self.rows.append(
                (
                    namespace_display,
                    f.entity,
                    f.rule,
                    f.property or "",
                    format_value(f.expected),
                    format_value(f.actual),
                    f.severity,
                    f.message,
                )
            )


def evaluate(rows: Iterable[Mapping[str, Any]]) -> tuple[list[tuple[str, ...]], list[Rejected]]:
    """Violation tuples (VIOLATIONS order) and rejected records for normalised inventory rows."""
    rows = list(rows)
    namespaces = {r["namespace"]: namespace_mapping(r) for r in rows if r["kind"] == KIND_NAMESPACE}
    violations = _Violations()
    # Estate-wide checks first: each secondary's backlog queues against their primary, and Standard's
    # quota of partitioned entities per namespace; then each record's own.
    _check_backlog_sets(rows, namespaces, violations)
    _check_partitioned_entity_limits(rows, namespaces, violations)
    rejected = _check_each_record(rows, namespaces, violations)
    return violations.rows, rejected


def _backlog_sets(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], dict[str, str]]:
    """(secondary, primary) -> the backlog queues present, one name per queue: Service Bus names are
    case-insensitive (`ORDERS` is `orders`)."""
    sets: dict[tuple[str, str], dict[str, str]] = {}
    for row in rows:
        parsed = contract.parse_backlog_queue_name(row["entity"]) if row["kind"] == KIND_QUEUE else None
        if parsed is not None:
            sets.setdefault((row["namespace"], parsed[0].lower()), {}).setdefault(row["entity"].lower(), row["entity"])
    return sets


def _check_backlog_sets(
    rows: Sequence[Mapping[str, Any]], namespaces: Mapping[str, dict[str, Any]], violations: _Violations
) -> None:
    counts = {r["namespace"]: backlog_count(r.get("tags")) for r in rows if r["kind"] == KIND_NAMESPACE}
    for (secondary, primary), names in sorted(_backlog_sets(rows).items()):
        if secondary not in namespaces:
            continue
        primary_ns = namespaces.get(primary, {"name": primary})
        count, problem = counts.get(secondary, (None, None))
        display = namespaces[secondary]["name"]
        if problem is not None:
            violations.add(display, [_count_tag_finding(display, problem)])
        findings = rules.check_pair(primary_ns, namespaces[secondary], sorted(names.values()), count=count)
        violations.add(display, findings if count is not None else [_inferred(f) for f in findings])


def _check_partitioned_entity_limits(
    rows: Sequence[Mapping[str, Any]], namespaces: Mapping[str, dict[str, Any]], violations: _Violations
) -> None:
    entities_by_ns: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if row["kind"] in (KIND_QUEUE, KIND_TOPIC):
            entities_by_ns.setdefault(row["namespace"], []).append(entity_properties(row))
    for key, entities in sorted(entities_by_ns.items()):
        if key in namespaces:
            violations.add(namespaces[key]["name"], rules.check_partitioned_entity_limit(namespaces[key], entities))


def _check_each_record(
    rows: Sequence[Mapping[str, Any]], namespaces: Mapping[str, dict[str, Any]], violations: _Violations
) -> list[Rejected]:
    """Each record's own checks; a record a rule cannot read is rejected, and the audit goes on."""
    rejected: list[Rejected] = []
    for row in rows:
        if row["kind"] == KIND_NAMESPACE:
            checks: list[_Check] = [("check_namespace_security", rules.check_namespace_security, None)]
        else:
            checks = _checks(row["kind"], row["entity"])
        namespace = namespaces.get(row["namespace"])
        display = namespace["name"] if namespace else row["namespace_display"]
        for name, check, options in checks:
            try:
                if options is None:
                    findings = check(namespaces[row["namespace"]])
                else:
                    findings = check(row["entity"], entity_properties(row), namespace, **options)
            except Exception as exc:  # a rule that cannot read a record must not stop the audit
                rejected.append(Rejected(row["source_file"], f"{name}: {type(exc).__name__}: {exc}", _record(row)))
                continue
            violations.add(display, findings)
    return rejected


def _record(row: Mapping[str, Any]) -> str:
    """A rejected record as the quarantine keeps it: JSON, absent fields left out."""
    return json.dumps({k: v for k, v in row.items() if v is not None}, default=str, sort_keys=True)


def _inferred(finding: Any) -> Any:
    """A missing-index finding judged without the configured count: advisory, saying why."""
    missing = finding.rule == rules.BACKLOG_QUEUE_SET and finding.actual is None and " missing: " in finding.message
    if not missing:
        return finding
    return replace(finding, severity=rules.ADVISORY, message=finding.message + NO_COUNT_TAG_NOTE)


def _count_tag_finding(namespace: str, problem: str) -> Any:
    return rules.Finding(
        rule=BACKLOG_COUNT_TAG_RULE,
        entity=namespace,
        namespace=namespace,
        property=f"tags.{contract.TAG_BACKLOG_QUEUE_COUNT}",
        expected=f"a whole number in {contract.MIN_BACKLOG_QUEUE_COUNT}..{contract.MAX_BACKLOG_QUEUE_COUNT}",
        actual=problem,
        severity=rules.ADVISORY,
        message=f"secondary {namespace}: {problem}",
    )


def violations_frame(spark: SparkSession, resources: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(violations, rejected records in the quarantine layout) for the normalised inventory."""
    rows: Iterator[Row] = resources.toLocalIterator()
    found, rejected = evaluate(r.asDict() for r in rows)
    violations = spark.createDataFrame(found, VIOLATIONS)
    quarantine = spark.createDataFrame(
        [("inventory", r.source_file, r.reason, r.record) for r in rejected], schemas.QUARANTINE
    )
    return violations, quarantine
