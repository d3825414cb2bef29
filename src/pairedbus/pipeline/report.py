"""`report.html`: the audit on one page, charts as inline SVG, nothing fetched from a network."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from pairedbus.pipeline.cost import COST_COLUMNS

if TYPE_CHECKING:
    from pairedbus.pipeline.audit_job import AuditSummary

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")
WIDTH, HEIGHT, PAD_L, PAD_R, PAD_T, PAD_B = 720, 260, 70, 160, 20, 40

CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1000px;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}h2{margin-top:1.6em}svg{background:#fff;border:1px solid #eee}
.muted{color:#666;font-size:.9em}
"""


def _fmt(value: float) -> str:
    if abs(value) >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if abs(value) >= 1_000:
        return f"{value / 1_000:.1f}k"
    return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))


def line_chart(title: str, x_labels: Sequence[str], series: Mapping[str, Sequence[float]], unit: str) -> str:
    """A line chart (one line per series) as an SVG string."""
    top = max([v for values in series.values() for v in values] + [0.0]) or 1.0
    plot_w, plot_h = WIDTH - PAD_L - PAD_R, HEIGHT - PAD_T - PAD_B
    step = plot_w / max(len(x_labels) - 1, 1)

    def xy(i: int, v: float) -> tuple[float, float]:
        return PAD_L + i * step, PAD_T + plot_h - v / top * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" role="img" '
        f'aria-label="{escape(title)}">',
        f'<line x1="{PAD_L}" y1="{PAD_T + plot_h}" x2="{PAD_L + plot_w}" y2="{PAD_T + plot_h}" stroke="#999"/>',
        f'<line x1="{PAD_L}" y1="{PAD_T}" x2="{PAD_L}" y2="{PAD_T + plot_h}" stroke="#999"/>',
    ]
    for frac in (0.0, 0.5, 1.0):
        y = PAD_T + plot_h - frac * plot_h
        parts.append(
            f'<text x="{PAD_L - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{_fmt(top * frac)}</text>'
        )
    parts.append(f'<text x="{PAD_L - 6}" y="{PAD_T - 6}" font-size="11" text-anchor="end">{escape(unit)}</text>')
    for i, label in enumerate(x_labels):
        x, _ = xy(i, 0)
        parts.append(
            f'<text x="{x:.1f}" y="{HEIGHT - PAD_B + 16}" font-size="10" text-anchor="middle">{escape(label)}</text>'
        )
    for n, (name, values) in enumerate(sorted(series.items())):
        color = PALETTE[n % len(PALETTE)]
        points = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(i, v) for i, v in enumerate(values)))
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{points}"/>')
        for i, v in enumerate(values):
            x, y = xy(i, v)
            parts.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}"><title>{escape(name)} '
                f"{escape(x_labels[i])}: {_fmt(v)}</title></circle>"
            )
        ly = PAD_T + 14 * n + 6
        parts.append(f'<rect x="{WIDTH - PAD_R + 10}" y="{ly}" width="10" height="10" fill="{color}"/>')
        parts.append(f'<text x="{WIDTH - PAD_R + 24}" y="{ly + 9}" font-size="11">{escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def bar_chart(title: str, bars: Mapping[str, float]) -> str:
    """Horizontal bars, one per label, as an SVG string."""
    row_h, label_w, width = 22, 260, WIDTH
    height = row_h * max(len(bars), 1) + 10
    top = max([*bars.values(), 0.0]) or 1.0
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="{escape(title)}">'
    ]
    for i, (label, value) in enumerate(bars.items()):
        y = 5 + i * row_h
        w = (width - label_w - 60) * value / top
        parts.append(f'<text x="{label_w - 6}" y="{y + 14}" font-size="12" text-anchor="end">{escape(label)}</text>')
        parts.append(f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{row_h - 6}" fill="{PALETTE[1]}"/>')
        parts.append(f'<text x="{label_w + w + 6:.1f}" y="{y + 14}" font-size="12">{_fmt(value)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _table(columns: Sequence[str], rows: Sequence[Sequence[Any]], left: int = 1) -> str:
    head = "".join(f'<th class="{"l" if i < left else ""}">{escape(c)}</th>' for i, c in enumerate(columns))
    body = "".join(
        "<tr>"
        + "".join(f'<td class="{"l" if i < left else ""}">{escape(str(v))}</td>' for i, v in enumerate(row))
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render(summary: AuditSummary, violations: Sequence[Mapping[str, Any]], cost: Sequence[Mapping[str, Any]]) -> str:
    rules = sorted({v["rule"] for v in violations})
    by_ns_rule: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for v in violations:
        by_ns_rule[v["namespace"]][v["rule"]] += 1
    matrix = [[ns, *(by_ns_rule[ns][r] for r in rules)] for ns in sorted(by_ns_rule)]

    dates = sorted({str(c["date"]) for c in cost})
    index = {d: i for i, d in enumerate(dates)}

    def per_namespace(column: str) -> dict[str, list[float]]:
        series: dict[str, list[float]] = defaultdict(lambda: [0.0] * len(dates))
        for c in cost:
            series[c["namespace"]][index[str(c["date"])]] = float(c[column] or 0)
        return dict(series)

    backlog = {k: v for k, v in per_namespace("backlog_messages").items() if any(v)}
    pairing = {k: v for k, v in per_namespace("pairing_operations").items() if any(v)}
    cost_cols = list(COST_COLUMNS)
    s = summary
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>pairedbus estate audit</title><style>{CSS}</style></head>
<body>
<h1>Estate audit</h1>
<p>{s.namespaces} namespaces, {s.entities} entities, <b>{s.violations} violations</b>, {s.quarantined} quarantined
records, {s.days} days of metrics, estimated cost <b>{s.estimated_cost_usd:.2f} USD</b>.</p>
<p class="muted">Prices: {escape(s.prices_source)} as of {escape(s.prices_as_of)}. Ping estimate assumes
{s.clients} client(s) per primary entity.
{"Namespaces without a known tier (no cost): " + escape(", ".join(s.namespaces_without_price)) if s.namespaces_without_price else ""}</p>
<h2>Violations by rule</h2>
{bar_chart("violations by rule", {r: float(s.violations_by_rule.get(r, 0)) for r in rules}) if rules else "<p>None.</p>"}
<h2>Violations by namespace and rule</h2>
{_table(["namespace", *rules], matrix) if matrix else "<p>None.</p>"}
<h2>Estimated cost per day (USD)</h2>
{line_chart("estimated cost per day", dates, per_namespace("estimated_cost_usd"), "USD") if dates else "<p>No metrics.</p>"}
<h2>Backlog traffic per day (messages into backlog queues)</h2>
{line_chart("backlog messages per day", dates, backlog, "messages") if backlog else "<p>No backlog traffic.</p>"}
<h2>Operations caused by pairing per day</h2>
{line_chart("pairing operations per day", dates, pairing, "operations") if pairing else "<p>None.</p>"}
<h2>Violations</h2>
{_table(["namespace", "entity", "rule", "property", "expected", "actual", "severity"], [[v[c] for c in ("namespace", "entity", "rule", "property", "expected", "actual", "severity")] for v in violations], left=7) if violations else "<p>None.</p>"}
<h2>Cost per namespace per day</h2>
{_table(cost_cols, [[c[k] if c[k] is not None else "" for k in cost_cols] for c in cost], left=2)}
<h2>Quarantine</h2>
{_table(["reason", "records"], sorted(s.quarantined_by_reason.items())) if s.quarantined_by_reason else "<p>Nothing quarantined.</p>"}
</body></html>
"""
