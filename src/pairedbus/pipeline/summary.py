"""The run summary of an audit: what was read, refused, dropped, found and what it costs.

Its own module so that the job, the report and the CLI all import it and none imports another."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Bills(BaseModel):
    """What the FOCUS exports say for the pairs in one billing currency, over the days covered."""

    #: `BilledCost`: what the invoice says (a reservation bought up front bills nothing per day).
    billed: float
    #: `EffectiveCost`: amortised, after reservations and discounts: what the pairs really cost.
    effective: float


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
    #: From the FOCUS exports (--costs): the pairs' effective (amortised) cost in USD over the same
    #: days; `bills` has every currency, billed and effective.
    actual_pairing_cost_usd: float | None = None
    #: Per billing currency (ISO 4217), billed and effective: never a sum across currencies.
    bills: dict[str, Bills] = Field(default_factory=dict)
    violations_by_rule: dict[str, int]
    quarantined_by_reason: dict[str, int]
    #: Per input: files read, by format; files refused, by name, with the reason.
    files_read: dict[str, dict[str, int]] = Field(default_factory=dict)
    files_refused: dict[str, str] = Field(default_factory=dict)
    #: Identical copies dropped, per input (metrics: data points; inventory: resource records;
    #: costs: charge rows).
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

    def bills_text(self) -> str:
        """Per currency: `billed 4.50 USD, effective (amortised) 75.77 USD`; `; ` between currencies."""
        return "; ".join(
            f"billed {b.billed:.2f} {currency}, effective (amortised) {b.effective:.2f} {currency}"
            for currency, b in sorted(self.bills.items())
        )

    def line(self) -> str:
        bills = ""
        if self.actual_pairing_cost_usd is not None:
            bills = f"; bills for the pairs: {self.bills_text() or 'none in the days covered'}"
        return (
            f"audit: {self.namespaces} namespaces, {self.pairs} pairs, {self.entities} entities, "
            f"{self.violations} violations, {self.quarantined} quarantined, "
            f"{sum(self.duplicates_dropped.values())} duplicates dropped, {len(self.files_refused)} files refused, "
            f"{self.days} days; estimated cost of pairing {self.pairing_cost_usd:.2f} USD "
            f"(~{self.pairing_monthly_projection_usd:.2f} USD a month){bills} -> {self.out}"
        )
