"""`report.html`: the audit on one page, charts by Plotly with its bundle inlined (works offline).

Charts never let one series hide another: grouped or stacked bars instead of overlapping lines,
and small multiples with their own axis where magnitudes differ (Premium next to Standard).
Wide tables scroll inside their box; the page is readable from 800 px up.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from pairedbus.pipeline.cost import COST_COLUMNS
from pairedbus.pipeline.pairing_cost import PAIRING_COLUMNS, USD_COLUMNS

if TYPE_CHECKING:
    from pairedbus.pipeline.summary import AuditSummary
    from pairedbus.pipeline.write import Written

CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;margin:0 auto;padding:1em;max-width:1200px;color:#222}
.scroll{overflow-x:auto;max-width:100%;border:1px solid #eee;margin:1em 0}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.25em .6em;text-align:right;white-space:nowrap}
th{background:#f3f3f3;position:sticky;top:0}td.l,th.l{text-align:left}h2{margin-top:1.6em}
.chart{width:100%;min-height:320px}.muted{color:#666;font-size:.9em}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em}dt{font-weight:600}
"""
#: Colour-blind-safe qualitative palette (Okabe-Ito).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
LAYOUT = {
    "margin": {"l": 60, "r": 20, "t": 40, "b": 60},
    "legend": {"orientation": "h", "y": -0.2},
    "font": {"family": "system-ui, sans-serif", "size": 12},
    "colorway": list(PALETTE),
}


def _figure_html(figure: Any, div_id: str) -> str:
    html: str = figure.to_html(  # plotly ships no types
        full_html=False,
        include_plotlyjs=False,
        div_id=div_id,
        default_width="100%",
        default_height=f"{figure.layout.height or 420}px",
        config={"responsive": True, "displaylogo": False},
    )
    return html


def _dates(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    return sorted({str(r["date"]) for r in rows})


def pairing_over_time(pairing: Sequence[Mapping[str, Any]]) -> Any:
    """Cost of pairing per pair per day: grouped bars, one colour per pair."""
    import plotly.graph_objects as go

    figure = go.Figure()
    for pair in sorted({r["pair"] for r in pairing}):
        rows = sorted((r for r in pairing if r["pair"] == pair), key=lambda r: str(r["date"]))
        figure.add_bar(name=pair, x=[str(r["date"]) for r in rows], y=[r["total_usd"] for r in rows])
    figure.update_layout(LAYOUT, title="Cost of pairing per pair per day (USD)", barmode="group", yaxis_title="USD")
    figure.update_xaxes(type="category")
    return figure


def pairing_breakdown(pairing: Sequence[Mapping[str, Any]]) -> Any:
    """What each pair's cost is made of: stacked bars per pair over the days covered."""
    import plotly.graph_objects as go

    pairs = sorted({r["pair"] for r in pairing})
    figure = go.Figure()
    for column in USD_COLUMNS:
        totals = [sum(r[column] or 0.0 for r in pairing if r["pair"] == p) for p in pairs]
        figure.add_bar(name=column.removesuffix("_usd").replace("_", " "), y=pairs, x=totals, orientation="h")
    figure.update_layout(LAYOUT, title="Cost of pairing by component, days covered (USD)", barmode="stack")
    figure.update_layout(height=200 + 60 * len(pairs), xaxis_title="USD")
    return figure


def estimate_vs_actual(attribution: Sequence[Mapping[str, Any]]) -> Any:
    """Per pair, over the days covered: the estimate (without pings) and the bill in USD, side by
    side (bills in other currencies are in the table below, never added to these bars)."""
    import plotly.graph_objects as go

    usd = [r for r in attribution if r["estimate_usd"] is not None]
    pairs = sorted({r["pair"] for r in usd})
    figure = go.Figure()
    for column, label in (
        ("estimate_usd", "estimate"),
        ("actual_billed", "billed"),
        ("actual_effective", "effective (amortised)"),
    ):
        figure.add_bar(name=label, x=pairs, y=[sum(r[column] or 0.0 for r in usd if r["pair"] == p) for p in pairs])
    figure.update_layout(LAYOUT, title="Estimate vs actual per pair, days covered (USD)", barmode="group")
    return figure


def violations_by_namespace(violations: Sequence[Mapping[str, Any]]) -> Any:
    """Violations by namespace, stacked by rule."""
    import plotly.graph_objects as go

    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for v in violations:
        counts[v["rule"]][v["namespace"]] += 1
    namespaces = sorted({v["namespace"] for v in violations})
    figure = go.Figure()
    for rule in sorted(counts):
        figure.add_bar(name=rule, y=namespaces, x=[counts[rule][n] for n in namespaces], orientation="h")
    figure.update_layout(LAYOUT, title="Violations by namespace and rule", barmode="stack")
    figure.update_layout(height=200 + 50 * len(namespaces), xaxis_title="violations")
    figure.update_xaxes(dtick=1)
    return figure


def cost_per_namespace(cost: Sequence[Mapping[str, Any]]) -> Any:
    """Estimated cost per namespace per day: one small chart per namespace, each with its own axis."""
    from plotly.subplots import make_subplots

    namespaces = sorted({r["namespace"] for r in cost})
    columns = 2
    rows = (len(namespaces) + columns - 1) // columns
    figure = make_subplots(rows=rows, cols=columns, subplot_titles=namespaces, vertical_spacing=0.25 / max(rows, 1))
    for i, namespace in enumerate(namespaces):
        series = sorted((r for r in cost if r["namespace"] == namespace), key=lambda r: str(r["date"]))
        figure.add_bar(
            x=[str(r["date"]) for r in series],
            y=[r["estimated_cost_usd"] or 0.0 for r in series],
            name=namespace,
            marker_color=PALETTE[i % len(PALETTE)],
            showlegend=False,
            row=i // columns + 1,
            col=i % columns + 1,
        )
    figure.update_layout(LAYOUT, title="Estimated cost per namespace per day (USD, own axis each)")
    figure.update_layout(height=120 + 220 * rows)
    figure.update_xaxes(type="category")
    return figure


def _table(columns: Sequence[str], rows: Sequence[Sequence[Any]], left: int = 1) -> str:
    head = "".join(f'<th class="{"l" if i < left else ""}">{escape(c)}</th>' for i, c in enumerate(columns))
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="{"l" if i < left else ""}">{escape("" if v is None else str(v))}</td>'
            for i, v in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _counts(summary: AuditSummary) -> str:
    read = "; ".join(
        f"{name}: " + (", ".join(f"{n} {fmt}" for fmt, n in formats.items()) or "none")
        for name, formats in summary.files_read.items()
    )
    items = [
        ("files read", read),
        ("files refused", str(len(summary.files_refused))),
        ("duplicates dropped", ", ".join(f"{k}: {v}" for k, v in summary.duplicates_dropped.items())),
        ("conflicting resources", str(summary.conflicting_resources)),
        ("records quarantined", str(summary.quarantined)),
    ]
    return "<dl>" + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in items) + "</dl>"


def render(summary: AuditSummary, written: Written) -> str:
    from plotly.offline import get_plotlyjs

    s = summary
    charts: list[tuple[str, str]] = []
    if written.pairing:
        charts.append(("Cost of pairing", _figure_html(pairing_over_time(written.pairing), "chart-pairing")))
        charts.append(
            ("What pairing costs, by component", _figure_html(pairing_breakdown(written.pairing), "chart-breakdown"))
        )
    if written.attribution:
        charts.append(("Estimate vs actual", _figure_html(estimate_vs_actual(written.attribution), "chart-actual")))
    if written.violations:
        charts.append(("Violations", _figure_html(violations_by_namespace(written.violations), "chart-violations")))
    if written.cost:
        charts.append(("Cost per namespace", _figure_html(cost_per_namespace(written.cost), "chart-namespaces")))
    chart_html = "\n".join(f"<h2>{escape(title)}</h2>\n{html}" for title, html in charts)

    actual = ""
    if s.actual_pairing_cost_usd is not None:
        bills = "; ".join(
            f"billed <b>{b.billed:.2f} {escape(c)}</b>, effective (amortised) <b>{b.effective:.2f} {escape(c)}</b>"
            for c, b in sorted(s.bills.items())
        )
        actual = f". The bills for the pairs say: {bills or 'nothing in the days covered'}"
    refused = _table(["file", "reason"], sorted(s.files_refused.items()), left=2) if s.files_refused else "<p>None.</p>"
    attribution = ""
    if written.attribution is not None:
        columns = list(written.attribution[0]) if written.attribution else []
        attribution = "<h2>Estimate vs actual per pair per day</h2>" + (
            _table(columns, [[r[c] for c in columns] for r in written.attribution], left=4)
            if written.attribution
            else "<p>No pair-days.</p>"
        )
    violation_columns = ["namespace", "entity", "rule", "property", "expected", "actual", "severity"]
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>pairedbus estate audit</title><style>{CSS}</style>
<script>{get_plotlyjs()}</script></head>
<body>
<h1>Estate audit</h1>
<p>{s.pairs} pairs over {s.days} days: pairing is estimated at <b>{s.pairing_cost_usd:.2f} USD</b> (list prices),
about <b>{s.pairing_monthly_projection_usd:.2f} USD a month</b>{actual}. The whole estate ({s.namespaces} namespaces,
{s.entities} entities) is estimated at {s.estimated_cost_usd:.2f} USD; <b>{s.violations} violations</b>.</p>
<p class="muted">Prices: {escape(s.prices_source)} as of {escape(s.prices_as_of)}. Ping estimate assumes
{s.clients} client(s) per primary entity.
{"Namespaces without a known tier (no cost): " + escape(", ".join(s.namespaces_without_price)) if s.namespaces_without_price else ""}</p>
<h2>Inputs</h2>
{_counts(s)}
{chart_html or "<p>No data to chart.</p>"}
<h2>Pairing cost per pair per day</h2>
{_table(list(PAIRING_COLUMNS), [[r[c] for c in PAIRING_COLUMNS] for r in written.pairing], left=4) if written.pairing else "<p>No pairs.</p>"}
{attribution}
<h2>Violations</h2>
{_table(violation_columns, [[v[c] for c in violation_columns] for v in written.violations], left=7) if written.violations else "<p>None.</p>"}
<h2>Conflicting versions of one resource</h2>
{_table(["kind", "namespace", "entity", "versions", "differing"], [[c[k] for k in ("kind", "namespace", "entity", "versions", "differing")] for c in written.conflicts], left=3) if written.conflicts else "<p>None.</p>"}
<h2>Cost per namespace per day</h2>
{_table(list(COST_COLUMNS), [[c[k] for k in COST_COLUMNS] for c in written.cost], left=2) if written.cost else "<p>No metrics.</p>"}
<h2>Quarantine</h2>
{_table(["reason", "records"], sorted(s.quarantined_by_reason.items())) if s.quarantined_by_reason else "<p>Nothing quarantined.</p>"}
<h2>Refused files</h2>
{refused}
</body></html>
"""
