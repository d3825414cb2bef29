"""The audit's run summary (`pipeline/summary.py`): its one line, and bills per currency never summed across."""

from __future__ import annotations

from typing import Any

from pairedbus.pipeline.summary import AuditSummary, Bills


def _summary(**changes: Any) -> AuditSummary:
    values: dict[str, Any] = {
        "namespaces": 4,
        "entities": 11,
        "pairs": 2,
        "violations": 3,
        "quarantined": 1,
        "days": 30,
        "estimated_cost_usd": 200.0,
        "pairing_cost_usd": 100.944,
        "pairing_monthly_projection_usd": 101.0,
        "violations_by_rule": {},
        "quarantined_by_reason": {},
        "namespaces_without_price": [],
        "prices_source": "bundled",
        "prices_as_of": "2026-01-01",
        "clients": 1,
        "out": "/tmp/out",
    }
    return AuditSummary(**{**values, **changes})


def test_the_line_counts_what_was_read_and_dropped_and_ends_with_the_output() -> None:
    line = _summary(duplicates_dropped={"metrics": 2, "inventory": 3}, files_refused={"a.json": "not JSON"}).line()
    assert line == (
        "audit: 4 namespaces, 2 pairs, 11 entities, 3 violations, 1 quarantined, 5 duplicates dropped, "
        "1 files refused, 30 days; estimated cost of pairing 100.94 USD (~101.00 USD a month) -> /tmp/out"
    )


def test_bills_are_shown_per_currency_in_order_and_only_when_costs_were_read() -> None:
    bills = {"USD": Bills(billed=4.5, effective=75.77), "EUR": Bills(billed=1, effective=2)}
    summary = _summary(actual_pairing_cost_usd=75.77, bills=bills)
    assert summary.bills_text() == (
        "billed 1.00 EUR, effective (amortised) 2.00 EUR; billed 4.50 USD, effective (amortised) 75.77 USD"
    )
    assert "; bills for the pairs: billed 1.00 EUR" in summary.line()
    assert "bills for the pairs" not in _summary(bills=bills).line()
    assert "bills for the pairs: none in the days covered" in _summary(actual_pairing_cost_usd=0.0).line()
