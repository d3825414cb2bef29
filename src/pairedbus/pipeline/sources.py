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
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse
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


def read_json(spark: SparkSession, files: InputFiles, schema: StructType) -> DataFrame | None:
    """All JSON records of `files` with `schema`, the corrupt-record column and the source file."""
    from pyspark.sql import functions as F

    from pairedbus.pipeline.schemas import CORRUPT_RECORD

    frames: list[DataFrame] = []
    for fmt, multiline in ((FORMAT_LINES, False), (FORMAT_DOCUMENT, True)):
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


def read_flat(spark: SparkSession, files: InputFiles, columns: Mapping[str, DataType]) -> DataFrame | None:
    """CSV and Parquet files in a flat layout: each known column cast to its type (absent ones
    null, unknown ones ignored), plus `_bad_columns`, the columns whose value did not cast."""
    from pyspark.sql import functions as F

    frames: list[DataFrame] = []
    # CSV files are read one by one: Spark takes the header of the first file for all of them,
    # and files of one input may order (or name) their columns differently. Each read opens the
    # file (the header, the Parquet footers): a file it cannot open is refused, not fatal.
    reads: list[DataFrame] = []
    for path in list(files.by_format.get(FORMAT_CSV, [])):
        try:
            reads.append(
                spark.read.option("header", "true").option("escape", '"').option("mode", "PERMISSIVE").csv(path)
            )
        except Exception as exc:  # Spark raises its own and Py4J's types alike
            files.refuse(path, f"{REFUSED_UNREADABLE}: {first_line(exc)}")
    reads.extend(read_parquet(spark, files))
    for raw in reads:
        # RFC 4180 quoting above (a quote inside a field is doubled), as Cost Management writes it.
        present = {c.lower(): c for c in raw.columns}
        cast: list[Column] = []
        bad: list[Column] = []
        for name, dtype in columns.items():
            source = present.get(name.lower())
            if source is None:
                cast.append(F.lit(None).cast(dtype).alias(name))
                continue
            value = F.col(f"`{source}`")
            typed = value.try_cast(dtype) if raw.schema[source].dataType != dtype else value
            cast.append(typed.alias(name))
            bad.append(F.when(value.isNotNull() & typed.isNull(), F.lit(name)))
        frames.append(
            raw.select(
                *cast,
                F.array_compact(F.array(*bad) if bad else F.array().cast("array<string>")).alias("_bad_columns"),
                F.col("_metadata.file_path").alias(SOURCE_FILE),
            )
        )
    return union_all(frames)


def read_parquet(spark: SparkSession, files: InputFiles) -> list[DataFrame]:
    """All Parquet files of `files`, in one read when it succeeds; otherwise each file is opened
    alone (files whose schemas cannot merge are read apart) and the ones that fail are refused."""
    paths = list(files.by_format.get(FORMAT_PARQUET, []))
    if not paths:
        return []
    reader = spark.read.option("mergeSchema", "true")
    try:
        return [reader.parquet(*paths)]
    except Exception:  # which file failed is found below
        pass
    frames: list[DataFrame] = []
    for path in paths:
        try:
            frames.append(reader.parquet(path))
        except Exception as exc:  # Spark raises its own and Py4J's types alike
            files.refuse(path, f"{REFUSED_UNREADABLE}: {first_line(exc)}")
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
