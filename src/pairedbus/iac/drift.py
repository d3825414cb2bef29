"""Drift of live backlog queues: what the secondary namespace really holds, against the table.

Lists a primary's backlog queues (`contract.backlog_queue_prefix`) through the data plane and applies the same
`check_backlog_queue` the policy pack applies to declarations, in live mode (service defaults
present, sizes partition-aware, durations as durations). A missing index below the configured
count is drift, and so is a queue off the table (any setting, or a name with the prefix but no
valid index). Queues beyond the count are explicitly allowed by the spec (five requested and
index 7 present is a clean pair; a lowered count leaves the retained
queues behind): reported as information, never drift, never deleted. Their settings still count.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

from azure.core.exceptions import HttpResponseError
from azure.identity import DefaultAzureCredential
from azure.servicebus.management import NamespaceProperties, QueueProperties, ServiceBusAdministrationClient

from pairedbus import contract
from pairedbus.rules import Finding, check_backlog_queue, extra_backlog_queues


class AdministrationClient(Protocol):
    def get_namespace_properties(self) -> NamespaceProperties: ...

    def list_queues(self) -> Iterable[QueueProperties]: ...


def arm_named_properties(queue: QueueProperties) -> dict[str, object]:
    """A queue's properties under their ARM names, as the rules read them."""
    values = {arm: getattr(queue, sdk, None) for arm, sdk in contract.ARM_TO_SDK_QUEUE_FIELD.items()}
    return {k: v for k, v in values.items() if v is not None}


@dataclass(frozen=True)
class DriftReport:
    secondary: str
    primary_name: str
    count: int
    sku: str | None
    found: tuple[str, ...]
    findings: tuple[Finding, ...] = ()
    missing: tuple[str, ...] = ()
    #: Backlog queues beyond the configured count: allowed, information only.
    extra: tuple[str, ...] = ()
    #: Names with the primary's backlog prefix but no valid index (`.../01`, `.../x`): off the table.
    invalid: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def drifted(self) -> bool:
        return bool(self.findings or self.missing or self.invalid)

    def lines(self) -> list[str]:
        head = (
            f"{self.secondary} ({self.sku or 'tier unknown'}): {self.count} backlog queues expected for primary "
            f"{self.primary_name}, {len(self.found)} found"
        )
        body = [f"DRIFT    {f.message}" for f in self.findings]
        body += [f"MISSING  {name}" for name in self.missing]
        body += [f"INVALID  {name} (has the backlog prefix but no valid index)" for name in self.invalid]
        body += [
            f"EXTRA    {name} (beyond backlogQueueCount {self.count}: allowed, unused, never deleted)"
            for name in self.extra
        ]
        body += [f"NOTE     {note}" for note in self.notes]
        verdict = "drift: " + ", ".join(
            f"{n} {what}"
            for n, what in (
                (len(self.findings), "properties off the table"),
                (len(self.missing), "missing"),
                (len(self.invalid), "invalid names"),
            )
            if n
        )
        extras = f" ({len(self.extra)} extra, allowed)" if self.extra else ""
        return [head, *body, (verdict if self.drifted else "no drift") + extras]

    def to_json(self) -> dict[str, Any]:
        return {
            "secondary": self.secondary,
            "primaryName": self.primary_name,
            "count": self.count,
            "sku": self.sku,
            "found": list(self.found),
            "findings": [f.to_json() for f in self.findings],
            "missing": list(self.missing),
            "extra": list(self.extra),
            "invalid": list(self.invalid),
            "notes": list(self.notes),
            "drift": self.drifted,
        }


def _plain(value: object) -> str:
    """An SDK enum by its value (`Standard`; `str()` of the enum says `MessagingSku.STANDARD`)."""
    return str(value.value) if isinstance(value, Enum) else str(value)


def _index_order(name: str) -> tuple[int, str]:
    parsed = contract.parse_backlog_queue_name(name)
    return (parsed[1], name) if parsed else (contract.INT32_MAX, name)


def detect_drift(client: AdministrationClient, *, secondary: str, primary_name: str, count: int) -> DriftReport:
    notes: list[str] = []
    try:
        ns = client.get_namespace_properties()
        namespace: dict[str, object] | None = {"name": ns.name, "sku": ns.messaging_sku}
        sku = _plain(ns.messaging_sku) if ns.messaging_sku else None
    except HttpResponseError as exc:
        # The tier only sharpens the partition-aware size comparison; the queues still tell drift.
        namespace, sku = None, None
        notes.append(f"namespace properties unavailable ({exc.status_code or type(exc).__name__}): tier unknown")

    prefix = contract.backlog_queue_prefix(primary_name).lower()
    queues = sorted(
        (q for q in client.list_queues() if q.name.lower().startswith(prefix)), key=lambda q: _index_order(q.name)
    )
    expected = set(contract.backlog_queue_names(primary_name, count))
    present: set[str] = set()
    findings: list[Finding] = []
    invalid: list[str] = []
    for queue in queues:
        parsed = contract.parse_backlog_queue_name(queue.name)
        if parsed is None:
            invalid.append(queue.name)
            continue
        present.add(contract.backlog_queue_name(primary_name, parsed[1]))
        findings.extend(check_backlog_queue(queue.name, arm_named_properties(queue), namespace, live=True))
    missing = sorted(expected - present, key=_index_order)
    extra = extra_backlog_queues([q.name for q in queues], count)
    return DriftReport(
        secondary=secondary,
        primary_name=primary_name,
        count=count,
        sku=sku,
        found=tuple(q.name for q in queues),
        findings=tuple(findings),
        missing=tuple(missing),
        extra=tuple(extra),
        invalid=tuple(invalid),
        notes=tuple(notes),
    )


def check_live_backlog(secondary: str, primary_name: str, count: int) -> DriftReport:
    """Sign in with DefaultAzureCredential (Service Bus Data Owner on the secondary lists queues)."""
    with (
        DefaultAzureCredential() as credential,
        ServiceBusAdministrationClient(secondary, credential=credential) as client,
    ):
        return detect_drift(client, secondary=secondary, primary_name=primary_name, count=count)
