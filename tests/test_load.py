"""tests/load.py: the hang guards follow a load that has just arrived (the kernel's averages lag it by a minute), and
pytest-timeout's limit follows a load that rises while a test runs."""

from __future__ import annotations

import ast
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import load
from tests.load import MAX_FACTOR, PIN, RECENT_S, RecentLoad, guard
from tests.parsing import parse_source

REPO = Path(__file__).resolve().parents[1]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_recent_load_starts_at_the_run_queue_and_follows_it_within_seconds() -> None:
    queue = [1.0]
    clock = Clock()
    recent = RecentLoad(sample=lambda: queue[0], clock=clock)
    recent.observe()
    assert recent._value == 1.0
    queue[0] = 9.0
    for _ in range(int(RECENT_S)):  # one time constant of samples a second apart: 63 % of the way
        clock.now += 1.0
        recent.observe()
    assert recent._value == pytest.approx(1.0 + 8.0 * (1 - math.exp(-1)), rel=0.01)


def test_a_recent_load_the_kernels_averages_have_not_caught_up_with_stretches_the_guards(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Two copies of the suite started on an idle machine: the 1-minute average still says 0.1 while the run queue
    # holds 6 tasks per core. Before, the factor was 1.
    cores = os.cpu_count() or 1
    monkeypatch.delenv(PIN, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.1, 0.1, 0.1))
    monkeypatch.setattr(load.RECENT, "value", lambda: 6.0 * cores)
    assert guard(10) == pytest.approx(60.0)
    monkeypatch.setattr(load.RECENT, "value", lambda: 100.0 * cores)
    assert guard(10) == pytest.approx(10 * MAX_FACTOR)  # a hang still ends


def test_the_factor_can_be_pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PIN, "3")
    assert guard(2) == 6.0
    monkeypatch.setenv(PIN, "0.2")
    assert guard(2) == 2.0  # never below the idle bound


def test_the_run_queue_is_read_without_the_reader() -> None:
    queue = load.runnable()
    assert queue is None or queue >= 0


INNER = """
import ast
import math
import os
import time

import pytest


@pytest.mark.timeout(0.5)
def test_the_load_rises_while_it_runs(monkeypatch):
    monkeypatch.setenv("PAIREDBUS_LOAD_FACTOR", "8")  # at the first expiry the limit is 4 s: the test's 1 s fits
    time.sleep(1.0)


@pytest.mark.timeout(0.5)
def test_a_hang_still_ends(monkeypatch):
    monkeypatch.setenv("PAIREDBUS_LOAD_FACTOR", "2")  # the limit becomes 1 s, and then it fails
    while True:
        time.sleep(0.05)
"""


def test_pytest_timeouts_limit_is_stretched_again_when_the_load_rose_during_the_test(tmp_path: Path) -> None:
    # Before, the limit was fixed when the test started (0.5 s at factor 1): the first test failed too.
    (tmp_path / "conftest.py").write_text("from tests.load import pytest_timeout_set_timer  # noqa: F401\n")
    (tmp_path / "test_inner.py").write_text(INNER)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)]), PIN: "1"}
    options = ["-p", "no:cacheprovider", "-p", "no:xdist", "-q", "--rootdir", str(tmp_path)]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", *options, str(tmp_path / "test_inner.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=guard(120),
        check=False,
    )
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr
    assert summary.startswith("1 failed, 1 passed"), run.stdout[-3000:] + run.stderr[-2000:]
    assert "FAILED test_inner.py::test_a_hang_still_ends - Failed: Timeout (>1.0s)" in run.stdout, run.stdout[-3000:]


#: Calls whose `timeout=` keyword bounds a wait on a process, a thread or a socket.
WAITS = frozenset({"run", "Popen", "communicate", "wait", "join", "create_connection", "urlopen", "check_output"})


def _unstretched_bounds(source: str) -> list[tuple[int, str, float]]:
    """(line, call, seconds) of each wait in `source` bounded by a number of 1 s or more written as it is: an
    `asyncio.wait_for`/`asyncio.timeout` bound, or the `timeout=` of a WAITS call. Shorter bounds are the behaviour
    under test (an operation's `timeout=0.01` that must expire); `pytest.mark.timeout` is stretched by the hook."""
    found = []
    for node in ast.walk(parse_source(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        on_asyncio = isinstance(func, ast.Attribute) and getattr(func.value, "id", "") == "asyncio"
        bounds = [k.value for k in node.keywords if k.arg == "timeout" and name in WAITS]
        if on_asyncio and name == "wait_for" and len(node.args) > 1:
            bounds.append(node.args[1])
        if on_asyncio and name == "timeout" and node.args:
            bounds.append(node.args[0])
        for bound in bounds:
            if isinstance(bound, ast.Constant) and isinstance(bound.value, int | float) and bound.value >= 1:
                found.append((node.lineno, name, bound.value))
    return found


def test_the_scan_finds_a_bound_written_as_a_number() -> None:
    source = (
        "asyncio.wait_for(x, 60)\nasyncio.timeout(30)\nsubprocess.run(c, timeout=600)\n"
        "asyncio.wait_for(x, guard(60))\nsubprocess.run(c, timeout=guard(600))\nsender.send(m, timeout=0.01)\n"
        "sdk.wait_for(x, 5)\n"
    )
    assert _unstretched_bounds(source) == [(1, "wait_for", 60), (2, "timeout", 30), (3, "run", 600)]


def test_every_hang_guard_in_the_tests_stretches_with_the_load() -> None:
    # Before: the syphon's drains over the wire (60-120 s), the doc examples' pytest (600 s), the node client's socket,
    # a link test's 30 s, among 8 bounds a busy machine could outlast.
    found = [
        f"{path.relative_to(REPO)}:{line}: {call} {seconds}"
        for path in sorted((REPO / "tests").rglob("*.py"))
        for line, call, seconds in _unstretched_bounds(path.read_text(encoding="utf-8"))
    ]
    assert not found, "wrap these in tests.load.guard(): " + "; ".join(found)
