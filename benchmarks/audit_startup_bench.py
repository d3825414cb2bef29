"""Benchmark: `pairedbus audit` of the sample estate against a bare Spark session, side by side.

Issue 38 item 1: the sample audit from the command line within 2x a bare `local[2]` SparkSession
that starts, counts one row and stops. Both run from a fresh process, alternating (bare, audit,
bare, audit, ...), so that the machine's load moves both alike; the ratio is the median audit time
over the median bare time. `uptime`'s load is printed before and after: on a shared machine only a
ratio measured in one run means anything.

`--tree DIR` (repeatable) runs the audit from another checkout's `src/` as well (e.g. `main`),
in the same alternation; `--event-log DIR` turns on Spark's event log in every run and prints, for
each, what Spark's own listener saw: jobs, stages, tasks, stages that wrote a shuffle, the time
before the first job, in jobs, and between them, per audit step (the job descriptions `run_audit`
sets: read, transform, write, render).

    .venv/bin/python benchmarks/audit_startup_bench.py --runs 3
    .venv/bin/python benchmarks/audit_startup_bench.py --runs 3 --tree /path/to/main --event-log /tmp/ev
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "estate"

#: The bare session: what every Spark program pays before its first result (issue 38's yardstick).
#: It prints its own split: pyspark imported, the JVM and SparkContext up, the session, the first job.
BARE = """
import json, sys, time
t0 = time.perf_counter()
from pyspark.sql import SparkSession
t1 = time.perf_counter()
from pyspark import SparkContext
sc = SparkContext(master=sys.argv[1], appName="bare")
t2 = time.perf_counter()
spark = SparkSession.builder.getOrCreate()
t3 = time.perf_counter()
assert spark.range(1).count() == 1
t4 = time.perf_counter()
spark.stop()
t5 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "jvm_and_context": t2 - t1, "session": t3 - t2, "first_job": t4 - t3, "stop": t5 - t4}))
"""


#: prctl(2)'s PR_SET_CHILD_SUBREAPER: the JVM that pyspark starts outlives its Python process for a moment;
#: as a subreaper this process inherits it and counts its CPU when it is reaped.
PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    try:
        return bool(ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):  # not Linux
        return False


def children_cpu() -> float:
    """CPU seconds (user + system) of every child reaped so far, the orphaned JVMs included."""
    while True:  # reap what the last run left (its JVM), waiting for it to end
        try:
            os.wait()
        except ChildProcessError:
            break
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def spark_args(event_log: Path | None) -> dict[str, str]:
    if event_log is None:
        return {}
    event_log.mkdir(parents=True, exist_ok=True)
    conf = {
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": event_log.resolve().as_uri(),
        "spark.eventLog.compress": "false",
        "spark.eventLog.rolling.enabled": "false",
    }
    return {"PYSPARK_SUBMIT_ARGS": " ".join(f"--conf {k}={v}" for k, v in conf.items()) + " pyspark-shell"}


def newest_log(directory: Path, before: set[Path]) -> Path | None:
    new = [p for p in directory.iterdir() if p not in before and not p.name.startswith(".")]
    return max(new, key=lambda p: p.stat().st_mtime) if new else None


def run_bare(master: str, env: dict[str, str]) -> tuple[float, float, dict[str, float]]:
    """(wall seconds, CPU seconds of the Python process and its JVM, the session's own split)."""
    cpu = children_cpu()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", BARE, master], env=env, capture_output=True, text=True, check=True, cwd=ROOT
    )
    wall = time.perf_counter() - start
    return wall, children_cpu() - cpu, json.loads(done.stdout.strip().splitlines()[-1])


def run_audit(tree: Path, out: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the audit's Python process and its JVM)."""
    shutil.rmtree(out, ignore_errors=True)
    env = {**env, "PYTHONPATH": str(tree / "src")}
    sample = tree / "samples" / "estate"
    command = [sys.executable, "-m", "pairedbus", "audit", "--progress", "never", "--out", str(out)]
    command += ["--inventory", str(sample / "inventory"), "--metrics", str(sample / "metrics")]
    command += ["--costs", str(sample / "costs")]
    cpu = children_cpu()
    start = time.perf_counter()
    subprocess.run(command, env=env, capture_output=True, text=True, check=True, cwd=tree)
    wall = time.perf_counter() - start
    return wall, children_cpu() - cpu


# --- Spark's event log ---------------------------------------------------------------------------


@dataclass
class Job:
    id: int
    start: int  # ms since the epoch
    end: int = 0
    description: str = ""
    stages: list[int] = field(default_factory=list)


@dataclass
class EventLogSummary:
    jobs: int
    stages: int  # stages that ran (not skipped)
    tasks: int
    shuffle_stages: int  # stages that wrote shuffle output
    shuffle_bytes: int
    sql_executions: int
    before_first_job_s: float  # from the application's start
    in_jobs_s: float  # the union of the jobs' intervals
    between_jobs_s: float  # from the first job's start to the last one's end, outside any job
    after_last_job_s: float  # to the application's end
    by_step: dict[str, tuple[int, float]]  # job description -> jobs, seconds in them

    def lines(self) -> Iterator[str]:
        yield (
            f"  {self.jobs} jobs, {self.stages} stages run, {self.tasks} tasks, {self.shuffle_stages} stages "
            f"wrote a shuffle ({self.shuffle_bytes:,} B), {self.sql_executions} SQL executions"
        )
        yield (
            f"  before the first job {self.before_first_job_s:.2f} s, in jobs {self.in_jobs_s:.2f} s, "
            f"between jobs {self.between_jobs_s:.2f} s, after the last {self.after_last_job_s:.2f} s"
        )
        for step, (jobs, seconds) in self.by_step.items():
            yield f"    {step or '(no description)'}: {jobs} jobs, {seconds:.2f} s in jobs"


def summarise_event_log(events: Iterable[dict[str, object]]) -> EventLogSummary:
    """What Spark's listener recorded (one JSON object a line, as `spark.eventLog` writes them)."""
    jobs: dict[int, Job] = {}
    ran: set[tuple[int, int]] = set()
    shuffle_stages: set[int] = set()
    shuffle_bytes = tasks = sql = 0
    app_start = app_end = 0
    for event in events:
        kind = str(event["Event"])
        if kind == "SparkListenerApplicationStart":
            app_start = int(event["Timestamp"])  # type: ignore[call-overload]
        elif kind == "SparkListenerApplicationEnd":
            app_end = int(event["Timestamp"])  # type: ignore[call-overload]
        elif kind == "SparkListenerJobStart":
            properties = event.get("Properties") or {}
            assert isinstance(properties, dict)
            job = Job(int(event["Job ID"]), int(event["Submission Time"]))  # type: ignore[call-overload]
            job.description = str(properties.get("spark.job.description", ""))
            job.stages = list(event["Stage IDs"])  # type: ignore[call-overload]
            jobs[job.id] = job
        elif kind == "SparkListenerJobEnd":
            jobs[int(event["Job ID"])].end = int(event["Completion Time"])  # type: ignore[call-overload]
        elif kind == "SparkListenerStageCompleted":
            info = event["Stage Info"]
            assert isinstance(info, dict)
            ran.add((int(info["Stage ID"]), int(info["Stage Attempt ID"])))
        elif kind == "SparkListenerTaskEnd":
            tasks += 1
            metrics = event.get("Task Metrics") or {}
            assert isinstance(metrics, dict)
            written = int((metrics.get("Shuffle Write Metrics") or {}).get("Shuffle Bytes Written", 0))
            if written:
                shuffle_stages.add(int(event["Stage ID"]))  # type: ignore[call-overload]
                shuffle_bytes += written
        elif kind.endswith("SparkListenerSQLExecutionStart"):
            sql += 1
    spans = sorted((j.start, j.end) for j in jobs.values() if j.end)  # a log cut short: its unfinished jobs
    in_jobs, covered_to = 0, 0
    for start, end in spans:  # the union of overlapping intervals
        start = max(start, covered_to)
        if end > start:
            in_jobs += end - start
        covered_to = max(covered_to, end)
    first, last = (spans[0][0], max(e for _, e in spans)) if spans else (app_start, app_start)
    by_step: dict[str, tuple[int, float]] = {}
    for job in sorted((j for j in jobs.values() if j.end), key=lambda j: j.id):
        count, seconds = by_step.get(job.description, (0, 0.0))
        by_step[job.description] = (count + 1, seconds + (job.end - job.start) / 1000)
    return EventLogSummary(
        jobs=len(jobs),
        stages=len(ran),
        tasks=tasks,
        shuffle_stages=len(shuffle_stages),
        shuffle_bytes=shuffle_bytes,
        sql_executions=sql,
        before_first_job_s=(first - app_start) / 1000,
        in_jobs_s=in_jobs / 1000,
        between_jobs_s=(last - first - in_jobs) / 1000,
        after_last_job_s=max(0, app_end - last) / 1000,
        by_step=by_step,
    )


def read_event_log(path: Path) -> EventLogSummary:
    with path.open(encoding="utf-8") as lines:
        return summarise_event_log(json.loads(line) for line in lines if line.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each, alternating (median of these)")
    parser.add_argument("--master", default="local[2]", help="the bare session's master (the audit's is local[*])")
    parser.add_argument("--tree", type=Path, action="append", default=[], help="another checkout to audit from too")
    parser.add_argument("--event-log", type=Path, default=None, help="write and summarise Spark's event logs here")
    args = parser.parse_args()

    trees = [ROOT, *[t.resolve() for t in args.tree]]
    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_SUBMIT_ARGS"}
    times: dict[str, list[float]] = {"bare": [], **{str(t): [] for t in trees}}
    cpus: dict[str, list[float]] = {"bare": [], **{str(t): [] for t in trees}}
    # CPU seconds move less with the machine's load than wall time: printed beside it.
    counted = become_subreaper()
    print(f"load before: {load()} ({os.cpu_count()} cores); JVM CPU counted: {counted}", flush=True)
    with tempfile.TemporaryDirectory(prefix="pairedbus-startup-") as scratch:
        for run in range(1, args.runs + 1):
            logs = args.event_log / f"run{run}" if args.event_log else None
            seen = set(logs.iterdir()) if logs and logs.exists() else set()
            wall, cpu, split = run_bare(args.master, {**env, **spark_args(logs)})
            times["bare"].append(wall)
            cpus["bare"].append(cpu)
            parts = ", ".join(f"{k} {v:.2f}" for k, v in split.items())
            print(f"run {run} bare: {wall:.2f} s, CPU {cpu:.2f} s ({parts}) load {load()}", flush=True)
            if logs and (path := newest_log(logs, seen)):
                print("\n".join(read_event_log(path).lines()))
                seen.add(path)
            for tree in trees:
                wall, cpu = run_audit(tree, Path(scratch) / "out", {**env, **spark_args(logs)})
                times[str(tree)].append(wall)
                cpus[str(tree)].append(cpu)
                print(f"run {run} audit {tree}: {wall:.2f} s, CPU {cpu:.2f} s load {load()}", flush=True)
                if logs and (path := newest_log(logs, seen)):
                    print("\n".join(read_event_log(path).lines()))
                    seen.add(path)
    bare, bare_cpu = statistics.median(times["bare"]), statistics.median(cpus["bare"])
    print(f"load after: {load()}")
    print(
        f"bare session: median {bare:.2f} s of {', '.join(f'{t:.2f}' for t in times['bare'])}; "
        f"CPU median {bare_cpu:.2f} s"
    )
    for tree in trees:
        median, cpu = statistics.median(times[str(tree)]), statistics.median(cpus[str(tree)])
        spread = ", ".join(f"{t:.2f}" for t in times[str(tree)])
        print(
            f"audit {tree}: median {median:.2f} s of {spread}; ratio to the bare session {median / bare:.2f}x; "
            f"CPU median {cpu:.2f} s, {cpu / bare_cpu:.2f}x"
        )


if __name__ == "__main__":
    main()
