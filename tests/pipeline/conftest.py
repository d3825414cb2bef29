"""One local SparkSession for every pipeline test (tests/pipeline/spark_keeper.py: checked before each test, rebuilt
when a test broke it), and small builders of input files."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.azure_monitor import SUBSCRIPTION, ns_id
from tests.pipeline.spark_keeper import pytest_runtest_makereport, spark, spark_keeper

__all__ = ["SUBSCRIPTION", "ns_id", "pytest_runtest_makereport", "spark", "spark_keeper"]

# Every JVM a test starts (the Spark suite's session fixture, or a CLI test's audit) gets 4 GiB: Spark's
# default 1 GiB driver heap ran out (GC overhead limit exceeded) late in the full suite. The machine has 24 GiB.
# Spark's launcher reads SPARK_DRIVER_MEMORY when no spark.driver.memory is set.
os.environ.setdefault("SPARK_DRIVER_MEMORY", "4g")


@pytest.fixture
def write_lines(tmp_path: Path) -> Callable[[str, Sequence[Any]], Path]:
    """Write records (dicts become JSON, strings go as they are) as a JSON Lines file; returns its dir."""

    def write(name: str, records: Sequence[Any]) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
        return path.parent

    return write
