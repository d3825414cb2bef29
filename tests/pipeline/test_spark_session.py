from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pairedbus.pipeline.spark_session import (
    SHORT_RUN_JAVA_OPTIONS,
    SMALL_ESTATE_BYTES,
    THROUGHPUT_JAVA_OPTIONS,
    SharedClasses,
    _local_cores,
    cache_directory,
    driver_java_options,
    shared_classes,
    small_estate_conf,
)


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


def test_a_small_estate_is_planned_once_on_one_partition() -> None:
    # The sample estate (218 KB): adaptive execution would run each shuffle stage as a job of its own.
    small = small_estate_conf(218 * 1024)
    assert small["spark.sql.adaptive.enabled"] == "false"
    assert small["spark.sql.shuffle.partitions"] == "1"
    assert small["spark.sql.autoBroadcastJoinThreshold"] == "-1"  # a broadcast is a job of its own
    assert small_estate_conf(SMALL_ESTATE_BYTES) != {}


@pytest.mark.parametrize("size", [SMALL_ESTATE_BYTES + 1, 100 * 1024 * 1024, 10 * 1024**3])
def test_a_larger_estate_keeps_the_sessions_adaptive_plan(size: int) -> None:
    # The 1M, 10M and 100M benchmarks' inputs: the session's settings (AQE on) stand.
    assert small_estate_conf(size) == {}


def test_a_small_estates_jvm_stops_at_the_quick_compiler() -> None:
    # The sample audit is over in a minute: C2's compilations cost more CPU than they return.
    assert driver_java_options(218 * 1024) == SHORT_RUN_JAVA_OPTIONS
    assert driver_java_options(SMALL_ESTATE_BYTES) == SHORT_RUN_JAVA_OPTIONS
    assert "-XX:TieredStopAtLevel=1" in SHORT_RUN_JAVA_OPTIONS and "-XX:+UseSerialGC" in SHORT_RUN_JAVA_OPTIONS


@pytest.mark.parametrize("size", [SMALL_ESTATE_BYTES + 1, 10 * 1024**3, None])
def test_a_larger_or_unlisted_estates_jvm_keeps_the_throughput_settings(size: int | None) -> None:
    # The 1M-100M inputs run long enough for C2; a remote input's size is not known before the JVM starts.
    assert driver_java_options(size) == THROUGHPUT_JAVA_OPTIONS == ("-XX:+UseParallelGC",)


def test_the_class_archive_is_named_by_java_and_spark_and_written_once(tmp_path: Path) -> None:
    first = shared_classes(tmp_path)
    assert first is not None and first.writing is not None  # no archive yet: this run writes one
    assert first.java_options[0] == f"-XX:ArchiveClassesAtExit={first.writing}"
    assert first.writing.parent == first.archive.parent == tmp_path and first.writing != first.archive
    first.archive.write_bytes(b"an archive")
    again = shared_classes(tmp_path)
    assert again == SharedClasses(first.archive, None)
    assert again.java_options == (f"-XX:SharedArchiveFile={first.archive}", "-Xshare:auto")


def test_the_cache_is_never_the_repository(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PAIREDBUS_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_directory() == tmp_path / "pairedbus"
    monkeypatch.setenv("PAIREDBUS_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert cache_directory() == tmp_path / "elsewhere"


CORRUPT_ARCHIVE_SESSION = """
import sys
from pathlib import Path
from pairedbus.pipeline.spark_session import SharedClasses, build_session
spark = build_session("local[1]", shared_classes=SharedClasses(Path(sys.argv[1]), None))
print(spark.range(3).count())
spark.stop()
"""


@pytest.mark.spark
@pytest.mark.slow
def test_a_corrupt_class_archive_never_fails_the_session(tmp_path: Path) -> None:
    archive = tmp_path / "spark-0000.jsa"
    archive.write_bytes(b"\x00" * 4096)  # not an archive: the JVM must run without it (-Xshare:auto)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    done = subprocess.run(
        [sys.executable, "-c", CORRUPT_ARCHIVE_SESSION, str(archive)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "3"
