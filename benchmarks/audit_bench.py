"""Benchmark: the audit's cost aggregation on Spark (local[2]) against the same query in DuckDB.

`--ingest json` (the default) goes through the real ingestion path: the rows are written once as
Azure Monitor Metrics REST documents (one per namespace, metric and day, as JSON Lines), and each
run parses them — Spark with `pipeline.metrics.read_metrics` (schema, quarantine checks,
duplicate detection), DuckDB with `read_json` + UNNEST and the same duplicate detection — before
the same aggregation. `--ingest parquet` starts from the pre-built Parquet rows instead.

Generates an estate of metric rows as Parquet (in DuckDB, no Python loops) and its documents once
into `--dir`, then runs `pairedbus.pipeline.namespace_cost.cost_by_namespace_day` on Spark and the
same aggregation written as DuckDB SQL, and checks that every run gives DuckDB's rows.

By default (issue 38 item 2) the engines alternate in `--runs` rounds (5): each round starts a
fresh process per engine (DuckDB, Spark, Spark from each `--tree` checkout; the order rotates by
round), which runs the query once cold (the user's first query; the session or connection is set
up before the clock starts) and `--warm-runs` times more warm (the same process and JVM again).
Every run is printed, then per engine and mode the median and the spread (min-max), and Spark's
ratio of medians to DuckDB's against the goals (cold <= 4x, warm <= 3x), with the range of
ratios the spreads allow and each round's ratio; the load average at start and end.
`--single-process` runs both engines in this process one after the other, as earlier rounds did
(`--runs` per engine, default 3, the first cold; `--breakdown` times the parse and duplicate
detection alone).

    .venv/bin/python benchmarks/audit_bench.py --rows 10M --dir /tmp/bench        # 5 rounds
    .venv/bin/python benchmarks/audit_bench.py --rows 10M --tree ../main          # a branch beside main
    .venv/bin/python benchmarks/audit_bench.py --rows 100M --runs 1 --master spark://127.0.0.1:7077 \
        --conf spark.executor.memory=10g                                           # a standalone cluster
    .venv/bin/python benchmarks/audit_bench.py --rows 1M --single-process --breakdown
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import duckdb

from pairedbus import contract
from pairedbus.pipeline.metrics import INCOMING_MESSAGES, INCOMING_REQUESTS, OUTGOING_MESSAGES
from pairedbus.pipeline.namespace_cost import COST_COLUMNS, HOURS_PER_DAY, PINGS_PER_MINUTE, SKU_BASIC
from pairedbus.pipeline.prices import PriceTable, load_prices

METRICS = (INCOMING_MESSAGES, OUTGOING_MESSAGES, INCOMING_REQUESTS)
BACKLOG_LIKE = f"%/{contract.BACKLOG_QUEUE_SEGMENT}/%"
T = TypeVar("T")
#: Each engine's memory: DuckDB's `memory_limit` and Spark's driver heap (local mode runs in the
#: driver). DuckDB's default, 80 % of RAM, would leave nothing for the JVM beside it.
DEFAULT_MEMORY = "10g"
#: The JVM's threads by role, from the start of their Linux names (`comm`, cut at 15 characters).
THREAD_ROLES = (("Executor task", "tasks"), ("C1 CompilerThre", "JIT"), ("C2 CompilerThre", "JIT"), ("GC Thread", "GC"))


def cpu_by_role(stats: list[str], ticks_per_second: int) -> dict[str, float]:
    """CPU seconds (user + system) by THREAD_ROLES role, the rest as "other", from the contents of
    Linux's /proc/PID/task/TID/stat files: the name is in parentheses, utime and stime are the 14th
    and 15th fields."""
    seconds: dict[str, float] = {}
    for stat in stats:
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 1 :].split()
        role = next((r for prefix, r in THREAD_ROLES if name.startswith(prefix)), "other")
        seconds[role] = seconds.get(role, 0.0) + (int(fields[11]) + int(fields[12])) / ticks_per_second
    return seconds


def process_cpu(stat: str, ticks_per_second: int) -> float:
    """A whole process's CPU seconds (user + system, its ended threads included) from the contents
    of Linux's /proc/PID/stat: less sensitive to other processes' load than wall-clock time."""
    fields = stat[stat.rindex(")") + 1 :].split()
    return (int(fields[11]) + int(fields[12])) / ticks_per_second


def process_cpu_of(pid: int) -> float:
    """`process_cpu` of a live process; 0 where there is no /proc (not Linux)."""
    try:
        return process_cpu(Path(f"/proc/{pid}/stat").read_text(), os.sysconf("SC_CLK_TCK"))
    except OSError:
        return 0.0


def jvm_cpu_by_role(pid: int) -> dict[str, float]:
    """`cpu_by_role` of a live process's threads so far; empty where there is no /proc (not Linux)."""
    stats = []
    for path in Path(f"/proc/{pid}/task").glob("*/stat"):
        try:
            stats.append(path.read_text())
        except OSError:  # a thread that ended since the listing
            continue
    return cpu_by_role(stats, os.sysconf("SC_CLK_TCK")) if stats else {}


def estate(pairs: int, entities: int, backlog_queues: int) -> list[tuple[object, ...]]:
    """Inventory rows (kind, namespace, entity, sku_name, sku_capacity): `pairs` primaries with
    `entities` queues each, and their secondaries with `backlog_queues` backlog queues plus
    local queues up to `entities`. Every fifth pair is Premium."""
    rows: list[tuple[object, ...]] = []
    for p in range(pairs):
        sku, capacity = (contract.SKU_PREMIUM, 1 + p % 4) if p % 5 == 0 else (contract.SKU_STANDARD, None)
        primary, secondary = f"ns{p:04d}", f"ns{p:04d}-dr"
        rows += [("namespace", primary, None, sku, capacity), ("namespace", secondary, None, sku, capacity)]
        rows += [("queue", primary, f"queue-{e}", None, None) for e in range(entities)]
        rows += [
            ("queue", secondary, contract.backlog_queue_name(primary, b), None, None) for b in range(backlog_queues)
        ]
        rows += [("queue", secondary, f"local-{e}", None, None) for e in range(entities - backlog_queues)]
    return rows


def generate(path: Path, rows: int, pairs: int, entities: int, backlog_queues: int) -> None:
    """Metric rows, one per (namespace, entity, metric, minute): ordered by time like an export.
    Backlog queues take messages only in an outage window (09:00-12:59) of every seventh pair."""
    series = pairs * 2 * entities * len(METRICS)
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(
        f"""
        COPY (
          WITH r AS (
            SELECT i,
                   i % {series} AS s,
                   (i // {series}) AS minute
            FROM range({rows}) t(i)
          ), k AS (
            SELECT i, minute,
                   s % {len(METRICS)} AS m,
                   (s // {len(METRICS)}) % {entities} AS e,
                   (s // {len(METRICS) * entities}) % 2 AS secondary,
                   s // {len(METRICS) * entities * 2} AS p
            FROM r
          )
          SELECT
            printf('ns%04d', p) || CASE WHEN secondary = 1 THEN '-dr' ELSE '' END AS namespace,
            list_extract({list(METRICS)!r}, m + 1) AS metric,
            CASE
              WHEN secondary = 1 AND e < {backlog_queues}
                THEN printf('ns%04d/{contract.BACKLOG_QUEUE_SEGMENT}/%d', p, e)
              WHEN secondary = 1 THEN 'local-' || e
              ELSE 'queue-' || e
            END AS entity,
            TIMESTAMPTZ '2026-11-01 00:00:00+00' + to_minutes(minute) AS timestamp,
            CASE
              WHEN secondary = 1 AND e < {backlog_queues}
                THEN CASE WHEN p % 7 = 0 AND minute % 1440 BETWEEN 540 AND 779 THEN (hash(i) % 50)::DOUBLE
                          ELSE 0.0 END + CASE WHEN m = 2 THEN 0.0667 ELSE 0.0 END
              ELSE (hash(i) % 200)::DOUBLE
            END AS total,
            1::BIGINT AS interval_minutes
          FROM k
        ) TO '{path}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 1000000)
        """
    )
    con.close()


def write_documents(parquet: Path, directory: Path, memory: str = DEFAULT_MEMORY) -> None:
    """The Parquet rows as Metrics REST documents, one JSON line per (namespace, metric, day)."""
    directory.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET preserve_insertion_order = false")
    con.execute(f"SET memory_limit = '{memory}B'")
    con.execute(f"SET temp_directory = '{directory.parent / 'duckdb-tmp'}'")
    ns_prefix = "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.ServiceBus/namespaces/"
    con.execute(
        f"""
        COPY (
          WITH series AS (
            SELECT namespace, metric, CAST(timestamp AS DATE) AS day, entity,
                   list({{'timeStamp': strftime(timestamp, '%Y-%m-%dT%H:%M:%SZ'), 'total': total}} ORDER BY timestamp)
                     AS data
            FROM read_parquet('{parquet}') GROUP BY ALL
          )
          SELECT 0 AS cost, 'PT1M' AS "interval", 'Microsoft.ServiceBus/namespaces' AS namespace,
                 [{{'id': '{ns_prefix}' || namespace || '/providers/Microsoft.Insights/metrics/' || metric,
                    'name': {{'value': metric}},
                    'timeseries': list({{'metadatavalues': [{{'name': {{'value': 'entityname'}}, 'value': entity}}],
                                         'data': data}})}}] AS value
          FROM series GROUP BY series.namespace, metric, day
        ) TO '{directory}' (FORMAT json, PER_THREAD_OUTPUT true)
        """
    )
    con.close()
    for path in directory.glob("*.json"):
        path.rename(path.with_suffix(".jsonl"))


def duckdb_rows_from_documents(directory: Path) -> str:
    """The documents back to rows in DuckDB, checked and deduplicated as the Spark reader does
    (`pipeline.metrics.flatten_metrics`, `check_values`, `deduplicate`): the namespace from the
    metric id and the `entityname` dimension once per series, the time grain once per document,
    unreadable times, null, negative and non-finite totals left out, and a point kept only when
    all its copies agree.

    The UNNESTs are in the select lists, one level per CTE: DuckDB streams those. Written as
    lateral joins in the FROM clause (`FROM read_json(...) d, unnest(d.value) u(v), ...`) the
    correlated UNNESTs are decorrelated into a join against the whole input, which at 100M rows
    (4.7 GiB of JSON) ran out of a 12 GB memory limit or spilled over 60 GB."""
    pattern = r"(?i)/providers/Microsoft\.ServiceBus/namespaces/([^/]+)/"
    grain = "regexp_extract(\"interval\", '^P(?:T)?(\\d+)[MHD]$', 1)"
    return f"""
    CREATE VIEW checked AS
    WITH docs AS (
      SELECT CASE WHEN regexp_matches("interval", '^PT\\d+M$') THEN TRY_CAST({grain} AS BIGINT)
                  WHEN regexp_matches("interval", '^PT\\d+H$') THEN TRY_CAST({grain} AS BIGINT) * 60
                  WHEN regexp_matches("interval", '^P\\d+D$') THEN TRY_CAST({grain} AS BIGINT) * 1440
             END AS interval_minutes,
             unnest(value) AS v
      FROM read_json('{directory}/*.jsonl', format = 'newline_delimited',
                     columns = {{value: 'STRUCT(id VARCHAR, name STRUCT(value VARCHAR), timeseries STRUCT(
                       metadatavalues STRUCT(name STRUCT(value VARCHAR), value VARCHAR)[],
                       data STRUCT(timeStamp VARCHAR, total DOUBLE)[])[])[]', "interval": 'VARCHAR'}})
    ), series AS (
      SELECT interval_minutes, lower(regexp_extract(v.id, '{pattern}', 1)) AS namespace, v.name.value AS metric,
             unnest(v.timeseries) AS ts
      FROM docs
    ), points AS (
      SELECT interval_minutes, namespace, metric,
             replace(list_filter(ts.metadatavalues, lambda x: lower(x.name.value) = 'entityname')[1].value, '~', '/')
               AS entity,
             unnest(ts.data) AS p
      FROM series
    ), points_checked AS (
      SELECT namespace, metric, entity, TRY_CAST(p.timeStamp AS TIMESTAMPTZ) AS timestamp, p.total AS total,
             interval_minutes
      FROM points
      WHERE namespace <> '' AND metric IS NOT NULL AND entity IS NOT NULL AND interval_minutes IS NOT NULL
        AND p.total IS NOT NULL AND isfinite(p.total) AND p.total >= 0
    )
    SELECT * FROM points_checked WHERE timestamp IS NOT NULL;
    CREATE VIEW rows AS
    SELECT namespace, metric, entity, timestamp, min(total) AS total, max(interval_minutes) AS interval_minutes
    FROM checked
    GROUP BY namespace, metric, entity, timestamp HAVING min(total) = max(total)
    """


def duckdb_cost_sql(prices: PriceTable, clients: int) -> str:
    """The same aggregation as `cost_by_namespace_day`, in DuckDB SQL (RE2 takes the contract's
    pattern as is)."""
    pattern = contract.BACKLOG_QUEUE_NAME_PATTERN.replace("'", "''")
    is_backlog = f"(candidate LIKE '{BACKLOG_LIKE}' AND regexp_matches(candidate, '{pattern}'))"

    def tiered(x: str) -> str:
        terms = []
        for lower, upper, price in prices.tier_bounds():
            top = x if upper is None else f"least({x}, {upper})"
            terms.append(f"greatest(0.0, {top} - {lower}) * {price!r}")
        return " + ".join(terms)

    hours = float(prices.hours_per_day)
    return f"""
    WITH grains AS MATERIALIZED (
      SELECT namespace, CAST(timestamp AS DATE) AS date,
             CASE WHEN metric = '{INCOMING_MESSAGES}' AND entity LIKE '{BACKLOG_LIKE}' THEN entity END AS candidate,
             CASE WHEN metric = '{INCOMING_MESSAGES}' AND entity LIKE '{BACKLOG_LIKE}' AND total > 0
                  THEN timestamp END AS traffic_at,
             SUM(CASE WHEN metric = '{INCOMING_REQUESTS}' THEN total END) AS operations,
             SUM(CASE WHEN metric = '{INCOMING_MESSAGES}' AND entity LIKE '{BACKLOG_LIKE}' THEN total END)
               AS candidate_messages,
             MAX(interval_minutes) AS minutes
      FROM rows GROUP BY ALL
    ), daily AS (
      SELECT namespace, date, SUM(operations) AS operations,
             SUM(CASE WHEN coalesce({is_backlog}, false) THEN candidate_messages END) AS backlog_messages
      FROM grains GROUP BY ALL
    ), per_grain AS (
      SELECT lower(regexp_extract(candidate, '{pattern}', 1)) AS namespace, traffic_at, MAX(minutes) AS minutes
      FROM grains WHERE traffic_at IS NOT NULL AND {is_backlog} GROUP BY ALL
    ), minutes AS (
      SELECT namespace, CAST(traffic_at AS DATE) AS date, SUM(minutes) AS backlog_minutes FROM per_grain GROUP BY ALL
    ), estate AS (
      SELECT namespace, max(sku_name) AS sku_name, max(sku_capacity) AS sku_capacity,
             count(*) FILTER (WHERE kind = 'queue' AND coalesce(entity LIKE '{BACKLOG_LIKE}'
                              AND regexp_matches(entity, '{pattern}'), false)) AS backlog_queues,
             count(*) FILTER (WHERE kind IN ('queue', 'topic') AND NOT coalesce(entity LIKE '{BACKLOG_LIKE}'
                              AND regexp_matches(entity, '{pattern}'), false)) AS primary_entities
      FROM resources GROUP BY namespace
    ), grid AS (
      SELECT n.namespace, d.date
      FROM (SELECT namespace FROM estate UNION SELECT namespace FROM daily) n,
           (SELECT DISTINCT date FROM daily) d
    ), joined AS (
      SELECT g.namespace, g.date, coalesce(daily.operations, 0.0) AS ops, daily.backlog_messages,
             minutes.backlog_minutes, e.sku_name, e.sku_capacity, e.backlog_queues, e.primary_entities
      FROM grid g
      LEFT JOIN daily USING (namespace, date)
      LEFT JOIN minutes USING (namespace, date)
      LEFT JOIN estate e USING (namespace)
    ), cumulative AS (
      SELECT *, SUM(ops) OVER (PARTITION BY namespace, date_trunc('month', date) ORDER BY date
                               ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS cum
      FROM joined
    )
    SELECT namespace, date,
           CAST(round(ops) AS BIGINT) AS operations,
           CAST(round(coalesce(backlog_messages, 0.0)) AS BIGINT) AS backlog_messages,
           coalesce(backlog_queues, 0) * {contract.SYPHON_RECEIVES_PER_HOUR_PER_QUEUE * HOURS_PER_DAY}
             AS syphon_receives,
           CAST(coalesce(backlog_minutes, 0) * {PINGS_PER_MINUTE!r} * coalesce(primary_entities, 0) * {clients}
             AS BIGINT) AS ping_operations_estimate,
           CAST(round(coalesce(backlog_messages, 0.0)) AS BIGINT) * {contract.EXTRA_OPERATIONS_PER_BACKLOGGED_MESSAGE}
             + coalesce(backlog_queues, 0) * {contract.SYPHON_RECEIVES_PER_HOUR_PER_QUEUE * HOURS_PER_DAY}
             + CAST(coalesce(backlog_minutes, 0) * {PINGS_PER_MINUTE!r} * coalesce(primary_entities, 0) * {clients}
                    AS BIGINT) AS pairing_operations,
           round(CASE lower(sku_name)
             WHEN '{contract.SKU_STANDARD.lower()}' THEN {prices.standard.base_charge_per_hour!r} * {hours}
               + ({tiered("cum")}) - ({tiered("(cum - ops)")})
             WHEN '{contract.SKU_PREMIUM.lower()}' THEN coalesce(sku_capacity, 1)
               * {prices.premium.messaging_unit_per_hour!r} * {hours}
             WHEN '{SKU_BASIC.lower()}' THEN ops / 1000000.0 * {prices.basic.operations_per_million!r}
           END, 6) AS estimated_cost_usd
    FROM cumulative ORDER BY namespace, date
    """


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def same(a: Sequence[Sequence[object]], b: Sequence[Sequence[object]]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        for u, v in zip(x, y, strict=True):
            if isinstance(u, float) or isinstance(v, float):
                if not (u is None and v is None) and not math.isclose(u or 0.0, v or 0.0, rel_tol=1e-9, abs_tol=1e-6):  # type: ignore[arg-type]
                    return False
            elif u != v:
                return False
    return True


def first_difference(a: Sequence[Sequence[object]], b: Sequence[Sequence[object]]) -> str:
    if len(a) != len(b):
        return f"{len(a)} rows against {len(b)}"
    for x, y in zip(a, b, strict=True):
        if not same([x], [y]):
            return f"{list(x)} against {list(y)}"
    return "none"


def plain(rows: Iterable[Sequence[object]]) -> list[list[object]]:
    """Result rows as JSON values (dates as ISO text), so that two processes' results compare."""
    return [[v.isoformat() if isinstance(v, datetime.date) else v for v in row] for row in rows]


# --- The engines, set up as the runs use them ---------------------------------------------------


@dataclass(frozen=True)
class Inputs:
    data: Path  # the Parquet rows
    documents: Path  # the same rows as Metrics REST documents (JSON Lines)
    inventory: list[tuple[object, ...]]


def inputs(args: argparse.Namespace) -> Inputs:
    data = args.dir / f"metrics-{args.rows}-{args.pairs}x{args.entities}.parquet"
    return Inputs(data, data.with_suffix(".documents"), estate(args.pairs, args.entities, args.backlog_queues))


def prepare(args: argparse.Namespace, given: Inputs) -> None:
    """Generate what is missing (or everything with --regenerate), once, before any run."""
    args.dir.mkdir(parents=True, exist_ok=True)
    if args.regenerate or not given.data.exists():
        seconds, _ = timed(lambda: generate(given.data, args.rows, args.pairs, args.entities, args.backlog_queues))
        print(f"generated {args.rows:,} metric rows in {seconds:.1f}s (DuckDB) -> {given.data}")
    print(f"data: {given.data.stat().st_size / 2**20:,.0f} MiB Parquet, {args.rows:,} rows, cpus={os.cpu_count()}")
    if args.ingest == "json" and (args.regenerate or not given.documents.exists()):
        shutil.rmtree(given.documents, ignore_errors=True)
        seconds, _ = timed(lambda: write_documents(given.data, given.documents, args.memory))
        print(f"wrote Metrics REST documents in {seconds:.1f}s -> {given.documents}")
    if args.ingest == "json":
        files = list(given.documents.glob("*.jsonl"))
        size = sum(p.stat().st_size for p in files)
        print(f"ingestion: {size / 2**20:,.0f} MiB of JSON Lines documents ({len(files)} files)")


def duckdb_query(args: argparse.Namespace, given: Inputs) -> tuple[duckdb.DuckDBPyConnection, str]:
    """A connection with the rows' view and the inventory, and the cost query to run on it."""
    con = duckdb.connect()
    con.execute(f"SET threads = {args.threads}")
    con.execute("SET TimeZone = 'UTC'")
    # DuckDB spills to `.tmp` in the working directory by default: keep it beside the data, never in
    # the checkout (at 100M rows of JSON documents it spilled more than 60 GB within two minutes).
    con.execute(f"SET temp_directory = '{args.dir / 'duckdb-tmp'}'")
    # The same memory as Spark's driver heap; neither engine keeps row order here.
    con.execute(f"SET memory_limit = '{args.memory}B'")
    con.execute("SET preserve_insertion_order = false")
    if args.ingest == "json":
        con.execute(duckdb_rows_from_documents(given.documents))
    else:
        con.execute(f"CREATE VIEW rows AS SELECT * FROM read_parquet('{given.data}')")
    con.execute(
        "CREATE TABLE resources (kind VARCHAR, namespace VARCHAR, entity VARCHAR, sku_name VARCHAR, sku_capacity BIGINT)"
    )
    con.executemany("INSERT INTO resources VALUES (?, ?, ?, ?, ?)", given.inventory)
    return con, duckdb_cost_sql(load_prices(), clients=1)


def spark_conf(args: argparse.Namespace) -> dict[str, str]:
    conf = {"spark.driver.memory": args.memory}
    for setting in args.conf:
        key, _, value = setting.partition("=")
        conf[key] = value
    return conf


def spark_job(args: argparse.Namespace, given: Inputs) -> tuple[Any, Callable[[], list[Any]]]:
    """A session with the estate cached, and one run of the audit's cost through ingestion."""
    from pairedbus.pipeline.metrics import read_metrics
    from pairedbus.pipeline.namespace_cost import cost_by_namespace_day, estate_by_namespace
    from pairedbus.pipeline.spark_session import build_session

    spark = build_session(args.master, app_name="pairedbus-audit-bench", conf=spark_conf(args))
    resources = spark.createDataFrame(
        given.inventory, "kind string, namespace string, entity string, sku_name string, sku_capacity long"
    )
    estate_frame = estate_by_namespace(resources).cache()
    estate_frame.count()
    prices = load_prices()

    def run() -> list[Any]:
        if args.ingest == "json":
            from pairedbus.pipeline.sources import list_files

            files = list_files(spark, str(given.documents), "metrics")
            rows = read_metrics(spark, files).rows
            # A refused file is read by neither engine's clock the same way: the run would time
            # less work than DuckDB's (main refused every 10M document line over 64 KiB, 2026-11-28).
            if files.refused:
                uri, reason = next(iter(files.refused.items()))
                raise SystemExit(f"Spark refused {len(files.refused)} of the documents, e.g. {uri}: {reason}")
        else:
            rows = spark.read.parquet(str(given.data))
        return [tuple(r[c] for c in COST_COLUMNS) for r in cost_by_namespace_day(rows, estate_frame, prices).collect()]

    return spark, run


def cpu_split(used: dict[str, float]) -> str:
    return ", ".join(f"{role} {cpu:.1f}s" for role, cpu in sorted(used.items(), key=lambda kv: -kv[1]))


# --- Medians of alternating runs, each engine in fresh processes --------------------------------

#: Issue 38 item 2's goals: Spark's median over DuckDB's, through JSON ingestion, at 10M points.
GOALS = {"cold": 4.0, "warm": 3.0}
#: A worker's line of results on its stdout; anything else there is the engines' own.
RESULT = "RESULT "


def mode(index: int, warm_runs: int) -> str:
    """A process's runs: the first is cold (the user's first query), the rest warm (the same
    process and JVM again), numbered when there are several."""
    if index == 0:
        return "cold"
    return "warm" if warm_runs == 1 else f"warm {index}"


def goal(name: str) -> float:
    return GOALS["cold" if name == "cold" else "warm"]


@dataclass(frozen=True)
class Spread:
    """One engine's runs in one mode: their median and range."""

    median: float
    low: float
    high: float

    @classmethod
    def of(cls, samples: Sequence[float]) -> Spread:
        return cls(statistics.median(samples), min(samples), max(samples))


@dataclass(frozen=True)
class Ratio:
    """Spark over DuckDB in one mode: the ratio of the medians; the range the spreads allow (Spark's
    fastest run over DuckDB's slowest, up to its slowest over DuckDB's fastest); and each round's
    ratio (the two engines' runs of one round ran minutes apart, under about the same load)."""

    of_medians: float
    low: float
    high: float
    rounds: tuple[float, ...]

    @classmethod
    def of(cls, spark: Sequence[float], duckdb_: Sequence[float]) -> Ratio:
        s, d = Spread.of(spark), Spread.of(duckdb_)
        rounds = tuple(x / y for x, y in zip(spark, duckdb_, strict=False))
        return cls(s.median / d.median, s.low / d.high, s.high / d.low, rounds)

    def verdict(self, goal: float) -> str:
        """Met or not as a median, and whether the spread decides it: only when the whole range the
        spreads allow is on one side of the goal does the noise not matter."""
        met = "met" if self.of_medians <= goal else "not met"
        decided = "beyond" if self.high <= goal or self.low > goal else "within"
        within = sum(r <= goal for r in self.rounds)
        return f"{met} as a median ({decided} the spread); {len(self.rounds)} rounds, {within} within the goal"


def rotated(items: Sequence[T], round_: int) -> list[T]:
    """Round `round_`'s order: each round starts one later, so that no engine always follows the
    same one (the page cache, the JIT of the process before, the load it leaves)."""
    if not items:
        return []
    shift = round_ % len(items)
    return [*items[shift:], *items[:shift]]


@dataclass(frozen=True)
class Engine:
    label: str
    kind: str  # "duckdb" or "spark"
    src: Path  # the pairedbus source tree the worker imports


@dataclass
class Run:
    engine: str
    round: int
    index: int  # 0: cold
    seconds: float
    rows: list[list[object]] = field(repr=False)
    cpu: dict[str, float] = field(default_factory=dict)
    process_cpu: float | None = None  # the engine process's CPU seconds in the run


def parse_worker_line(line: str) -> dict[str, Any] | None:
    """A worker's result line as a dict, None for any other line."""
    if not line.startswith(RESULT):
        return None
    parsed: dict[str, Any] = json.loads(line[len(RESULT) :])
    return parsed


def summary(
    runs: Sequence[Run], engines: Sequence[str], modes: Sequence[str], cpu: bool = False
) -> dict[tuple[str, str], list[float]]:
    """Each engine's and mode's times (or CPU seconds, where every run has them), in round order."""
    table: dict[tuple[str, str], list[float]] = {(e, m): [] for e in engines for m in modes}
    for run in sorted(runs, key=lambda r: r.round):
        value = run.process_cpu if cpu else run.seconds
        if value is not None:
            table[(run.engine, modes[run.index])].append(value)
    return table


def emit(record: dict[str, Any]) -> None:
    print(RESULT + json.dumps(record), flush=True)
    if "run" in record:  # also in the worker's log
        print(f"run {record['run']}: {record['seconds']:.2f}s, CPU {record['process_cpu']:.2f}s", file=sys.stderr)


def worker(args: argparse.Namespace) -> None:
    """One fresh process of one engine: set up, then 1 + --warm-runs runs of the same query."""
    given = inputs(args)
    total = 1 + args.warm_runs
    if args.worker == "duckdb":
        start, (con, sql) = timed(lambda: duckdb_query(args, given))
        emit({"start": start})
        for index in range(total):
            cpu = time.process_time()  # DuckDB's threads are this process's
            seconds, rows = timed(lambda: con.execute(sql).fetchall())
            emit({"run": index, "seconds": seconds, "rows": plain(rows), "process_cpu": time.process_time() - cpu})
        con.close()
        return
    start, (spark, run) = timed(lambda: spark_job(args, given))
    emit({"start": start})
    jvm = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    for index in range(total):
        before, cpu_at = jvm_cpu_by_role(jvm), process_cpu_of(jvm) + time.process_time()
        seconds, rows = timed(run)
        used = {role: cpu - before.get(role, 0.0) for role, cpu in jvm_cpu_by_role(jvm).items()}
        # The JVM's and this driver's: the split by role sees live threads only, this total all.
        total_cpu = process_cpu_of(jvm) + time.process_time() - cpu_at
        emit({"run": index, "seconds": seconds, "rows": plain(rows), "cpu": used, "process_cpu": total_cpu})
    spark.stop()


def worker_command(args: argparse.Namespace, kind: str) -> list[str]:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", kind, "--dir", str(args.dir)]
    command += ["--rows", str(args.rows), "--pairs", str(args.pairs), "--entities", str(args.entities)]
    command += ["--backlog-queues", str(args.backlog_queues), "--master", args.master]
    command += ["--threads", str(args.threads), "--memory", args.memory, "--ingest", args.ingest]
    command += ["--warm-runs", str(args.warm_runs)]
    for setting in args.conf:
        command += ["--conf", setting]
    return command


def run_worker(args: argparse.Namespace, engine: Engine, round_: int, logs: Path) -> list[Run]:
    log = logs / f"{engine.label.replace(' ', '_').replace('(', '').replace(')', '')}-{round_}.log"
    env = {**os.environ, "PYTHONPATH": str(engine.src)}
    runs: list[Run] = []
    with log.open("w") as stderr:
        process = subprocess.Popen(
            worker_command(args, engine.kind), stdout=subprocess.PIPE, stderr=stderr, text=True, env=env
        )
        assert process.stdout is not None
        for line in process.stdout:
            record = parse_worker_line(line)
            if record is None:
                continue
            if "start" in record:
                print(f"  round {round_} {engine.label}: set up in {record['start']:.2f}s", flush=True)
                continue
            run = Run(
                engine.label,
                round_,
                record["run"],
                record["seconds"],
                record["rows"],
                record.get("cpu", {}),
                record.get("process_cpu"),
            )
            runs.append(run)
            split = cpu_split(run.cpu)
            print(
                f"  round {round_} {engine.label} {mode(run.index, args.warm_runs)}: {run.seconds:.2f}s"
                + (f", CPU {run.process_cpu:.2f}s" if run.process_cpu is not None else "")
                + (f" (JVM threads: {split})" if split else ""),
                flush=True,
            )
        code = process.wait()
    if code != 0:
        tail = log.read_text()[-3000:]
        raise SystemExit(f"{engine.label} worker failed (exit {code}), round {round_}; {log}:\n{tail}")
    return runs


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def engines_of(args: argparse.Namespace) -> list[Engine]:
    here = Path(contract.__file__).resolve().parents[1]
    engines = [Engine("DuckDB", "duckdb", here), Engine(f"Spark ({here.parent.name})", "spark", here)]
    for tree in args.tree:
        engines.append(Engine(f"Spark ({tree.resolve().name})", "spark", tree.resolve() / "src"))
    return engines


def alternate(args: argparse.Namespace) -> int:
    """DuckDB and Spark (and Spark from each --tree) interleaved, a fresh process each per round;
    every run printed, then the medians, spreads and ratios against the goals. 1 when any run's
    result differs from DuckDB's first."""
    given = inputs(args)
    prepare(args, given)
    engines = engines_of(args)
    modes = [mode(i, args.warm_runs) for i in range(1 + args.warm_runs)]
    logs = args.dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    print(f"load average at start: {load_average()}", flush=True)
    runs: list[Run] = []
    for round_ in range(1, args.runs + 1):
        for engine in rotated(engines, round_ - 1):
            runs += run_worker(args, engine, round_, logs)
            # Kept as they come: a long run's figures outlive a failure after it.
            kept = [
                {"engine": r.engine, "round": r.round, "run": r.index, "seconds": r.seconds, "cpu": r.process_cpu}
                for r in runs
            ]
            (logs / "runs.json").write_text(json.dumps(kept))
    print(f"load average at end: {load_average()}")

    reference = next(r.rows for r in runs if r.engine == "DuckDB")
    differing = [r for r in runs if not same(r.rows, reference)]
    for run in differing[:3]:
        print(f"differs: {run.engine} round {run.round} run {run.index + 1}: {first_difference(run.rows, reference)}")
    print(
        f"result: {len(reference)} namespace-days; all {len(runs)} runs agree with DuckDB's first: "
        f"{'yes' if not differing else f'NO ({len(differing)} differ)'}"
    )

    labels = [e.label for e in engines]
    table = summary(runs, labels, modes)
    for label in labels:
        for name in modes:
            times = table[(label, name)]
            s = Spread.of(times)
            print(
                f"{label} {name}: median {s.median:.2f}s, spread {s.low:.2f}-{s.high:.2f}s "
                f"(runs {', '.join(f'{t:.2f}' for t in times)})"
            )
    for label in labels[1:]:
        for name in modes:
            ratio = Ratio.of(table[(label, name)], table[("DuckDB", name)])
            print(
                f"{label}/DuckDB {name}: {ratio.of_medians:.2f}x of medians (goal <= {goal(name):g}x): "
                f"{ratio.verdict(goal(name))}; the spreads allow {ratio.low:.2f}-{ratio.high:.2f}x, "
                f"rounds {', '.join(f'{r:.2f}' for r in ratio.rounds)}"
            )
    # CPU seconds move less with other processes' load than wall-clock time: on a busy machine
    # they say what the wall-clock ratio would be with the cores to itself (both engines use 2).
    cpu = summary(runs, labels, modes, cpu=True)
    if all(len(cpu[key]) == len(table[key]) for key in table):
        for label in labels:
            for name in modes:
                s = Spread.of(cpu[(label, name)])
                print(f"{label} {name} CPU: median {s.median:.2f}s, spread {s.low:.2f}-{s.high:.2f}s")
        for label in labels[1:]:
            for name in modes:
                ratio = Ratio.of(cpu[(label, name)], cpu[("DuckDB", name)])
                print(
                    f"{label}/DuckDB {name} CPU: {ratio.of_medians:.2f}x of medians; "
                    f"the spreads allow {ratio.low:.2f}-{ratio.high:.2f}x"
                )
    return 1 if differing else 0


# --- One process, both engines (the earlier rounds' mode; --breakdown) ---------------------------


def single_process(args: argparse.Namespace) -> int:
    given = inputs(args)
    prepare(args, given)
    con, sql = duckdb_query(args, given)
    duck_times = []
    duck_rows: list[Any] = []
    for _ in range(args.runs):
        seconds, duck_rows = timed(lambda: con.execute(sql).fetchall())
        duck_times.append(seconds)
        print(f"DuckDB run {len(duck_times)}: {seconds:.2f}s", flush=True)
    if args.breakdown and args.ingest == "json":
        every_column = "count(*), count(namespace), count(metric), count(entity), count(timestamp), sum(total), sum(interval_minutes)"
        parse = timed(lambda: con.execute(f"SELECT {every_column} FROM checked").fetchall())[0]
        deduplicate = timed(lambda: con.execute(f"SELECT {every_column} FROM rows").fetchall())[0]
        print(
            f"DuckDB breakdown: parse+flatten {parse:.2f}s, + duplicate detection {deduplicate:.2f}s, "
            f"full run {min(duck_times[1:] or duck_times):.2f}s",
            flush=True,
        )
    con.close()

    spark, spark_run = spark_job(args, given)
    spark_times = []
    spark_rows: list[Any] = []
    jvm = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    for _ in range(args.runs):
        before = jvm_cpu_by_role(jvm)
        seconds, spark_rows = timed(spark_run)
        spark_times.append(seconds)
        # Where the JVM's CPU went: a cold run's extra is mostly the JIT compilers (10M points:
        # 16-18 s of compiler-thread CPU cold, 7 s in the second run) beside the two task threads.
        split = cpu_split({role: cpu - before.get(role, 0.0) for role, cpu in jvm_cpu_by_role(jvm).items()})
        print(f"Spark run {len(spark_times)}: {seconds:.2f}s" + (f" (JVM CPU: {split})" if split else ""), flush=True)
    if args.breakdown and args.ingest == "json":
        from pairedbus.pipeline.metrics import flatten_metrics, read_metrics, series_points
        from pairedbus.pipeline.schemas import METRICS_READ
        from pairedbus.pipeline.sources import list_files, read_json

        def parse_only() -> None:
            raw = read_json(spark, list_files(spark, str(given.documents), "metrics"), METRICS_READ)
            if raw is None:
                raise SystemExit(f"no JSON documents to parse in {given.documents}")
            series_points(flatten_metrics(raw).rows).write.format("noop").mode("overwrite").save()

        def parse_and_deduplicate() -> None:
            read_metrics(spark, str(given.documents)).rows.write.format("noop").mode("overwrite").save()

        print(
            f"Spark breakdown: parse+flatten {timed(parse_only)[0]:.2f}s, "
            f"+ duplicate detection {timed(parse_and_deduplicate)[0]:.2f}s, full run {min(spark_times[1:] or spark_times):.2f}s"
        )
    spark.stop()

    spark_tuples, duck_tuples = plain(spark_rows), plain(duck_rows)
    agree = same(spark_tuples, duck_tuples)
    if not agree:
        print(f"first difference: spark against duckdb: {first_difference(spark_tuples, duck_tuples)}")
    print(f"result: {len(spark_tuples)} namespace-days; Spark and DuckDB agree: {'yes' if agree else 'NO'}")
    duck_warm, spark_warm = duck_times[1:] or duck_times, spark_times[1:] or spark_times
    print(f"DuckDB ({args.threads} threads): runs {', '.join(f'{t:.2f}s' for t in duck_times)}")
    print(f"Spark ({args.master}): runs {', '.join(f'{t:.2f}s' for t in spark_times)}")
    print(
        f"ratio Spark/DuckDB: cold {spark_times[0] / duck_times[0]:.1f}x, "
        f"warm best {min(spark_warm) / min(duck_warm):.1f}x, "
        f"warm median {statistics.median(spark_warm) / statistics.median(duck_warm):.1f}x (goal: within 3x)"
    )
    return 0 if agree else 1


SUFFIXES = {"k": 1_000, "m": 1_000_000, "g": 1_000_000_000}


def positive(text: str) -> int:
    """A count of at least 1: digits with optional underscores, or with a K, M or G suffix (10M)."""
    digits = text.strip().replace("_", "")
    scale = SUFFIXES.get(digits[-1:].lower(), 1)
    try:
        value = int(digits[:-1] if scale > 1 else digits) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a count: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--rows", type=positive, default=100_000_000)
    p.add_argument("--pairs", type=positive, default=100, help="primary/secondary namespace pairs")
    p.add_argument("--entities", type=positive, default=25, help="entities per namespace")
    p.add_argument("--backlog-queues", type=positive, default=10)
    p.add_argument("--dir", type=Path, default=Path("/tmp/pairedbus-bench"))
    p.add_argument("--master", default="local[2]")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting (repeatable)")
    p.add_argument("--threads", type=positive, default=2, help="DuckDB threads (match the Spark cores)")
    p.add_argument(
        "--memory", default=DEFAULT_MEMORY, help="each engine's memory: Spark's driver heap, DuckDB's memory_limit"
    )
    p.add_argument(
        "--runs",
        type=positive,
        help="rounds of fresh processes, alternating (default 5); with --single-process, runs per engine (default 3)",
    )
    p.add_argument("--warm-runs", type=positive, default=1, help="runs after the cold one in each fresh process")
    p.add_argument(
        "--tree", type=Path, action="append", default=[], help="also run Spark from this checkout (repeatable)"
    )
    p.add_argument("--single-process", action="store_true", help="both engines in this process, one after the other")
    p.add_argument("--regenerate", action="store_true")
    p.add_argument(
        "--ingest", choices=("json", "parquet"), default="json", help="start from REST documents or Parquet rows"
    )
    p.add_argument(
        "--breakdown",
        action="store_true",
        help="also time Spark's parse and duplicate detection alone (--single-process, json)",
    )
    p.add_argument("--worker", choices=("duckdb", "spark"), help=argparse.SUPPRESS)
    return p


def checked(args: argparse.Namespace, p: argparse.ArgumentParser) -> argparse.Namespace:
    """Refuse what would fail only after minutes of generating or running: one line naming the field."""
    for tree in args.tree:
        if not (tree / "src" / "pairedbus" / "pipeline").is_dir():
            p.error(f"--tree {tree}: no src/pairedbus/pipeline there (a pairedbus checkout)")
    for setting in args.conf:
        if "=" not in setting or not setting.partition("=")[0]:
            p.error(f"--conf {setting!r}: expected KEY=VALUE")
    if args.breakdown and not args.single_process:
        p.error("--breakdown: only with --single-process")
    if args.runs is None:
        args.runs = 3 if args.single_process else 5
    return args


def main() -> int:
    p = parser()
    args = checked(p.parse_args(), p)
    if args.worker:
        worker(args)
        return 0
    return single_process(args) if args.single_process else alternate(args)


if __name__ == "__main__":
    sys.exit(main())
