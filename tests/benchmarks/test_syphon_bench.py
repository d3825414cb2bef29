"""`benchmarks/syphon_bench.py` runs end to end on tiny backlogs (so it cannot rot); nothing here times anything."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.benchmarks.loading import load_benchmark


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("syphon_bench")


def test_quick_run_drains_every_cell_with_every_mover_and_prints_the_table(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    table = bench.main(["--quick", "--latency", "0.002"])

    # 256 B and 200 KB, link off and on, 1 and 3 queues; the 200 KB backlogs hold a tenth.
    assert [(c.size, c.link, c.queues, c.messages) for c in table] == [
        (size, link, queues, 60 if size == 256 else 6)
        for size in (256, 200 * 1024)
        for link in (False, True)
        for queues in (1, 3)
    ]
    for cell, results in table.items():
        assert list(results) == ["syphon", "pipelined", "sequential"]
        assert all(r.messages == cell.messages and r.rate > 0 and r.cpu_us > 0 for r in results.values())
    out = capsys.readouterr().out
    assert "end to end, msg/s" in out and "ratio = syphon / pipelined" in out
    assert "cells; lowest ratio" in out
    assert "steady state (10-90 % delivered)" in out
    assert "1 queues, 60 x 256 B" in out and "3 queues, 60 x 256 B" in out and "µs CPU/msg" in out
    assert "load average" in out


def test_the_sequential_mover_drains_a_capped_backlog_and_the_table_marks_it(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = "--counts 40 --queues 2 --sizes 256 --links off --rounds 1 --sequential-cap 10 --latency 0.002 --no-hop-cpu"
    table = bench.main(argv.split())

    (results,) = table.values()
    assert results["syphon"].messages == results["pipelined"].messages == 40
    assert results["sequential"].messages == 10
    assert "* drained a capped backlog" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("count", "rounds"), [(100, 3), (1_000, 3), (1_001, 2), (10_000, 2), (10_001, 1), (100_000, 1)]
)
def test_short_runs_get_more_rounds_than_long_ones(bench: ModuleType, count: int, rounds: int) -> None:
    assert bench.rounds_for(count, 3) == rounds
    assert bench.rounds_for(count, 1) == 1


def test_the_ceiling_is_the_bound_over_three_round_trips_or_the_link(bench: ModuleType) -> None:
    # 2,000 slots over 3 x 70 ms; 200 KB: the byte bound (64 MiB / 200 KB = 327 slots), and with the
    # link model its 1 Gbit/s (about 592 messages a second of 200 KB plus a 50 µs frame).
    assert bench.ceiling(256, 0.07, None) == pytest.approx(9_524, abs=1)
    assert bench.ceiling(204_800, 0.07, None) == pytest.approx(1_557, abs=1)
    assert bench.ceiling(204_800, 0.07, bench.LINK) == pytest.approx(592, abs=2)


@pytest.mark.parametrize("argv", [["--counts", "0"], ["--queues", "0"], ["--sequential-cap", "0"], ["--links", "x"]])
def test_a_bad_argument_exits_2_before_any_work(bench: ModuleType, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        bench.main(argv)
    assert exit_info.value.code == 2
