"""`benchmarks/audit_bench.py`'s split of the JVM's CPU by thread role; nothing here times anything."""

from __future__ import annotations

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
