"""report.html in a real headless browser: it loads offline, logs no error, draws every chart,
lets no series hide another and does not scroll sideways at 800 px (issue 14, item 4); at 1280 px
every table fits the page (issue 36, item 5). Values are text, never markup; headers are for people."""

from __future__ import annotations

import base64
from datetime import date
from itertools import pairwise
from pathlib import Path

import pytest

from pairedbus.pipeline.pairing_cost import PAIRING_COLUMNS
from pairedbus.pipeline.report import report_html
from pairedbus.pipeline.summary import AuditSummary
from pairedbus.pipeline.write import Written
from tests.load import guard

from .browser import open_page

DAYS = [date(2026, 11, d) for d in (16, 17, 18)]
CHARTS = ("chart-pairing", "chart-breakdown", "chart-actual", "chart-violations", "chart-namespaces")


def pairing_row(pair: str, day: date, total: float) -> dict:
    row = dict.fromkeys(PAIRING_COLUMNS, 0)
    row.update(pair=pair, primary=pair, secondary=f"{pair}-dr", date=day, secondary_base_usd=0.324)
    row.update(syphon_compute_usd=1.296, syphon_logs_usd=0.023, total_usd=total, monthly_projection_usd=total * 30)
    return row


def written() -> Written:
    # Two pairs with the very same cost every day: drawn as lines they would hide each other.
    pairing = [pairing_row(p, d, 1.643) for p in ("contoso-orders", "northwind") for d in DAYS]
    cost = [
        {"namespace": ns, "date": d, "operations": 100, "backlog_messages": 0, "syphon_receives": 0,
         "ping_operations_estimate": 0, "pairing_operations": 0, "estimated_cost_usd": usd}
        for ns, usd in (("contoso-orders", 0.324), ("contoso-orders-dr", 0.324), ("fabrikam", 22.272), ("fabrikam-dr", 22.272))
        for d in DAYS
    ]  # fmt: skip
    attribution = [
        {"pair": p, "primary": p, "secondary": f"{p}-dr", "date": d, "estimate_usd": 1.643,
         "actual_billed": 0.7243, "actual_effective": 0.7243, "difference_usd": -0.9187, "currency": "USD"}
        for p in ("contoso-orders", "northwind")
        for d in DAYS
    ]  # fmt: skip
    violations = [
        {"namespace": "contoso-orders-dr", "entity": "contoso-orders/x-servicebus-transfer/1",
         "rule": "backlog-queue-settings", "property": p, "expected": "x", "actual": "y", "severity": "high"}
        for p in ("lockDuration", "maxDeliveryCount")
    ] + [{"namespace": "fabrikam", "entity": "ledger", "rule": "premium-entities-partitioned",
          "property": "enablePartitioning", "expected": "true", "actual": "false", "severity": "medium"}]  # fmt: skip
    return Written(violations=violations, cost=cost, pairing=pairing, attribution=attribution, conflicts=[])


def summary() -> AuditSummary:
    return AuditSummary(
        namespaces=4, entities=11, pairs=2, violations=3, quarantined=2, days=3, estimated_cost_usd=136.8,
        pairing_cost_usd=9.86, pairing_monthly_projection_usd=98.58, actual_pairing_cost_usd=4.35,
        violations_by_rule={"backlog-queue-settings": 2, "premium-entities-partitioned": 1},
        quarantined_by_reason={"malformed JSON": 2}, files_read={"metrics": {"json": 16}},
        files_refused={"/data/metrics/" + "a-very-long-file-name-" * 8 + ".txt": "not JSON"},
        duplicates_dropped={"inventory": 0, "metrics": 216}, namespaces_without_price=[],
        prices_source="https://azure.microsoft.com/en-us/pricing/details/service-bus/", prices_as_of="2024-09-01",
        clients=1, out="out",
    )  # fmt: skip


def test_values_are_text_never_markup_and_headers_are_for_people() -> None:
    hostile = written()
    hostile.violations[0]["entity"] = "<script>alert(1)</script>"
    hostile.violations[1]["actual"] = '"><img src=x onerror=alert(1)>'
    html = report_html(summary(), hostile)
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html and "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in html
    assert '<th class="">Monthly projection (USD)</th>' in html and "monthly_projection_usd" not in html
    assert '<th class="">Secondary base (USD)</th>' in html
    assert "Estimate, billed, effective." in html and "as of 2024-09-01" in html


@pytest.mark.parametrize(
    ("value", "shown"),
    [(None, ""), (1234567, "1,234,567"), (1.643, "1.643"), (1.5, "1.50"), (0.0023, "0.0023"), (2.0, "2.00"),
     (12345.678912, "12,345.6789"), (True, "true"), ("x", "x")],
)  # fmt: skip
def test_cells_show_amounts_to_the_cent_or_the_decimals_that_matter(value: object, shown: str) -> None:
    from pairedbus.pipeline.report import cell

    assert cell(value) == shown


def test_report_is_self_contained_html() -> None:
    html = report_html(summary(), written())
    assert "<script src" not in html and "<link" not in html and "cdn." not in html.split("</script>", 1)[1]
    for chart in CHARTS:
        assert f'id="{chart}"' in html


@pytest.mark.slow
def test_report_draws_every_chart_in_a_headless_browser_without_errors(tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    report.write_text(report_html(summary(), written()), encoding="utf-8")
    with open_page(tmp_path / "profile", width=800, height=1000) as page:
        page.send("Page.navigate", url=report.as_uri())
        page.wait_for_event("Page.loadEventFired", timeout=guard(60))
        drawn = {}
        for _ in range(100):  # Plotly draws after load; wait until every chart has its SVG
            drawn = page.evaluate(
                "Object.fromEntries([...document.querySelectorAll('.plotly-graph-div')].map("
                "d => [d.id, d.querySelectorAll('.main-svg .trace').length]))"
            )
            if len(drawn) == len(CHARTS) and all(drawn.values()):
                break
            page.evaluate("new Promise(r => setTimeout(r, 100))")
        shot = page.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        (tmp_path / "report.png").write_bytes(base64.b64decode(shot["data"]))

        assert page.errors() == []
        assert set(drawn) == set(CHARTS) and all(drawn.values()), drawn
        # Two pairs with identical costs: every bar of both is on the page, none behind another.
        bars = page.evaluate(
            "[...document.querySelectorAll('#chart-pairing .trace.bars .point path')].map(p => {"
            "const r = p.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.right), r.height]})"
        )
        assert len(bars) == 2 * len(DAYS)
        assert all(height > 0 for _, _, height in bars)
        spans = sorted((left, right) for left, right, _ in bars)
        assert all(a[1] <= b[0] for a, b in pairwise(spans)), spans
        # Readable at 800 px: the page does not scroll sideways, wide tables scroll in their box.
        assert page.evaluate("document.documentElement.scrollWidth") <= 800
        assert page.evaluate("[...document.querySelectorAll('.scroll')].some(s => s.scrollWidth > s.clientWidth)")
        # At 1280 px every table is inside the page (issue 36: totals, differences and severities
        # were cut off): none scrolls in its box, and the page does not scroll sideways.
        page.send("Emulation.setDeviceMetricsOverride", width=1280, height=1000, deviceScaleFactor=1, mobile=False)
        overflowing = page.evaluate(
            "[...document.querySelectorAll('.scroll')].filter(s => s.scrollWidth > s.clientWidth)"
            ".map(s => s.previousElementSibling.textContent)"
        )
        assert overflowing == []
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        shot = page.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        (tmp_path / "report-1280.png").write_bytes(base64.b64decode(shot["data"]))
    assert (tmp_path / "report.png").stat().st_size > 10_000
