"""A test that breaks the Spark suite's session costs the next test a new session, not its result: a pytest-timeout
inside a Spark job, a dead JVM, a SparkContext stopped in the JVM. Run in a pytest of its own (a subprocess) with the
suite's fixtures, so that the breakage stays there. The tests that break the session by design end as 1 error (the
start cut short) and 1 failure (the job interrupted); every test after them passes.

On the session-scoped fixture before the keeper, the same tests give: the test after the timeout hangs on the
interrupted job's connection until its own timeout, and every test after the dead JVM fails with
`ConnectionRefusedError`; with the timeout on the fixture's own start, every test errors with that one timeout."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.load import PIN, guard

pytestmark = [pytest.mark.spark, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]

CONFTEST = """
from tests.load import pytest_timeout_set_timer  # noqa: F401
from tests.pipeline.spark_keeper import pytest_runtest_makereport, spark, spark_keeper  # noqa: F401
"""

BREAKERS = """
import pytest


def count(spark):
    return spark.range(7).count()


@pytest.mark.timeout(1)
def test_0_a_timeout_fires_while_the_session_starts(spark):
    pass


def test_0b_the_next_test_starts_it_again(spark, spark_keeper):
    assert count(spark) == 7
    assert len(spark_keeper.killed_at_start) >= 1  # the JVM the cut-short start had launched


@pytest.mark.timeout(4)
def test_1_a_timeout_fires_inside_a_spark_job(spark):
    # Far longer than the timeout on both cores: the interrupted call's answer never comes on its connection.
    spark.range(0, 10**13, numPartitions=2).selectExpr("max(id % 7)").collect()


def test_2_after_the_timeout(spark, spark_keeper):
    assert count(spark) == 7
    assert spark.sparkContext.statusTracker().getActiveJobsIds() == []  # the interrupted job was cancelled
    assert (spark_keeper.started, spark_keeper.replaced) == (1, [])  # and the session kept


def test_3_the_jvm_dies(spark):
    spark.sparkContext._gateway.proc.kill()
    spark.sparkContext._gateway.proc.wait()


def test_4_after_the_jvm_died(spark, spark_keeper):
    assert count(spark) == 7
    assert spark_keeper.replaced[-1].startswith("its JVM exited")


def test_5_the_context_is_stopped_in_the_jvm(spark):
    spark.sparkContext._jsc.sc().stop()


def test_6_after_the_context_stopped(spark, spark_keeper):
    assert count(spark) == 7
    assert spark_keeper.replaced == ["its JVM exited (status -9)", "its SparkContext was stopped in the JVM"]
    assert spark_keeper.started == 3
"""


def test_a_test_that_breaks_the_session_does_not_break_the_next(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_breakers.py").write_text(textwrap.dedent(BREAKERS))
    # The breakers' limits (1 s, 4 s) must fire where they are written, not stretched by the load the JVM's own start
    # adds: the factor is pinned to 1 inside, and the default limit of the tests around them stretched here instead.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)]), PIN: "1"}
    options = ["-p", "no:cacheprovider", "-p", "no:xdist", "-q", "--rootdir", str(tmp_path)]
    options += ["-o", f"timeout={guard(300):.0f}"]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", *options, str(tmp_path / "test_breakers.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=guard(600),
        check=False,
    )
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr
    assert summary.startswith("1 failed, 6 passed, 1 error"), run.stdout[-4000:]
    assert "ERROR test_breakers.py::test_0_a_timeout_fires_while_the_session_starts" in run.stdout
    assert "FAILED test_breakers.py::test_1_a_timeout_fires_inside_a_spark_job" in run.stdout
    assert "Failed: Timeout" in run.stdout
