"""Benchmark: the audit's cost aggregation on Spark (local[2]) against the same query in DuckDB.

`--ingest json` (the default) goes through the real ingestion path: the rows are written once as
Azure Monitor Metrics REST documents (one per namespace, metric and day, as JSON Lines), and each
run parses them — Spark with `pipeline.metrics.read_metrics` (schema, quarantine checks,
duplicate detection), DuckDB with `read_json` + UNNEST and the same duplicate detection — before
the same aggregation. `--ingest parquet` starts from the pre-built Parquet rows instead.

Generates an estate of metric rows as Parquet (in DuckDB, no Python loops), then runs
`pairedbus.pipeline.namespace_cost.cost_by_namespace_day` on Spark and the same aggregation written as
DuckDB SQL, on the same file, in the same process; checks that both give the same rows and prints
both times and the ratio. Each engine runs `--runs` times (default 3) on a fresh DataFrame /
query: the first (cold) run pays for JIT and code generation, the best of the others is the
steady state. Spark's time includes its one checkpoint of the small per-grain aggregate.

    .venv/bin/python benchmarks/audit_bench.py                    # 100M rows
    .venv/bin/python benchmarks/audit_bench.py --rows 10_000_000  # smaller
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import time
from pathlib import Path

import duckdb

from pairedbus import contract
from pairedbus.pipeline.metrics import INCOMING_MESSAGES, INCOMING_REQUESTS, OUTGOING_MESSAGES
from pairedbus.pipeline.namespace_cost import COST_COLUMNS, HOURS_PER_DAY, PINGS_PER_MINUTE, SKU_BASIC
from pairedbus.pipeline.prices import PriceTable, load_prices

METRICS = (INCOMING_MESSAGES, OUTGOING_MESSAGES, INCOMING_REQUESTS)
BACKLOG_LIKE = f"%/{contract.BACKLOG_QUEUE_SEGMENT}/%"
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


def jvm_cpu_by_role(pid: int) -> dict[str, float]:
    """`cpu_by_role` of a live process's threads so far; empty where there is no /proc (not Linux)."""
    stats = []
    for path in Path(f"/proc/{pid}/task").glob("*/stat"):
        try:
            stats.append(path.read_text())
        except OSError:  # a thread that ended since the listing
            continue
    return cpu_by_role(stats, os.sysconf("SC_CLK_TCK")) if stats else {}


def estate(pairs: int, entities: int, backlog_queues: int) -> list[tuple]:
    """Inventory rows (kind, namespace, entity, sku_name, sku_capacity): `pairs` primaries with
    `entities` queues each, and their secondaries with `backlog_queues` backlog queues plus
    local queues up to `entities`. Every fifth pair is Premium."""
    rows: list[tuple] = []
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


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def same(a: list[tuple], b: list[tuple]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        for u, v in zip(x, y, strict=True):
            if isinstance(u, float) or isinstance(v, float):
                if not (u is None and v is None) and not math.isclose(u or 0.0, v or 0.0, rel_tol=1e-9, abs_tol=1e-6):
                    return False
            elif u != v:
                return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=lambda s: int(s.replace("_", "")), default=100_000_000)
    parser.add_argument("--pairs", type=int, default=100, help="primary/secondary namespace pairs")
    parser.add_argument("--entities", type=int, default=25, help="entities per namespace")
    parser.add_argument("--backlog-queues", type=int, default=10)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/pairedbus-bench"))
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--threads", type=int, default=2, help="DuckDB threads (match the Spark cores)")
    parser.add_argument(
        "--memory", default=DEFAULT_MEMORY, help="each engine's memory: Spark's driver heap, DuckDB's memory_limit"
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per engine: the first is cold")
    parser.add_argument("--regenerate", action="store_true")
    parser.add_argument(
        "--ingest", choices=("json", "parquet"), default="json", help="start from REST documents or Parquet rows"
    )
    parser.add_argument(
        "--breakdown", action="store_true", help="also time Spark's parse and duplicate detection alone (json)"
    )
    args = parser.parse_args()

    args.dir.mkdir(parents=True, exist_ok=True)
    data = args.dir / f"metrics-{args.rows}-{args.pairs}x{args.entities}.parquet"
    if args.regenerate or not data.exists():
        seconds, _ = timed(lambda: generate(data, args.rows, args.pairs, args.entities, args.backlog_queues))
        print(f"generated {args.rows:,} metric rows in {seconds:.1f}s (DuckDB) -> {data}")
    print(f"data: {data.stat().st_size / 2**20:,.0f} MiB Parquet, {args.rows:,} rows, cpus={os.cpu_count()}")
    documents = data.with_suffix(".documents")
    if args.ingest == "json" and (args.regenerate or not documents.exists()):
        shutil.rmtree(documents, ignore_errors=True)
        seconds, _ = timed(lambda: write_documents(data, documents, args.memory))
        print(f"wrote Metrics REST documents in {seconds:.1f}s -> {documents}")
    if args.ingest == "json":
        size = sum(p.stat().st_size for p in documents.glob("*.jsonl"))
        print(
            f"ingestion: {size / 2**20:,.0f} MiB of JSON Lines documents ({len(list(documents.glob('*.jsonl')))} files)"
        )
    prices = load_prices()
    inventory = estate(args.pairs, args.entities, args.backlog_queues)

    # DuckDB
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
        con.execute(duckdb_rows_from_documents(documents))
    else:
        con.execute(f"CREATE VIEW rows AS SELECT * FROM read_parquet('{data}')")
    con.execute(
        "CREATE TABLE resources (kind VARCHAR, namespace VARCHAR, entity VARCHAR, sku_name VARCHAR, sku_capacity BIGINT)"
    )
    con.executemany("INSERT INTO resources VALUES (?, ?, ?, ?, ?)", inventory)
    sql = duckdb_cost_sql(prices, clients=1)
    duck_times = []
    for _ in range(args.runs):
        seconds, duck_rows = timed(lambda: con.execute(sql).fetchall())
        duck_times.append(seconds)
        print(f"DuckDB run {len(duck_times)}: {seconds:.2f}s", flush=True)
    duck_breakdown = ""
    if args.breakdown and args.ingest == "json":
        every_column = "count(*), count(namespace), count(metric), count(entity), count(timestamp), sum(total), sum(interval_minutes)"
        parse = timed(lambda: con.execute(f"SELECT {every_column} FROM checked").fetchall())[0]
        deduplicate = timed(lambda: con.execute(f"SELECT {every_column} FROM rows").fetchall())[0]
        duck_breakdown = (
            f"DuckDB breakdown: parse+flatten {parse:.2f}s, + duplicate detection {deduplicate:.2f}s, "
            f"full run {min(duck_times[1:] or duck_times):.2f}s"
        )
        print(duck_breakdown, flush=True)
    con.close()

    # Spark
    from pairedbus.pipeline.namespace_cost import cost_by_namespace_day, estate_by_namespace
    from pairedbus.pipeline.spark_session import build_session

    spark = build_session(args.master, app_name="pairedbus-audit-bench", conf={"spark.driver.memory": args.memory})
    resources = spark.createDataFrame(
        inventory, "kind string, namespace string, entity string, sku_name string, sku_capacity long"
    )
    estate_frame = estate_by_namespace(resources).cache()
    estate_frame.count()
    spark_times = []
    from pairedbus.pipeline.metrics import read_metrics

    def spark_run():
        rows = read_metrics(spark, str(documents)).rows if args.ingest == "json" else spark.read.parquet(str(data))
        return cost_by_namespace_day(rows, estate_frame, prices).collect()

    jvm = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    for _ in range(args.runs):
        before = jvm_cpu_by_role(jvm)
        seconds, spark_rows = timed(spark_run)
        spark_times.append(seconds)
        # Where the JVM's CPU went: a cold run's extra is mostly the JIT compilers (10M points:
        # 16-18 s of compiler-thread CPU cold, 7 s in the second run) beside the two task threads.
        used = {role: cpu - before.get(role, 0.0) for role, cpu in jvm_cpu_by_role(jvm).items()}
        split = ", ".join(f"{role} {cpu:.1f}s" for role, cpu in sorted(used.items(), key=lambda kv: -kv[1]))
        print(f"Spark run {len(spark_times)}: {seconds:.2f}s" + (f" (JVM CPU: {split})" if split else ""), flush=True)
    if args.breakdown and args.ingest == "json":
        from pairedbus.pipeline.metrics import flatten_metrics
        from pairedbus.pipeline.schemas import METRICS_READ
        from pairedbus.pipeline.sources import list_files, read_json

        def parse_only():
            raw = read_json(spark, list_files(spark, str(documents), "metrics"), METRICS_READ)
            flatten_metrics(raw).rows.write.format("noop").mode("overwrite").save()

        def parse_and_deduplicate():
            read_metrics(spark, str(documents)).rows.write.format("noop").mode("overwrite").save()

        print(
            f"Spark breakdown: parse+flatten {timed(parse_only)[0]:.2f}s, "
            f"+ duplicate detection {timed(parse_and_deduplicate)[0]:.2f}s, full run {min(spark_times[1:] or spark_times):.2f}s"
        )
    spark.stop()

    spark_tuples = [tuple(r[c] for c in COST_COLUMNS) for r in spark_rows]
    duck_tuples = [tuple(r) for r in duck_rows]
    agree = same(spark_tuples, duck_tuples)
    if not agree:
        for x, y in zip(spark_tuples, duck_tuples, strict=False):
            if not same([x], [y]):
                print(f"first difference:\n  spark  {x}\n  duckdb {y}")
                break
    print(f"result: {len(spark_tuples)} namespace-days; Spark and DuckDB agree: {'yes' if agree else 'NO'}")
    duck_warm, spark_warm = duck_times[1:] or duck_times, spark_times[1:] or spark_times
    print(f"DuckDB ({args.threads} threads): runs {', '.join(f'{t:.2f}s' for t in duck_times)}")
    print(f"Spark ({args.master}): runs {', '.join(f'{t:.2f}s' for t in spark_times)}")
    print(
        f"ratio Spark/DuckDB: cold {spark_times[0] / duck_times[0]:.1f}x, "
        f"warm best {min(spark_warm) / min(duck_warm):.1f}x, "
        f"warm median {statistics.median(spark_warm) / statistics.median(duck_warm):.1f}x (goal: within 3x)"
    )


if __name__ == "__main__":
    main()
