"""`benchmarks/audit_bench.py`'s arithmetic: the JVM's CPU by thread role, the medians, spreads and ratios of
alternating runs, the workers' results and the arguments' checks; nothing here times anything."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from tests.benchmarks.loading import load_benchmark


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("audit_bench")


def stat(tid: int, name: str, utime: int, stime: int) -> str:
    # /proc/PID/task/TID/stat: pid (comm) state, then ppid ... utime (14th field) stime (15th) ...
    return f"{tid} ({name}) S 1 1 1 0 -1 1077936192 100 0 0 0 {utime} {stime} 0 0 20 0 40 0 1000 0 0\n"


def test_jvm_threads_are_split_into_tasks_jit_gc_and_the_rest(bench: ModuleType) -> None:
    stats = [
        stat(11, "Executor task l", 300, 20),
        stat(12, "Executor task l", 100, 0),
        stat(13, "C2 CompilerThre", 150, 0),
        stat(14, "C1 CompilerThre", 50, 0),
        stat(15, "GC Thread#0", 10, 0),
        stat(16, "java (x) y", 5, 5),  # a name with parentheses and spaces
    ]
    assert bench.cpu_by_role(stats, 100) == {"tasks": 4.2, "JIT": 2.0, "GC": 0.1, "other": 0.1}


def test_no_threads_no_split(bench: ModuleType) -> None:
    assert bench.cpu_by_role([], 100) == {}


def test_a_process_cpu_counts_every_thread_it_had(bench: ModuleType) -> None:
    # /proc/PID/stat's utime and stime include the threads that have ended, which the split cannot see
    assert bench.process_cpu(stat(10, "java (x)", 1234, 66), 100) == 13.0


# --- the medians of alternating runs (issue 38 item 2) ---


def test_a_spread_is_the_median_and_the_range(bench: ModuleType) -> None:
    assert bench.Spread.of([6.0, 5.0, 9.0, 5.5, 6.5]) == bench.Spread(6.0, 5.0, 9.0)
    assert bench.Spread.of([2.0, 4.0]) == bench.Spread(3.0, 2.0, 4.0)


def test_the_ratio_is_of_the_medians_with_the_range_the_spreads_allow(bench: ModuleType) -> None:
    ratio = bench.Ratio.of([18.0, 20.0, 30.0], [5.0, 6.0, 10.0])
    # 20 / 6, not the mean of the rounds' ratios nor the best over the best
    assert ratio.of_medians == 20.0 / 6.0
    assert (ratio.low, ratio.high) == (18.0 / 10.0, 30.0 / 5.0)
    assert ratio.rounds == (18.0 / 5.0, 20.0 / 6.0, 3.0)


def test_the_verdict_says_whether_the_spread_decides_it(bench: ModuleType) -> None:
    decided = bench.Ratio.of([5.0, 5.5, 6.0], [2.0, 2.1, 2.2])  # 2.3-3.0x: all within 3x
    assert decided.verdict(3.0) == "met as a median (beyond the spread); 3 rounds, 3 within the goal"
    assert decided.verdict(2.0) == "not met as a median (beyond the spread); 3 rounds, 0 within the goal"
    undecided = bench.Ratio.of([17.0, 19.0, 21.0], [5.0, 6.5, 7.0])  # medians 2.9x, range 2.4-4.2x
    assert undecided.verdict(3.0) == "met as a median (within the spread); 3 rounds, 2 within the goal"


def test_each_round_starts_with_the_next_engine(bench: ModuleType) -> None:
    engines = ["DuckDB", "Spark (main)", "Spark (branch)"]
    assert [bench.rotated(engines, r) for r in range(4)] == [
        ["DuckDB", "Spark (main)", "Spark (branch)"],
        ["Spark (main)", "Spark (branch)", "DuckDB"],
        ["Spark (branch)", "DuckDB", "Spark (main)"],
        ["DuckDB", "Spark (main)", "Spark (branch)"],
    ]
    assert bench.rotated([], 3) == []


def test_a_process_runs_once_cold_then_warm(bench: ModuleType) -> None:
    assert [bench.mode(i, 1) for i in range(2)] == ["cold", "warm"]
    assert [bench.mode(i, 2) for i in range(3)] == ["cold", "warm 1", "warm 2"]
    assert [bench.goal(m) for m in ("cold", "warm", "warm 2")] == [4.0, 3.0, 3.0]


def test_runs_are_gathered_per_engine_and_mode_in_round_order(bench: ModuleType) -> None:
    run = bench.Run
    runs = [
        run("Spark (main)", 2, 0, 30.0, []),
        run("DuckDB", 1, 0, 6.0, []),
        run("DuckDB", 1, 1, 5.0, []),
        run("Spark (main)", 1, 0, 28.0, []),
        run("Spark (main)", 1, 1, 19.0, []),
        run("DuckDB", 2, 1, 5.5, []),
        run("DuckDB", 2, 0, 6.5, []),
        run("Spark (main)", 2, 1, 18.0, []),
    ]
    table = bench.summary(runs, ["DuckDB", "Spark (main)"], ["cold", "warm"])
    assert table == {
        ("DuckDB", "cold"): [6.0, 6.5],
        ("DuckDB", "warm"): [5.0, 5.5],
        ("Spark (main)", "cold"): [28.0, 30.0],
        ("Spark (main)", "warm"): [19.0, 18.0],
    }


def test_a_worker_result_crosses_processes_and_still_compares(bench: ModuleType) -> None:
    import datetime
    import json

    spark = [("ns0000", datetime.date(2026, 11, 1), 12, 0.1 + 0.2), ("ns0000-dr", datetime.date(2026, 11, 1), 3, None)]
    duck = [("ns0000", datetime.date(2026, 11, 1), 12, 0.3), ("ns0000-dr", datetime.date(2026, 11, 1), 3, None)]
    line = bench.RESULT + json.dumps({"run": 0, "seconds": 1.5, "rows": bench.plain(spark)})
    record = bench.parse_worker_line(line)
    assert record is not None and record["rows"][0][1] == "2026-11-01"
    assert bench.same(record["rows"], bench.plain(duck))
    assert not bench.same(record["rows"], bench.plain([duck[0], ("ns0000-dr", datetime.date(2026, 11, 2), 3, None)]))
    assert bench.first_difference(record["rows"], bench.plain(duck[:1])) == "2 rows against 1"
    assert bench.parse_worker_line("26/11/28 WARN NativeCodeLoader: ...") is None


@pytest.mark.parametrize(("text", "value"), [("10M", 10_000_000), ("100m", 100_000_000), ("1_000", 1000), ("5", 5)])
def test_counts_take_a_suffix(bench: ModuleType, text: str, value: int) -> None:
    assert bench.positive(text) == value


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--runs", "0"], "--runs: must be at least 1, not 0"),
        (["--rows", "ten"], "--rows: not a count: 'ten'"),
        (["--tree", "/nonexistent"], "--tree /nonexistent: no src/pairedbus/pipeline there"),
        (["--conf", "spark.executor.memory"], "--conf 'spark.executor.memory': expected KEY=VALUE"),
        (["--breakdown"], "--breakdown: only with --single-process"),
    ],
)
def test_a_bad_argument_is_one_line_naming_it_before_any_work(
    bench: ModuleType, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = bench.parser()
    with pytest.raises(SystemExit) as exit_:
        bench.checked(parser.parse_args(argv), parser)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_the_default_rounds_depend_on_the_mode(bench: ModuleType) -> None:
    parser = bench.parser()
    assert bench.checked(parser.parse_args([]), parser).runs == 5
    assert bench.checked(parser.parse_args(["--single-process"]), parser).runs == 3


def test_alternating_rounds_print_medians_and_ratios_and_check_every_run(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The workers replaced by their figures: (engine, round) -> cold and warm seconds.
    times = {
        ("DuckDB", 1): (6.0, 5.0),
        ("DuckDB", 2): (7.0, 6.0),
        ("DuckDB", 3): (6.5, 5.5),
        ("Spark", 1): (24.0, 15.0),
        ("Spark", 2): (30.0, 19.0),
        ("Spark", 3): (26.0, 17.0),
    }
    order: list[str] = []

    def run_worker(args: object, engine: ModuleType, round_: int, logs: Path) -> list[object]:
        kind = "DuckDB" if engine.kind == "duckdb" else "Spark"
        order.append(kind)
        rows = [["ns0000", "2026-11-01", 12]] if (kind, round_) != ("Spark", 3) else [["ns0000", "2026-11-01", 13]]
        # CPU: DuckDB's runs 4 s, Spark's 12 s cold, 8 s warm
        cpu = {("DuckDB", 0): 4.0, ("DuckDB", 1): 4.0, ("Spark", 0): 12.0 + round_, ("Spark", 1): 8.0}
        return [
            bench.Run(engine.label, round_, i, t, rows, {}, cpu[(kind, i)]) for i, t in enumerate(times[(kind, round_)])
        ]

    monkeypatch.setattr(bench, "prepare", lambda args, given: None)
    monkeypatch.setattr(bench, "run_worker", run_worker)
    parser = bench.parser()
    args = bench.checked(parser.parse_args(["--runs", "3", "--rows", "1K", "--dir", str(tmp_path)]), parser)
    assert bench.alternate(args) == 1  # Spark's third round returned another row
    out = capsys.readouterr().out
    assert order == ["DuckDB", "Spark", "Spark", "DuckDB", "DuckDB", "Spark"]
    assert "differs: Spark (" in out and "round 3 run 1: ['ns0000', '2026-11-01', 13] against" in out
    assert "all 12 runs agree with DuckDB's first: NO (2 differ)" in out
    assert "DuckDB cold: median 6.50s, spread 6.00-7.00s (runs 6.00, 7.00, 6.50)" in out
    spark = next(line for line in out.splitlines() if line.startswith("Spark (") and " warm: " in line)
    assert spark.endswith("warm: median 17.00s, spread 15.00-19.00s (runs 15.00, 19.00, 17.00)")
    assert "/DuckDB cold: 4.00x of medians (goal <= 4x): met as a median (within the spread)" in out
    assert "/DuckDB warm: 3.09x of medians (goal <= 3x): not met as a median (within the spread)" in out
    assert "/DuckDB cold CPU: 3.50x of medians; the spreads allow 3.25-3.75x" in out
    assert "/DuckDB warm CPU: 2.00x of medians; the spreads allow 2.00-2.00x" in out
    kept = json.loads((tmp_path / "logs" / "runs.json").read_text())
    assert [(r["seconds"], r["cpu"]) for r in kept][:2] == [(6.0, 4.0), (5.0, 4.0)]
