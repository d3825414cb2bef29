"""`benchmarks/audit_startup_bench.py`'s reading of Spark's event log; nothing here times anything."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.benchmarks.loading import load_benchmark


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("audit_startup_bench")


def job(job_id: int, start: int, end: int, description: str | None, stages: list[int]) -> list[dict[str, object]]:
    properties = {"spark.job.description": description} if description else {}
    return [
        {"Event": "SparkListenerJobStart", "Job ID": job_id, "Submission Time": start, "Stage IDs": stages,
         "Properties": properties},
        {"Event": "SparkListenerJobEnd", "Job ID": job_id, "Completion Time": end},
    ]  # fmt: skip


def stage_done(stage_id: int) -> dict[str, object]:
    return {"Event": "SparkListenerStageCompleted", "Stage Info": {"Stage ID": stage_id, "Stage Attempt ID": 0}}


def task(stage_id: int, shuffle_bytes: int) -> dict[str, object]:
    metrics = {"Shuffle Write Metrics": {"Shuffle Bytes Written": shuffle_bytes}}
    return {"Event": "SparkListenerTaskEnd", "Stage ID": stage_id, "Task Metrics": metrics}


def test_the_event_log_is_split_into_startup_jobs_gaps_and_steps(bench: ModuleType) -> None:
    events = [
        {"Event": "SparkListenerApplicationStart", "Timestamp": 1_000},
        *job(0, 5_000, 6_000, "pairedbus audit: read", [0]),
        stage_done(0),
        task(0, 0),
        # Two jobs that overlap (5.5 s in jobs between 7 and 12.5, not 7.5) and one whose stage was skipped.
        *job(1, 7_000, 12_000, "pairedbus audit: transform", [1, 2]),
        *job(2, 8_000, 12_500, "pairedbus audit: transform", [3]),
        stage_done(1),
        stage_done(3),
        task(1, 100),
        task(1, 50),
        task(3, 0),
        {"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart", "executionId": 0},
        *job(3, 13_000, 14_000, None, [4]),
        stage_done(4),
        {"Event": "SparkListenerApplicationEnd", "Timestamp": 15_000},
    ]
    summary = bench.summarise_event_log(events)
    assert (summary.jobs, summary.stages, summary.tasks, summary.sql_executions) == (4, 4, 4, 1)
    assert (summary.shuffle_stages, summary.shuffle_bytes) == (1, 150)
    assert summary.before_first_job_s == 4.0
    assert summary.in_jobs_s == 1.0 + 5.5 + 1.0
    assert summary.between_jobs_s == 1.0 + 0.5  # 6-7 and 12.5-13
    assert summary.after_last_job_s == 1.0
    assert summary.by_step == {
        "pairedbus audit: read": (1, 1.0),
        "pairedbus audit: transform": (2, 9.5),
        "": (1, 1.0),
    }


ORPHAN_CPU = """
import subprocess, sys
sys.path.insert(0, sys.argv[1])
import audit_startup_bench as bench
assert bench.become_subreaper()
before = bench.children_cpu()
# A child that leaves a CPU-burning grandchild behind and exits at once, as pyspark leaves its JVM.
burn = "import time\\nend = time.process_time() + 0.3\\nwhile time.process_time() < end: pass"
subprocess.run([sys.executable, "-c", f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {burn!r}])"])
print(bench.children_cpu() - before)
"""


def test_the_cpu_of_a_process_left_behind_is_counted(bench) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", ORPHAN_CPU, str(Path(bench.__file__).parent)], capture_output=True, text=True, check=True
    )
    assert float(done.stdout) >= 0.3  # the grandchild's CPU seconds, counted once it was reaped
