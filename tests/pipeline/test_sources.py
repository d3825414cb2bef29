"""Unreadable input files are refused by name before Spark reads them, and Spark's errors become one line."""

from __future__ import annotations

import csv
import gzip
import json
import random
from pathlib import Path
from typing import cast

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from pairedbus.pipeline.focus import read_focus
from pairedbus.pipeline.sources import (
    FORMAT_CSV,
    FORMAT_DOCUMENT,
    FORMAT_LINES,
    REFUSED_BAD_GZIP,
    REFUSED_MISSING,
    REFUSED_NOT_PARQUET,
    REFUSED_RESERVED,
    REFUSED_UNPARSABLE,
    REFUSED_WRONG_TYPE,
    RESERVED_COLUMNS,
    SAMPLE_BYTES,
    columns_reason,
    first_line,
    input_bytes,
    is_spark_error,
    list_local,
    local_input_bytes,
    read_head,
    readable_as,
    same_file,
    sample_reason,
    unparsable_reason,
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


def test_the_input_size_is_every_file_under_the_directories_before_spark_reads(tmp_path: Path) -> None:
    (tmp_path / "inventory" / "nested").mkdir(parents=True)
    (tmp_path / "inventory" / "a.jsonl").write_bytes(b"x" * 100)
    (tmp_path / "inventory" / "nested" / "b.csv").write_bytes(b"x" * 20)
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics" / "c.json").write_bytes(b"x" * 3)
    directories = [str(tmp_path / "inventory"), (tmp_path / "metrics").as_uri()]
    assert input_bytes(cast(SparkSession, None), directories) == 123  # local directories need no session


def test_the_input_size_before_the_jvm_starts_is_known_for_local_directories_only(tmp_path: Path) -> None:
    (tmp_path / "inventory").mkdir()
    (tmp_path / "inventory" / "a.jsonl").write_bytes(b"x" * 100)
    assert local_input_bytes([str(tmp_path / "inventory"), (tmp_path / "inventory").as_uri()]) == 200
    # Hadoop lists a remote input, once the JVM is up: its size is not known before.
    assert local_input_bytes([str(tmp_path / "inventory"), "abfss://estate@account.dfs.core.windows.net/m"]) is None


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


def garbage(size: int, seed: int = 35) -> bytes:
    """Random bytes, the same every run."""
    return random.Random(seed).randbytes(size)


COLUMNS: dict[str, DataType] = {"id": StringType(), "count": LongType(), "cost": DoubleType(), "on": BooleanType()}


def schema(**types: DataType) -> StructType:
    return StructType([StructField(name, dtype) for name, dtype in types.items()])


@pytest.mark.parametrize("name", [*RESERVED_COLUMNS, "_METADATA", "_Corrupt_Record"])
def test_a_column_name_spark_reserves_is_refused_in_any_case(name: str) -> None:
    reason = columns_reason(schema(id=StringType(), **{name: StringType()}), COLUMNS, ("id",), typed=False)
    assert reason is not None and reason.startswith(REFUSED_RESERVED) and name in reason


@pytest.mark.parametrize(
    ("column", "dtype"),
    [
        ("count", StructType([StructField("v", LongType())])),  # an object
        ("cost", ArrayType(DoubleType())),  # a list
        ("cost", MapType(StringType(), DoubleType())),
        ("id", BinaryType()),  # bytes that need not be UTF-8
        ("id", LongType()),  # a number for text
        ("count", StringType()),  # text for a number
        ("count", BooleanType()),  # a boolean for a number
        ("on", LongType()),  # a number for a boolean
        ("count", DoubleType()),  # 10.5 would read as 10
        ("count", DecimalType(38, 0)),  # beyond a long
    ],
)
def test_a_parquet_column_of_the_wrong_type_is_refused_naming_it(column: str, dtype: DataType) -> None:
    types = {"id": StringType(), column: dtype}
    reason = columns_reason(schema(**types), COLUMNS, ("id",), typed=True)
    assert (
        reason == f"{REFUSED_WRONG_TYPE}: {column} is {dtype.simpleString()}, expected {COLUMNS[column].simpleString()}"
    )


@pytest.mark.parametrize(
    ("source", "target"),
    [
        (IntegerType(), LongType()),
        (DecimalType(18, 0), LongType()),
        (LongType(), DoubleType()),
        (DecimalType(38, 18), DoubleType()),
        (DateType(), TimestampType()),
        (StringType(), TimestampType()),  # parsed value by value, as from CSV
    ],
)
def test_lossless_widenings_and_timestamps_as_text_are_read(source: DataType, target: DataType) -> None:
    assert readable_as(source, target)


def test_text_columns_are_checked_value_by_value_not_by_type() -> None:
    """CSV has only text: a CSV file's columns are never refused for their type."""
    assert columns_reason(schema(id=StringType(), count=StringType()), COLUMNS, ("id",), typed=False) is None


def test_a_missing_required_column_is_refused_naming_it() -> None:
    assert columns_reason(schema(ID=StringType()), COLUMNS, ("id", "cost"), typed=True) == f"{REFUSED_MISSING} cost"


def csv_bytes(rows: list[list[str]]) -> bytes:
    lines = [",".join(row) for row in rows]
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("fmt", [FORMAT_CSV, FORMAT_LINES, FORMAT_DOCUMENT])
def test_random_bytes_are_refused_as_unparsable_from_a_sample(fmt: str) -> None:
    reason = unparsable_reason((garbage(SAMPLE_BYTES), False), fmt)
    assert reason is not None and reason.startswith(REFUSED_UNPARSABLE)


def test_a_csv_without_a_line_end_in_its_sample_is_refused() -> None:
    reason = unparsable_reason((b"a" * SAMPLE_BYTES, False), FORMAT_CSV)
    assert reason == f"{REFUSED_UNPARSABLE}: no line end in its first {SAMPLE_BYTES:,} bytes"


def long_json(size: int) -> bytes:
    """A JSON object of about `size` bytes with non-ASCII text, as Azure Monitor writes one response a line."""
    points = [{"timeStamp": f"2026-11-01T{i % 24:02d}:00:00Z", "total": i, "unit": "Größe"} for i in range(size // 60)]
    return json.dumps({"value": [{"timeseries": [{"data": points}]}]}, ensure_ascii=False).encode()


@pytest.mark.parametrize("fmt", [FORMAT_LINES, FORMAT_DOCUMENT])
def test_a_json_record_longer_than_the_sample_is_judged_by_its_start(fmt: str) -> None:
    record = long_json(4 * SAMPLE_BYTES)
    for cut in range(SAMPLE_BYTES - 3, SAMPLE_BYTES + 1):  # every cut of a 2-byte character too
        assert unparsable_reason((record[:cut], False), fmt) is None
    assert unparsable_reason((b"\xef\xbb\xbf \n" + record[:SAMPLE_BYTES], False), fmt) is None
    no_line_end = f"{REFUSED_UNPARSABLE}: no line end in its first {SAMPLE_BYTES:,} bytes"
    not_text = record[:10] + b"\xff" + record[11:SAMPLE_BYTES]
    assert unparsable_reason((not_text, False), fmt) == f"{no_line_end}, and they are not UTF-8 text"
    nul = record[:1] + b"\0" + record[2:SAMPLE_BYTES]  # in place of the first key's quote
    assert unparsable_reason((nul, False), fmt) == f"{no_line_end}, and they hold a NUL byte"
    not_json = {FORMAT_LINES: f"{no_line_end}, and they do not start a JSON object"}
    not_json[FORMAT_DOCUMENT] = f"{REFUSED_UNPARSABLE}: not a JSON document (it starts with b'x', not {{ or [)"
    assert unparsable_reason((b"x" * SAMPLE_BYTES, False), fmt) == not_json[fmt]


def test_json_lines_must_open_an_object_and_a_document_may_open_an_array() -> None:
    array = b"[" + long_json(2 * SAMPLE_BYTES)[: SAMPLE_BYTES - 1]
    assert unparsable_reason((array, False), FORMAT_DOCUMENT) is None
    reason = unparsable_reason((array, False), FORMAT_LINES)
    assert reason is not None and reason.endswith("do not start a JSON object")


def test_a_file_of_long_json_lines_is_sampled_and_passes(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_bytes(b"\n".join(long_json(3 * SAMPLE_BYTES) for _ in range(3)) + b"\n")
    assert sample_reason(None, str(path), FORMAT_LINES) is None  # type: ignore[arg-type]  # a local file needs no session


def test_records_that_are_mostly_sound_pass_and_a_record_cut_by_the_sample_is_not_counted() -> None:
    rows = [["id", "cost"]] + [[f"q{i}", "1.5"] for i in range(10)]
    data = csv_bytes(rows) + b"q10,1."  # the sample ends inside a record
    assert unparsable_reason((data, False), FORMAT_CSV) is None
    # Four of ten rows not UTF-8, or with the wrong number of fields: still mostly sound.
    rows[1:5] = [["q\udcff", "1"], ["q", "1", "2"], ["q"], ["q\x00", "1"]]
    text = "\n".join(",".join(r) for r in rows) + "\n"
    assert unparsable_reason((text.encode("utf-8", "surrogateescape"), True), FORMAT_CSV) is None


def test_a_csv_whose_rows_mostly_do_not_parse_is_refused() -> None:
    rows = [["id", "cost"]] + [["only-one-field"]] * 6 + [["q", "1"]] * 4
    reason = unparsable_reason((csv_bytes(rows), True), FORMAT_CSV)
    assert reason == f"{REFUSED_UNPARSABLE}: 6 of the first 10 records cannot be read as csv"


def test_json_lines_that_are_mostly_not_json_objects_are_refused() -> None:
    lines = [json.dumps({"id": "a"}), "[1, 2]", "not json", '{"id": ', json.dumps({"id": "b"})]
    reason = unparsable_reason((("\n".join(lines) + "\n").encode(), True), FORMAT_LINES)
    assert reason == f"{REFUSED_UNPARSABLE}: 3 of the first 5 records cannot be read as jsonl"


def test_a_json_document_must_start_as_one() -> None:
    assert unparsable_reason((b'\xef\xbb\xbf  [{"id": "a"}]', True), FORMAT_DOCUMENT) is None
    reason = unparsable_reason((b'id: "a"\n', True), FORMAT_DOCUMENT)
    assert reason is not None and reason.startswith(f"{REFUSED_UNPARSABLE}: not a JSON document")


def test_the_sample_reads_only_the_first_bytes_of_a_file_also_gzipped(tmp_path: Path) -> None:
    body = b"x" * (3 * SAMPLE_BYTES)
    (tmp_path / "a.csv").write_bytes(body)
    with gzip.open(tmp_path / "b.csv.gz", "wb") as handle:
        handle.write(body)
    for name in ("a.csv", "b.csv.gz"):
        assert read_head(None, str(tmp_path / name)) == (b"x" * SAMPLE_BYTES, False)  # type: ignore[arg-type]  # a local file needs no session
    (tmp_path / "c.csv").write_bytes(b"id\n")
    assert read_head(None, str(tmp_path / "c.csv")) == (b"id\n", True)  # type: ignore[arg-type]  # a local file needs no session


def test_a_listed_file_is_the_one_spark_names_with_its_characters_encoded(tmp_path: Path) -> None:
    listed = str(tmp_path / "focus (copy) 100%.csv")
    assert same_file(listed, (tmp_path / "focus (copy) 100%.csv").as_uri())
    assert not same_file(listed, (tmp_path / "focus.csv").as_uri())
    assert same_file("abfss://c@a.dfs.core.windows.net/x%20y.csv", "abfss://c@a.dfs.core.windows.net/x y.csv")


def write_focus(path: Path, header: list[str], rows: list[list[str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


FOCUS_HEADER = ["BilledCost", "EffectiveCost", "BillingCurrency", "ChargePeriodStart", "ResourceId"]
RID = "/subscriptions/s/resourcegroups/rg/providers/microsoft.servicebus/namespaces/contoso-dr"


@pytest.mark.spark
def test_hostile_cost_files_are_refused_by_name_before_spark_computes_and_the_good_one_read(spark, tmp_path) -> None:
    """Issue 35: a struct `BilledCost` or a list `EffectiveCost` in Parquet, a `_metadata` column in CSV or
    Parquet, random bytes named `.csv`: each refused with its reason, no Spark error, the good file read."""
    costs = tmp_path / "costs"
    costs.mkdir()
    good = [["1.5", "1.25", "USD", "2026-11-16T00:00:00Z", RID]]
    write_focus(costs / "good.csv", FOCUS_HEADER, good)
    write_focus(costs / "metadata.csv", [*FOCUS_HEADER, "_metadata"], [[*good[0], "x"]])
    (costs / "garbage.csv").write_bytes(garbage(200_000))
    write_focus(costs / "no-currency.csv", FOCUS_HEADER[:2] + FOCUS_HEADER[3:], [good[0][:2] + good[0][3:]])
    columns = "EffectiveCost double, BillingCurrency string, ChargePeriodStart string, ResourceId string"
    parquet = {
        "struct.parquet": (f"BilledCost struct<amount:double>, {columns}", ((2.0,), 2.0, "USD", "2026-11-17", RID)),
        "list.parquet": (
            "BilledCost double, EffectiveCost array<double>, BillingCurrency string, ChargePeriodStart string, "
            "ResourceId string",
            (2.0, [2.0], "USD", "2026-11-17", RID),
        ),
        "metadata.parquet": (
            f"BilledCost double, {columns}, _metadata string",
            (2.0, 2.0, "USD", "2026-11-17", RID, "x"),
        ),
    }
    for name, (ddl, row) in parquet.items():
        spark.createDataFrame([row], ddl).coalesce(1).write.parquet(str(tmp_path / "parts" / name))
        [part] = (tmp_path / "parts" / name).glob("*.parquet")
        part.rename(costs / name)

    charges, quarantine, files = read_focus(spark, str(costs))

    assert [(r.billed, r.effective) for r in charges.collect()] == [(1.5, 1.25)]
    assert quarantine.count() == 0
    refused = {Path(uri).name: reason for uri, reason in files.refused.items()}
    assert refused == {
        "metadata.csv": f"{REFUSED_RESERVED}: _metadata (Spark's own column of that name would be hidden)",
        "metadata.parquet": f"{REFUSED_RESERVED}: _metadata (Spark's own column of that name would be hidden)",
        "garbage.csv": refused["garbage.csv"],
        "no-currency.csv": f"{REFUSED_MISSING} BillingCurrency",
        "struct.parquet": f"{REFUSED_WRONG_TYPE}: BilledCost is struct<amount:double>, expected double",
        "list.parquet": f"{REFUSED_WRONG_TYPE}: EffectiveCost is array<double>, expected double",
    }
    assert refused["garbage.csv"].startswith(f"{REFUSED_UNPARSABLE}: ")
