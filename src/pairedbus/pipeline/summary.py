"""The run summary of an audit: what was read, refused, dropped, found and what it costs.

Its own module so that the job, the report and the CLI all import it and none imports another."""

from __future__ import annotations

from pydantic import BaseModel, Field


class AuditSummary(BaseModel):
    namespaces: int
    entities: int
    pairs: int
    violations: int
    quarantined: int
    days: int
    #: Every namespace's estimated bill over the days covered (list prices).
    estimated_cost_usd: float
    #: What pairing adds, over the days covered, and its monthly projection (all pairs).
    pairing_cost_usd: float
    pairing_monthly_projection_usd: float
    #: From the FOCUS exports (--costs), what the bill says for the pairs over the same days.
    actual_pairing_cost_usd: float | None = None
    violations_by_rule: dict[str, int]
    quarantined_by_reason: dict[str, int]
    #: Per input: files read, by format; files refused, by name, with the reason.
    files_read: dict[str, dict[str, int]] = Field(default_factory=dict)
    files_refused: dict[str, str] = Field(default_factory=dict)
    #: Identical copies dropped, per input (metrics: data points; inventory: resource records).
    duplicates_dropped: dict[str, int] = Field(default_factory=dict)
    #: Resources with versions that differ (every version kept and judged by the rules).
    conflicting_resources: int = 0
    namespaces_without_price: list[str]
    prices_source: str
    prices_as_of: str
    clients: int
    since: str | None = None
    until: str | None = None
    out: str

    def line(self) -> str:
        actual = "" if self.actual_pairing_cost_usd is None else f" (bills: {self.actual_pairing_cost_usd:.2f} USD effective)"
        return (
            f"audit: {self.namespaces} namespaces, {self.pairs} pairs, {self.entities} entities, "
            f"{self.violations} violations, {self.quarantined} quarantined, "
            f"{sum(self.duplicates_dropped.values())} duplicates dropped, {len(self.files_refused)} files refused, "
            f"{self.days} days; pairing costs {self.pairing_cost_usd:.2f} USD{actual}, "
            f"~{self.pairing_monthly_projection_usd:.2f} USD a month -> {self.out}"
        )
