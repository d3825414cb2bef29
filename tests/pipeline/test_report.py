from __future__ import annotations

from datetime import date

from pairedbus.pipeline.audit_job import AuditSummary
from pairedbus.pipeline.report import line_chart, render


def summary(**overrides: object) -> AuditSummary:
    values: dict = dict(
        namespaces=2,
        entities=3,
        violations=1,
        quarantined=0,
        days=2,
        estimated_cost_usd=1.5,
        violations_by_rule={"premium-entities-partitioned": 1},
        quarantined_by_reason={},
        namespaces_without_price=[],
        prices_source="https://example.test/prices",
        prices_as_of="2024-09-01",
        clients=1,
        out="out",
    )
    return AuditSummary(**(values | overrides))


def test_report_draws_violations_cost_and_backlog_charts_inline() -> None:
    violations = [
        {
            "namespace": "fab",
            "entity": "ledger",
            "rule": "premium-entities-partitioned",
            "property": "enablePartitioning",
            "expected": "true",
            "actual": "false",
            "severity": "mandatory",
        }
    ]
    cost = [
        {
            "namespace": "dr",
            "date": date(2026, 11, d),
            "operations": 10,
            "backlog_messages": b,
            "syphon_receives": 96,
            "ping_operations_estimate": 0,
            "pairing_operations": 96 + 2 * b,
            "estimated_cost_usd": 0.324,
        }
        for d, b in ((1, 0), (2, 500))
    ]
    html = render(summary(), violations, cost)
    assert html.count("<svg") == 4  # violations by rule, cost, backlog traffic, pairing operations
    assert "backlog messages per day" in html and "ledger" in html
    assert "<script" not in html and "http://www.w3.org/2000/svg" in html and "src=" not in html


def test_line_chart_escapes_series_names() -> None:
    svg = line_chart("t", ["d1"], {"<ns>": [1.0]}, "USD")
    assert "&lt;ns&gt;" in svg and "<ns>" not in svg
