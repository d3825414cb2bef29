"""Unreadable input files are refused by name before Spark reads them, and Spark's errors become one line."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from pairedbus.pipeline.sources import (
    REFUSED_BAD_GZIP,
    REFUSED_NOT_PARQUET,
    first_line,
    is_spark_error,
    list_local,
    unreadable_reason,
)


def test_a_file_named_parquet_without_the_parquet_magic_is_refused(tmp_path: Path) -> None:
    (tmp_path / "garbage.parquet").write_bytes(b"PAR1 and then no footer at all")
    (tmp_path / "tiny.parquet").write_bytes(b"PAR1PAR1")  # too short for a footer length
    files = list_local(str(tmp_path), "costs", probe=True)
    assert files.refused == {
        str((tmp_path / "garbage.parquet").resolve()): REFUSED_NOT_PARQUET,
        str((tmp_path / "tiny.parquet").resolve()): REFUSED_NOT_PARQUET,
    }
    assert files.readable == 0


def test_a_gzip_stream_that_does_not_decompress_is_refused(tmp_path: Path) -> None:
    good = gzip.compress(b'{"id": "x"}\n' * 1000)
    (tmp_path / "cut.jsonl.gz").write_bytes(good[: len(good) // 2])
    (tmp_path / "good.jsonl.gz").write_bytes(good)
    (tmp_path / "plain.csv.gz").write_bytes(b"not gzip at all")
    files = list_local(str(tmp_path), "inventory", probe=True)
    assert sorted(Path(u).name for u in files.refused) == ["cut.jsonl.gz", "plain.csv.gz"]
    assert set(files.refused.values()) == {REFUSED_BAD_GZIP}
    assert [Path(u).name for u in files.by_format["jsonl"]] == ["good.jsonl.gz"]


def test_a_sound_parquet_header_and_tail_pass_the_cheap_probe(tmp_path: Path) -> None:
    path = tmp_path / "a.parquet"
    path.write_bytes(b"PAR1" + b"\x00" * 16 + (8).to_bytes(4, "little") + b"PAR1")
    assert unreadable_reason(path, "parquet") is None


def test_listing_without_the_probe_reads_no_file(tmp_path: Path) -> None:
    (tmp_path / "garbage.parquet").write_bytes(b"garbage")
    assert list_local(str(tmp_path), "costs").refused == {}


PY4J_MESSAGE = (
    "An error occurred while calling o52.parquet.\n"
    ": org.apache.spark.SparkException: [CANNOT_READ_FILE_FOOTER] Could not read footer for file: file:/d/x.parquet.\n"
    "\tat org.apache.spark.sql.errors.QueryExecutionErrors$.cannotReadFooterForFileError(QueryExecutionErrors.scala:1)\n"
    "\tat org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat$.readParquetFootersInParallel(x:2)\n"
)


def test_a_spark_error_is_one_line_without_the_java_stack() -> None:
    line = first_line(RuntimeError(PY4J_MESSAGE))
    assert line == (
        "org.apache.spark.SparkException: [CANNOT_READ_FILE_FOOTER] Could not read footer for file: file:/d/x.parquet."
    )
    assert "\n" not in line and "\tat" not in line


@pytest.mark.parametrize(("module", "expected"), [("py4j.protocol", True), ("pyspark.errors", True), ("json", False)])
def test_errors_from_spark_or_py4j_are_told_apart(module: str, expected: bool) -> None:
    error = type("SomeError", (Exception,), {"__module__": module})
    assert is_spark_error(error("x")) is expected
