from __future__ import annotations

import os

import pytest

from pairedbus.pipeline.spark_session import _local_cores


@pytest.mark.parametrize(
    ("master", "cores"),
    [("local[3]", 3), ("local[*]", os.cpu_count() or 2), ("local", os.cpu_count() or 2), ("local[2,4]", 2)],
)
def test_local_masters_are_tuned_for_their_cores(master: str, cores: int) -> None:
    assert _local_cores(master) == cores


@pytest.mark.parametrize("master", ["yarn", "spark://head:7077", "k8s://https://k8s:443"])
def test_cluster_masters_keep_the_cluster_defaults(master: str) -> None:
    assert _local_cores(master) is None


@pytest.mark.spark
def test_spark_session_fixture_runs_in_utc(spark) -> None:
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    assert spark.conf.get("spark.ui.enabled") == "false"


@pytest.mark.spark
def test_plans_are_built_without_pysparks_per_call_call_site_capture(spark) -> None:
    # Ten Py4J round trips per DataFrame or column function otherwise (3,200 of 5,200 at 1M points).
    assert spark.conf.get("spark.python.sql.dataFrameDebugging.enabled") == "false"
