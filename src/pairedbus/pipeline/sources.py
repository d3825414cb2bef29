"""Finding and reading input files: every file is read or refused by name, none skipped silently.

Formats, by the file name's suffix in any case (`.JSON` is `.json`):

- `.json` (and `.json.gz`): one document, or a JSON array of records (what `az ... list` prints);
- `.jsonl`, `.ndjson` (and `.gz`): one record per line;
- `.csv` (and `.csv.gz`): a header row and flat columns (see each input's flat layout);
- `.parquet`: flat columns, as the CSV.

Names starting with `.` or `_` are Hadoop's markers and checksums (`_SUCCESS`, `.crc`) and are
passed over, as Spark itself does. Any other file is *refused*: it appears by name in the summary.
JSON is read in PERMISSIVE mode: a malformed record fills the corrupt-record column instead of
failing the job, so it can be quarantined with its reason.

A file that cannot be read at all (a Parquet file without its footer, a gzip stream that does not
decompress, a file the reader cannot open) is refused by name too, and the audit goes on: local
files are probed before Spark reads them (`probe_local`: Parquet's `PAR1` magic at both ends, as
the Parquet format specifies, and the whole gzip stream), and a Parquet or CSV file Spark cannot
open is refused when its read fails (`read_flat`).

Every file is also checked against the columns the audit reads before Spark computes anything with it
(`read_flat`, `read_json`), and refused by name with the reason when it cannot be what the audit reads:

- a column name Spark gives a meaning of its own (RESERVED_COLUMNS), in any case;
- a Parquet column of the wrong type (a struct, a list, a number where text is expected: `readable_as`);
- a CSV or Parquet file without a column the audit requires;
- a text file (CSV, JSON, JSON Lines) whose first SAMPLE_BYTES are mostly not records
  (`unparsable_reason`: not UTF-8, not JSON, not the header's number of fields): a bounded sample,
  never the whole file.

A file that passes and still has more than MAX_QUARANTINED_PER_FILE records quarantined is refused
as unparsable too (audit_job.py): the quarantine holds at most that many records of any one file.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import os
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

from pairedbus.errors import UserError

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import DataType, StructType

SOURCE_FILE = "source_file"

FORMAT_DOCUMENT = "json"
FORMAT_LINES = "jsonl"
FORMAT_CSV = "csv"
FORMAT_PARQUET = "parquet"
#: Lower-cased suffix -> format; the longest matching suffix wins.
SUFFIXES: Mapping[str, str] = {
    ".json": FORMAT_DOCUMENT,
    ".json.gz": FORMAT_DOCUMENT,
    ".jsonl": FORMAT_LINES,
    ".jsonl.gz": FORMAT_LINES,
    ".ndjson": FORMAT_LINES,
    ".ndjson.gz": FORMAT_LINES,
    ".csv": FORMAT_CSV,
    ".csv.gz": FORMAT_CSV,
    ".parquet": FORMAT_PARQUET,
}
REFUSED_UNKNOWN = "not JSON, JSON Lines, CSV or Parquet (by its suffix)"
REFUSED_GZIP_CASE = "gzip with an upper-case suffix: Hadoop picks the codec by `.gz` exactly; rename it"
REFUSED_NOT_PARQUET = "unreadable: not a Parquet file (no PAR1 magic at its start and end)"
REFUSED_BAD_GZIP = "unreadable: the gzip stream does not decompress"
REFUSED_UNREADABLE = "unreadable"
REFUSED_RESERVED = "a column name Spark reserves"
REFUSED_MISSING = "missing the column"
REFUSED_WRONG_TYPE = "a column of the wrong type"
REFUSED_UNPARSABLE = "unparsable"
#: Column names Spark gives a meaning of its own, compared in any case (Spark resolves names
#: case-insensitively): a data column of that name hides, or is taken for, Spark's own column.
#: - `_metadata`: the file-metadata column every file source offers (FileFormat.METADATA_NAME); the
#:   audit reads each row's source file from it, and a data column of that name hides it.
#: - `_tmp_metadata_row_index`: where the Parquet reader keeps `_metadata.row_index` while it reads
#:   (FileFormat.ROW_INDEX_TEMPORARY_COLUMN_NAME).
#: - `_corrupt_record`: the CSV and JSON readers' corrupt-record column
#:   (`spark.sql.columnNameOfCorruptRecord`); the CSV reader leaves it out of the fields it parses,
#:   so every value after it lands in the column before.
RESERVED_COLUMNS = ("_metadata", "_tmp_metadata_row_index", "_corrupt_record")
#: How much of a text file is sampled before Spark reads it: its first bytes (decompressed, for gzip).
SAMPLE_BYTES = 64 * 1024
#: A text file whose sampled records are more than this share unparsable is refused whole.
UNPARSABLE_SHARE = 0.5
#: The most records of one file the quarantine holds: a file with more is refused as unparsable, and
#: nothing of it is read (audit_job.py). Real exports have a few bad records; more is a wrong file.
MAX_QUARANTINED_PER_FILE = 1000
#: Parquet files start and end with these 4 bytes (https://parquet.apache.org/docs/file-format/).
PARQUET_MAGIC = b"PAR1"


def file_format(name: str) -> str | None:
    lower = name.lower()
    matches = [suffix for suffix in SUFFIXES if lower.endswith(suffix)]
    return SUFFIXES[max(matches, key=len)] if matches else None


def is_marker(name: str) -> bool:
    return name.startswith((".", "_"))


@dataclass
class InputFiles:
    """The files of one input directory, by format, and the refused ones with the reason."""

    input: str
    by_format: dict[str, list[str]] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)

    @property
    def readable(self) -> int:
        return sum(len(paths) for paths in self.by_format.values())

    def add(self, uri: str, name: str) -> None:
        if is_marker(name):
            return
        fmt = file_format(name)
        if fmt is None:
            self.refused[uri] = REFUSED_UNKNOWN
        elif name.lower().endswith(".gz") and not name.endswith(".gz"):
            self.refused[uri] = REFUSED_GZIP_CASE
        else:
            self.by_format.setdefault(fmt, []).append(uri)

    def refuse(self, uri: str, reason: str) -> None:
        """Take a listed file out of the read: it is counted among the refused, with the reason."""
        for paths in self.by_format.values():
            if uri in paths:
                paths.remove(uri)
        self.refused[uri] = reason


def _is_local(path: str) -> bool:
    return "://" not in path or path.startswith("file:")


def _local_path(path: str) -> Path:
    return Path(url2pathname(urlparse(path).path)) if path.startswith("file:") else Path(path)


def same_file(listed: str, named: str) -> bool:
    """Whether a listed file (a local path, or a URI as Hadoop lists it) is the one Spark names
    `named` (`_metadata.file_path`: a URI, its characters percent-encoded)."""
    if _is_local(listed) and named.startswith("file:"):
        return _local_path(listed) == _local_path(named)
    return unquote(listed) == unquote(named)


def check_input_dir(path: str, flag: str) -> None:
    """A local input directory must exist; remote URIs (abfss://, hdfs://) are Spark's business."""
    if not _is_local(path):
        return
    if not _local_path(path).is_dir():
        raise UserError(f"{flag} {path}: not a directory (expected a directory of JSON, CSV or Parquet files)")


def list_local(directory: str, input_name: str, *, probe: bool = False) -> InputFiles:
    """Every file under a local directory, recursively, sorted (before Spark starts); with `probe`,
    the files that cannot be read are refused (`probe_local`)."""
    files = InputFiles(input_name)
    root = _local_path(directory)
    for parent, dirs, names in sorted(os.walk(root)):
        dirs[:] = sorted(d for d in dirs if not is_marker(d))
        for name in sorted(names):
            files.add(str((Path(parent) / name).resolve()), name)
    if probe:
        probe_local(files)
    return files


def unreadable_reason(path: Path, fmt: str) -> str | None:
    """Why a local file cannot be read as `fmt`, or None when it looks readable. Cheap: the Parquet
    magic (8 bytes), and the gzip stream read through once (gzip checks its CRC at the end)."""
    import gzip
    import zlib

    try:
        if fmt == FORMAT_PARQUET:
            size = path.stat().st_size
            with path.open("rb") as handle:
                head = handle.read(len(PARQUET_MAGIC))
                handle.seek(max(size - len(PARQUET_MAGIC), 0))
                tail = handle.read(len(PARQUET_MAGIC))
            # Magic, footer length (4 bytes), magic: 12 bytes is the smallest a Parquet file can be.
            if size < 3 * len(PARQUET_MAGIC) or head != PARQUET_MAGIC or tail != PARQUET_MAGIC:
                return REFUSED_NOT_PARQUET
        elif path.name.endswith(".gz"):
            with gzip.open(path, "rb") as handle:
                while handle.read(1 << 20):
                    pass
        else:
            with path.open("rb") as handle:
                handle.read(1)
    except (OSError, EOFError, zlib.error) as exc:
        if path.name.endswith(".gz") and not isinstance(exc, PermissionError):
            return REFUSED_BAD_GZIP
        return f"{REFUSED_UNREADABLE}: {type(exc).__name__}: {exc}"
    return None


def probe_local(files: InputFiles) -> None:
    """Refuse, by name, every local file of `files` that cannot be read (`unreadable_reason`)."""
    for fmt, paths in list(files.by_format.items()):
        for uri in list(paths):
            if not _is_local(uri):
                continue
            reason = unreadable_reason(_local_path(uri), fmt)
            if reason is not None:
                files.refuse(uri, reason)


def first_line(exc: BaseException) -> str:
    """One line of an error's message, without the JVM's stack: Py4J's errors start with "An error
    occurred while calling oNN.x." and carry the Java exception and its stack after it."""
    lines = [line.strip().removeprefix(": ").strip() for line in str(exc).splitlines()]
    useful = [
        line
        for line in lines
        if line and not line.startswith(("An error occurred while calling", "at ", "JVM stacktrace", "..."))
    ]
    return (useful[0] if useful else type(exc).__name__)[:300]


def is_spark_error(exc: BaseException) -> bool:
    """An error raised by Spark or through Py4J (its message carries the JVM's stack)."""
    return any(cls.__module__.startswith(("pyspark", "py4j")) for cls in type(exc).__mro__)


def unreadable_in_full(spark: SparkSession, files: InputFiles) -> dict[str, str]:
    """The files of `files` that fail when read through to the end, each alone, with the reason.

    The recovery pass after a job failed: the probes before the read catch what a header, a footer
    or a gzip stream shows; a Parquet file whose footer is sound but whose pages are not only fails
    when its data is decoded, in the middle of the job."""
    from pyspark.sql import functions as F

    bad: dict[str, str] = {}
    for fmt, paths in files.by_format.items():
        for path in paths:
            try:
                if fmt == FORMAT_PARQUET:
                    frame = spark.read.parquet(path)
                    frame.agg(F.sum(F.hash(*[F.col(f"`{c}`") for c in frame.columns]))).collect()
                else:  # text formats: every byte read (and decompressed) once
                    spark.read.text(path).agg(F.sum(F.length("value"))).collect()
            except Exception as exc:  # Spark raises its own and Py4J's types alike
                if not is_spark_error(exc):
                    raise
                bad[path] = f"{REFUSED_UNREADABLE}: {first_line(exc)}"
    return bad


def list_files(spark: SparkSession, directory: str, input_name: str) -> InputFiles:
    """Every file under `directory`: the local file system directly, any other URI through Hadoop."""
    if _is_local(directory):
        return list_local(directory, input_name, probe=True)
    jvm = spark._jvm
    path = jvm.org.apache.hadoop.fs.Path(directory)  # type: ignore[union-attr]  # a running session has its JVM gateway; pyspark types _jvm Optional
    fs = path.getFileSystem(spark._jsc.hadoopConfiguration())
    files = InputFiles(input_name)
    listing = fs.listFiles(path, True)
    while listing.hasNext():
        status = listing.next()
        files.add(status.getPath().toString(), status.getPath().getName())
    return files


def local_input_bytes(directories: Sequence[str]) -> int | None:
    """The bytes under `directories` when every one is local (walked, no Spark needed), else None:
    known before the JVM starts, when its options are chosen (`spark_session.driver_java_options`)."""
    if not all(_is_local(directory) for directory in directories):
        return None
    return sum(_local_bytes(directory) for directory in directories)


def _local_bytes(directory: str) -> int:
    total = 0
    for parent, _, names in os.walk(_local_path(directory)):
        total += sum((Path(parent) / name).stat().st_size for name in names)
    return total


def input_bytes(spark: SparkSession, directories: Sequence[str]) -> int:
    """The bytes under `directories` (every file, as stored): what the audit reads, known before
    Spark reads it. Local directories are walked; any other URI asks Hadoop's FileSystem."""
    total = 0
    for directory in directories:
        if _is_local(directory):
            total += _local_bytes(directory)
            continue
        jvm = spark._jvm
        path = jvm.org.apache.hadoop.fs.Path(directory)  # type: ignore[union-attr]  # a running session has its JVM gateway; pyspark types _jvm Optional
        total += int(path.getFileSystem(spark._jsc.hadoopConfiguration()).getContentSummary(path).getLength())
    return total


def read_json(spark: SparkSession, files: InputFiles, schema: StructType) -> DataFrame | None:
    """All JSON records of `files` with `schema`, the corrupt-record column and the source file.
    A file whose first bytes are mostly not JSON (`sample_reason`) is refused by name first."""
    from pyspark.sql import functions as F

    from pairedbus.pipeline.schemas import CORRUPT_RECORD

    frames: list[DataFrame] = []
    for fmt, multiline in ((FORMAT_LINES, False), (FORMAT_DOCUMENT, True)):
        for path in list(files.by_format.get(fmt, [])):
            reason = sample_reason(spark, path, fmt)
            if reason is not None:
                files.refuse(path, reason)
        paths = files.by_format.get(fmt)
        if not paths:
            continue
        frame = (
            spark.read.schema(schema)
            .option("mode", "PERMISSIVE")
            .option("columnNameOfCorruptRecord", CORRUPT_RECORD)
            .option("multiLine", str(multiline).lower())
            .json(paths)
        )
        frames.append(frame.withColumn(SOURCE_FILE, F.col("_metadata.file_path")))
    return union_all(frames)


def read_flat(
    spark: SparkSession,
    files: InputFiles,
    columns: Mapping[str, DataType],
    required: Sequence[str] = (),
) -> DataFrame | None:
    """CSV and Parquet files in a flat layout: each known column cast to its type (absent ones
    null, unknown ones ignored), plus `_bad_columns`, the columns whose value did not cast.

    Each file is checked first (`columns_reason`; CSV files also `unparsable_reason`): one that
    cannot be what the audit reads (a reserved column name, a missing `required` column, a Parquet
    column of the wrong type) is refused by name, before Spark computes anything with it."""
    from pyspark.sql import functions as F

    frames: list[DataFrame] = []
    # CSV files are read one by one: Spark takes the header of the first file for all of them,
    # and files of one input may order (or name) their columns differently. Each read opens the
    # file (the header, the Parquet footers): a file it cannot open is refused, not fatal.
    reads: list[DataFrame] = []
    for path in list(files.by_format.get(FORMAT_CSV, [])):
        reason = sample_reason(spark, path, FORMAT_CSV)
        if reason is not None:
            files.refuse(path, reason)
            continue
        try:
            # RFC 4180 quoting (a quote inside a field is doubled), as Cost Management writes it.
            raw = spark.read.option("header", "true").option("escape", '"').option("mode", "PERMISSIVE").csv(path)
        except Exception as exc:  # Spark raises its own and Py4J's types alike
            files.refuse(path, f"{REFUSED_UNREADABLE}: {first_line(exc)}")
            continue
        reason = columns_reason(raw.schema, columns, required, typed=False)
        if reason is not None:
            files.refuse(path, reason)
            continue
        reads.append(raw)
    reads.extend(read_parquet(spark, files, columns, required))
    for raw in reads:
        present = {c.lower(): c for c in raw.columns}
        cast: list[Column] = []
        bad: list[Column] = []
        for name, dtype in columns.items():
            source = present.get(name.lower())
            if source is None:
                cast.append(F.lit(None).cast(dtype).alias(name))
                continue
            value = F.col(f"`{source}`")
            typed_value = _cast(value, raw.schema[source].dataType, dtype)
            cast.append(typed_value.alias(name))
            bad.append(F.when(value.isNotNull() & typed_value.isNull(), F.lit(name)))
        frames.append(
            raw.select(
                *cast,
                F.array_compact(F.array(*bad) if bad else F.array().cast("array<string>")).alias("_bad_columns"),
                F.col("_metadata.file_path").alias(SOURCE_FILE),
            )
        )
    return union_all(frames)


def _cast(value: Column, source: DataType, target: DataType) -> Column:
    """`value` (of type `source`) as `target`, null where it cannot be: text is checked value by
    value (a number that does not parse, a boolean other than true or false, text that was not
    UTF-8: the CSV reader puts U+FFFD where a byte was not); typed columns were checked already
    (`readable_as`) and are widened exactly."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType, StringType

    if not isinstance(source, StringType):
        return value if source == target else value.cast(target)
    if isinstance(target, StringType):
        return F.when(F.is_valid_utf8(value) & ~value.contains(REPLACEMENT_CHARACTER), value)
    if isinstance(target, BooleanType):
        return F.when(F.lower(F.trim(value)).isin("true", "false"), value.try_cast(target))
    return value.try_cast(target)


#: What a decoder puts in place of bytes that are not UTF-8.
REPLACEMENT_CHARACTER = "\ufffd"


def readable_as(source: DataType, target: DataType) -> bool:
    """Whether a typed (Parquet) column of type `source` holds values of `target` exactly: the same
    type or a widening that loses nothing (a whole number as a double; a date as a timestamp), and
    text for a timestamp (parsed value by value, as from CSV). Never a struct, list, map or binary,
    a number where text is expected or text where a number is, a boolean for a number or the reverse."""
    from pyspark.sql.types import (
        BooleanType,
        ByteType,
        DateType,
        DecimalType,
        DoubleType,
        IntegerType,
        LongType,
        NumericType,
        ShortType,
        StringType,
        TimestampNTZType,
        TimestampType,
    )

    if isinstance(target, LongType):
        whole_decimal = isinstance(source, DecimalType) and source.scale == 0 and source.precision <= 18
        return isinstance(source, ByteType | ShortType | IntegerType | LongType) or whole_decimal
    if isinstance(target, DoubleType):
        return isinstance(source, NumericType)
    if isinstance(target, TimestampType):
        return isinstance(source, TimestampType | TimestampNTZType | DateType | StringType)
    if isinstance(target, StringType | BooleanType):
        return type(source) is type(target)
    return source == target


def columns_reason(
    schema: StructType, columns: Mapping[str, DataType], required: Sequence[str], *, typed: bool
) -> str | None:
    """Why a file with `schema` cannot be read as `columns`, or None: a reserved column name, a
    `required` column missing, or (`typed`: Parquet) a column of a type `readable_as` refuses.
    Text formats (CSV) carry every value as text; those are checked value by value instead."""
    reserved = sorted(f.name for f in schema.fields if f.name.lower() in RESERVED_COLUMNS)
    if reserved:
        return f"{REFUSED_RESERVED}: {', '.join(reserved)} (Spark's own column of that name would be hidden)"
    present = {f.name.lower(): f for f in schema.fields}
    missing = [name for name in required if name.lower() not in present]
    if missing:
        return f"{REFUSED_MISSING} {', '.join(missing)}"
    if not typed:
        return None
    wrong = [
        f"{field.name} is {field.dataType.simpleString()}, expected {target.simpleString()}"
        for name, target in columns.items()
        if (field := present.get(name.lower())) is not None and not readable_as(field.dataType, target)
    ]
    return f"{REFUSED_WRONG_TYPE}: {'; '.join(wrong)}" if wrong else None


def read_head(spark: SparkSession, uri: str, limit: int = SAMPLE_BYTES) -> tuple[bytes, bool]:
    """The first `limit` bytes of a file (decompressed, for `.gz`, as far as its first `limit`
    compressed bytes go) and whether that is the whole file. Local files are read directly, any
    other URI through Hadoop's FileSystem; only those bytes are read."""
    if _is_local(uri):
        with _local_path(uri).open("rb") as handle:
            raw = handle.read(limit + 1)
    else:
        jvm = spark._jvm
        path = jvm.org.apache.hadoop.fs.Path(uri)  # type: ignore[union-attr]  # a running session has its JVM gateway; pyspark types _jvm Optional
        stream = path.getFileSystem(spark._jsc.hadoopConfiguration()).open(path)
        try:
            raw = bytes(stream.readNBytes(limit + 1))
        finally:
            stream.close()
    complete = len(raw) <= limit
    raw = raw[:limit]
    if uri.endswith(".gz"):
        inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # a gzip header and trailer
        data = inflate.decompress(raw, limit + 1)  # zlib.error when it is not gzip
        complete = complete and inflate.eof and len(data) <= limit
        raw = data[:limit]
    return raw, complete


def sample_reason(spark: SparkSession, uri: str, fmt: str) -> str | None:
    """Why a text file cannot be read, from its first bytes (`read_head`, `unparsable_reason`), or None."""
    try:
        head = read_head(spark, uri)
    except zlib.error:
        return REFUSED_BAD_GZIP
    except OSError as exc:
        return f"{REFUSED_UNREADABLE}: {type(exc).__name__}: {exc}"
    except Exception as exc:  # Hadoop's errors arrive through Py4J
        if not is_spark_error(exc):
            raise
        return f"{REFUSED_UNREADABLE}: {first_line(exc)}"
    return unparsable_reason(head, fmt)


def unparsable_reason(head: tuple[bytes, bool], fmt: str) -> str | None:
    """Why a text file is mostly unparsable, judged from its first bytes (`read_head`), or None.

    The sample's records (lines; for CSV, the rows after the header) are parsed as the reader
    will: UTF-8 text without NUL bytes, and for JSON Lines a JSON object per line, for CSV the
    header's number of fields. A JSON document must start with `{` or `[`. More than
    UNPARSABLE_SHARE of the records unparsable: the file is refused. A sample that ends inside its
    first record is judged as that record's start (`_first_record_reason`)."""
    data, complete = head
    data = data.removeprefix(codecs.BOM_UTF8)
    if fmt == FORMAT_DOCUMENT:  # before the sample is cut at a line end: a document is not line by line
        start = data.lstrip()[:1]
        if start not in (b"{", b"["):
            return f"{REFUSED_UNPARSABLE}: not a JSON document (it starts with {start!r}, not {{ or [)"
    if not complete:
        if b"\n" not in data:
            return _first_record_reason(data, fmt)
        data = data[: data.rindex(b"\n") + 1]  # the last record may be cut short
    if fmt == FORMAT_CSV:
        records, bad = _csv_records(data)
    else:
        lines = [line for line in data.split(b"\n") if line.strip()]
        records = len(lines)
        bad = sum(1 for line in lines if not _text_record(line, json_object=fmt == FORMAT_LINES))
    if records and bad / records > UNPARSABLE_SHARE:
        return f"{REFUSED_UNPARSABLE}: {bad:,} of the first {records:,} records cannot be read as {fmt}"
    return None


def _first_record_reason(data: bytes, fmt: str) -> str | None:
    """Why a sample with no line end, cut inside its first record, cannot start a readable file, or None.

    JSON records are often longer than the sample (an Azure Monitor response per line, a minified
    document): the sample must be UTF-8 text without NUL bytes (a character cut at its end allowed),
    for JSON Lines opening an object. A CSV header longer than the sample is not a header."""
    cut = f"{REFUSED_UNPARSABLE}: no line end in its first {len(data):,} bytes"
    if fmt == FORMAT_CSV:
        return cut
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(data, final=False)
    except UnicodeDecodeError:
        return f"{cut}, and they are not UTF-8 text"
    if "\0" in text:
        return f"{cut}, and they hold a NUL byte"
    if fmt == FORMAT_LINES and not text.lstrip().startswith("{"):  # a document's start is checked before
        return f"{cut}, and they do not start a JSON object"
    return None


def _text_record(line: bytes, *, json_object: bool) -> bool:
    """A line that is UTF-8 text without NUL bytes; with `json_object`, one JSON object."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if "\0" in text:
        return False
    if not json_object:
        return True
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def _csv_records(data: bytes) -> tuple[int, int]:
    """(records after the header, unparsable ones): not UTF-8, a NUL byte, or not as many fields as
    the header. A header that is not UTF-8 text makes every record unparsable."""
    text = data.decode("utf-8", errors="surrogateescape")  # undecodable bytes stay visible
    rows = csv.reader(io.StringIO(text.replace("\0", "\udc80"), newline=""))
    try:
        header = next(rows, None)
        body = [row for row in rows if row]
    except csv.Error:
        return 1, 1
    if header is None:
        return 0, 0
    if not _clean(header):
        return max(len(body), 1), max(len(body), 1)
    return len(body), sum(1 for row in body if len(row) != len(header) or not _clean(row))


def _clean(fields: list[str]) -> bool:
    """No field holds a byte that was not UTF-8 (a surrogate escape) or a NUL byte."""
    return not any("\udc80" <= ch <= "\udcff" for field in fields for ch in field)


def read_parquet(
    spark: SparkSession, files: InputFiles, columns: Mapping[str, DataType], required: Sequence[str] = ()
) -> list[DataFrame]:
    """All Parquet files of `files` whose columns can be read as `columns` (`columns_reason`), in
    one read when they all can; otherwise each file is opened alone (also when their schemas
    cannot merge), and the ones that fail or cannot be read as `columns` are refused by name."""
    paths = list(files.by_format.get(FORMAT_PARQUET, []))
    if not paths:
        return []
    reader = spark.read.option("mergeSchema", "true")
    try:
        merged = reader.parquet(*paths)
    except Exception:  # which file failed is found below
        merged = None
    if merged is not None and columns_reason(merged.schema, columns, required, typed=True) is None:
        return [merged]
    frames: list[DataFrame] = []
    for path in paths:
        try:
            frame = reader.parquet(path)
        except Exception as exc:  # Spark raises its own and Py4J's types alike
            files.refuse(path, f"{REFUSED_UNREADABLE}: {first_line(exc)}")
            continue
        reason = columns_reason(frame.schema, columns, required, typed=True)
        if reason is None:
            frames.append(frame)
        else:
            files.refuse(path, reason)
    return frames


def union_all(frames: list[DataFrame]) -> DataFrame | None:
    if not frames:
        return None
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame)
    return out


def quarantine_rows(frame: DataFrame, input_name: str, reason: Column, record: Column) -> DataFrame:
    """Rows in the quarantine layout: which input, which file, why, and the record itself."""
    from pyspark.sql import functions as F

    return frame.select(
        F.lit(input_name).alias("input"),
        F.col(SOURCE_FILE).alias("source_file"),
        reason.alias("reason"),
        record.alias("record"),
    )
