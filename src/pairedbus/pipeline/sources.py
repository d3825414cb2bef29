"""Reading JSON inputs with an explicit schema, keeping every malformed record for quarantine.

`*.jsonl` / `*.ndjson` files hold one record per line; `*.json` files hold one document or a JSON
array of records (what `az ... list` prints). Spark's PERMISSIVE mode fills the corrupt-record
column instead of failing, so nothing is dropped and nothing crashes the job.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from pairedbus.errors import UserError
from pairedbus.pipeline.schemas import CORRUPT_RECORD

SOURCE_FILE = "source_file"
LINE_FILES = ("*.jsonl", "*.ndjson")
DOCUMENT_FILES = ("*.json",)


def check_input_dir(path: str, flag: str) -> None:
    """A local input directory must exist; remote URIs (abfss://, hdfs://) are Spark's business."""
    if "://" in path:
        return
    if not Path(path).is_dir():
        raise UserError(f"{flag} {path}: not a directory (expected a directory of JSON files)")


def read_json(spark: SparkSession, directory: str, schema: StructType) -> DataFrame:
    """All JSON records under `directory` with `schema`, the corrupt-record column and the file."""
    frames: list[DataFrame] = []
    for pattern, multiline in [(p, False) for p in LINE_FILES] + [(p, True) for p in DOCUMENT_FILES]:
        frame = (
            spark.read.schema(schema)
            .option("mode", "PERMISSIVE")
            .option("columnNameOfCorruptRecord", CORRUPT_RECORD)
            .option("multiLine", str(multiline).lower())
            .option("pathGlobFilter", pattern)
            .option("recursiveFileLookup", "true")
            .json(directory)
        )
        frames.append(frame.withColumn(SOURCE_FILE, F.col("_metadata.file_path")))
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame)
    return out


def quarantine_rows(frame: DataFrame, input_name: str, reason: Column, record: Column) -> DataFrame:
    """Rows in the quarantine layout: which input, which file, why, and the record itself."""
    return frame.select(
        F.lit(input_name).alias("input"),
        F.col(SOURCE_FILE).alias("source_file"),
        reason.alias("reason"),
        record.alias("record"),
    )
