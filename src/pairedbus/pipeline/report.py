"""`report.html`: the audit on one page, charts by Plotly with its bundle inlined (works offline).

Charts never let one series hide another: grouped or stacked bars instead of overlapping lines,
and small multiples with their own axis where magnitudes differ (Premium next to Standard).
Tables fit the page from 1280 px up (headers wrap, text cells break anywhere), and in print
(A4 landscape); narrower, a wide table scrolls inside its box. Headers are for people (the CSVs
keep their snake_case). The page is a Jinja2 template with autoescape on.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pairedbus.pipeline.namespace_cost import COST_COLUMNS
from pairedbus.pipeline.pairing_cost import PAIRING_COLUMNS, USD_COLUMNS

if TYPE_CHECKING:
    from pairedbus.pipeline.summary import AuditSummary
    from pairedbus.pipeline.write import Written

CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;margin:0 auto;padding:1em;max-width:1200px;color:#222}
.scroll{overflow-x:auto;max-width:100%;border:1px solid #eee;margin:1em 0}
table{border-collapse:collapse;font-size:.85em;font-variant-numeric:tabular-nums}
td,th{border:1px solid #ddd;padding:.2em .4em;text-align:right;white-space:nowrap}
th{background:#f3f3f3;position:sticky;top:0;white-space:normal;vertical-align:bottom;min-width:4.5em}
td.l,th.l{text-align:left}td.l{white-space:normal;overflow-wrap:anywhere;min-width:7em}h2{margin-top:1.6em}
.chart{width:100%;min-height:320px}.muted{color:#666;font-size:.9em}
.note{background:#f7f7f2;border-left:3px solid #E69F00;padding:.4em .8em;font-size:.9em}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em}dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
@media print{body{max-width:none;padding:0}.scroll{overflow:visible;border:0}th{position:static}
h2{break-after:avoid}tr,.plotly-graph-div{break-inside:avoid}}
@page{size:A4 landscape;margin:12mm}
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


#: Column headers a reader sees (the CSVs keep the snake_case names); any other column is
#: humanised by `header`.
HEADERS = {
    "pair": "Pair",
    "date": "Date",
    "parked_extra_operations": "Extra operations for parked messages",
    "ping_operations_estimate": "Ping operations (estimate)",
    "estimate_usd": "Estimate (USD)",
    "actual_billed": "Billed",
    "actual_effective": "Effective (amortised)",
    "difference_usd": "Effective − estimate (USD)",
    "monthly_projection_usd": "Monthly projection (USD)",
}


def header(column: str) -> str:
    """`secondary_base_usd` -> `Secondary base (USD)`."""
    if column in HEADERS:
        return HEADERS[column]
    text = column.removesuffix("_usd").replace("_", " ")
    text = text[:1].upper() + text[1:]
    return f"{text} (USD)" if column.endswith("_usd") else text


def cell(value: Any) -> str:
    """A value as the page shows it: thousands separated; amounts to the cent, or to four decimals
    where a cent would hide them (0.0023 USD of logs a day)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return str(value)
        text = f"{value:,.4f}".rstrip("0")
        whole, _, decimals = text.partition(".")
        return f"{whole}.{decimals:0<2}"
    return str(value)


@dataclass(frozen=True)
class Table:
    """One table of the page: its title, human headers, displayed cells, and how many leading
    columns are text (left-aligned)."""

    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    left: int
    empty: str


def table(
    title: str, columns: Sequence[str], records: Sequence[Mapping[str, Any]] | None, *, left: int, empty: str
) -> Table:
    rows = tuple(tuple(cell(r[c]) for c in columns) for r in records or ())
    return Table(title, tuple(header(c) for c in columns), rows, left, empty)


def headline(s: AuditSummary) -> dict[str, Any]:
    bills = None
    if s.actual_pairing_cost_usd is not None:
        bills = [
            {"currency": c, "billed": cell(b.billed), "effective": cell(b.effective)}
            for c, b in sorted(s.bills.items())
        ]
    return {
        "pairs": s.pairs,
        "days": s.days,
        "pairing_usd": cell(s.pairing_cost_usd),
        "monthly_usd": cell(s.pairing_monthly_projection_usd),
        "bills": bills,
        "namespaces": s.namespaces,
        "entities": s.entities,
        "estate_usd": cell(s.estimated_cost_usd),
        "violations": s.violations,
        "prices_source": s.prices_source,
        "prices_as_of": s.prices_as_of,
        "clients": s.clients,
        "without_price": s.namespaces_without_price,
    }


def inputs(s: AuditSummary) -> list[tuple[str, str]]:
    read = "; ".join(
        f"{name}: " + (", ".join(f"{n} {fmt}" for fmt, n in formats.items()) or "none")
        for name, formats in s.files_read.items()
    )
    return [
        ("Files read", read),
        ("Files refused", str(len(s.files_refused))),
        ("Duplicates dropped", ", ".join(f"{k}: {v}" for k, v in s.duplicates_dropped.items())),
        ("Conflicting resources", str(s.conflicting_resources)),
        ("Records quarantined", str(s.quarantined)),
    ]


def charts(written: Written) -> list[dict[str, Any]]:
    """The charts the data allows, each drawn by Plotly (its own HTML, trusted: marked safe)."""
    from markupsafe import Markup

    drawn: list[tuple[str, Any, str]] = []
    if written.pairing:
        drawn.append(("Cost of pairing", pairing_over_time(written.pairing), "chart-pairing"))
        drawn.append(("What pairing costs, by component", pairing_breakdown(written.pairing), "chart-breakdown"))
    if written.attribution:
        drawn.append(("Estimate vs actual", estimate_vs_actual(written.attribution), "chart-actual"))
    if written.violations:
        drawn.append(("Violations", violations_by_namespace(written.violations), "chart-violations"))
    if written.cost:
        drawn.append(("Cost per namespace", cost_per_namespace(written.cost), "chart-namespaces"))
    return [{"title": title, "html": Markup(_figure_html(figure, div_id))} for title, figure, div_id in drawn]


VIOLATION_COLUMNS = ("namespace", "entity", "rule", "property", "expected", "actual", "severity")
CONFLICT_COLUMNS = ("kind", "namespace", "entity", "versions", "differing")


def tables(s: AuditSummary, written: Written) -> list[Table]:
    # pairing.csv's columns in two tables, operations then money, so that each fits the page.
    operations = tuple(c for c in PAIRING_COLUMNS if not c.endswith("_usd"))
    money = ("pair", "date", *(c for c in PAIRING_COLUMNS if c.endswith("_usd")))
    found = [
        table("Pairing per pair per day: operations", operations, written.pairing, left=4, empty="No pairs."),
        table("Pairing per pair per day: cost", money, written.pairing, left=2, empty="No pairs."),
    ]
    if written.attribution is not None:  # only with --costs
        columns = tuple(written.attribution[0]) if written.attribution else ()
        found.append(
            table("Estimate vs actual per pair per day", columns, written.attribution, left=4, empty="No pair-days.")
        )
    quarantine = [{"reason": k, "records": v} for k, v in sorted(s.quarantined_by_reason.items())]
    refused = [{"file": k, "reason": v} for k, v in sorted(s.files_refused.items())]
    found += [
        table("Violations", VIOLATION_COLUMNS, written.violations, left=7, empty="None."),
        table("Conflicting versions of one resource", CONFLICT_COLUMNS, written.conflicts, left=3, empty="None."),
        table("Cost per namespace per day", COST_COLUMNS, written.cost, left=2, empty="No metrics."),
        table("Quarantine", ("reason", "records"), quarantine, left=1, empty="Nothing quarantined."),
        table("Refused files", ("file", "reason"), refused, left=2, empty="None."),
    ]
    return found


def report_html(summary: AuditSummary, written: Written) -> str:
    """The page, from templates/report.html.j2 with autoescape on."""
    from jinja2 import Environment, PackageLoader, StrictUndefined
    from markupsafe import Markup
    from plotly.offline import get_plotlyjs

    environment = Environment(
        loader=PackageLoader("pairedbus.pipeline", "templates"), autoescape=True, undefined=StrictUndefined
    )
    return environment.get_template("report.html.j2").render(
        css=Markup(CSS),
        plotly_js=Markup(get_plotlyjs()),
        h=headline(summary),
        inputs=inputs(summary),
        charts=charts(written),
        tables=tables(summary, written),
    )
