"""The SparkSession the audit runs in: local by default, whatever spark-submit says on a cluster."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pyspark import SparkContext
from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
APP_NAME = "pairedbus-audit"

#: One JVM does all the work locally: the throughput collector beats G1's pauses for scan-and-aggregate
#: jobs (docs/benchmarks.md#figures-behind-the-codes-comments).
THROUGHPUT_JAVA_OPTIONS = ("-XX:+UseParallelGC",)
#: A small estate's run is over in a minute, most of it the JVM's own start and Spark's planning, with
#: no loop hot for long: HotSpot's optimizing compiler (C2) spends CPU on code that has finished by the
#: time it is compiled, so the JVM stops at the quick compiler (C1). Its heap stays small, so one
#: collector thread does (the sample audit, docs/audit.md: 42 % less CPU with C1 alone).
SHORT_RUN_JAVA_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")


def driver_java_options(input_bytes: int | None) -> tuple[str, ...]:
    """The local driver JVM's options for an input of `input_bytes` (None: not known before the JVM
    starts, an input Hadoop lists): a small estate's are for a short run (`SHORT_RUN_JAVA_OPTIONS`)."""
    if input_bytes is not None and input_bytes <= SMALL_ESTATE_BYTES:
        return SHORT_RUN_JAVA_OPTIONS
    return THROUGHPUT_JAVA_OPTIONS


def _local_cores(master: str) -> int | None:
    if not master.startswith("local"):
        return None
    inner = master[len("local") :].strip("[]").split(",")[0]
    if inner in ("", "*"):
        return os.cpu_count() or 2
    return int(inner) if inner.isdigit() else None


def runs_locally(master: str | None) -> bool:
    """Whether build_session(master) starts a local JVM of its own (not spark-submit's, not a cluster's)."""
    if "PYSPARK_GATEWAY_PORT" in os.environ and master is None:
        return False
    return _local_cores(master or DEFAULT_MASTER) is not None


def build_session(
    master: str | None = None,
    *,
    app_name: str = APP_NAME,
    conf: dict[str, str] | None = None,
    progress: bool = False,
    quiet: bool = True,
    shared_classes: SharedClasses | None = None,
    java_options: Sequence[str] = THROUGHPUT_JAVA_OPTIONS,
) -> SparkSession:
    """`master` wins; otherwise spark-submit's (it starts the JVM and sets PYSPARK_GATEWAY_PORT);
    otherwise local[*]. Local runs get fewer shuffle partitions (the default 200 is for clusters)
    and no UI. Every run uses UTC, so that a metric's day is the same wherever the job runs;
    `progress` turns on Spark's console stage progress bar. `quiet` (the default) keeps Spark's own
    log off: a failing task logs its Java stack at ERROR, and the audit reports what failed in one
    line instead (a file it cannot read is refused by name); `pairedbus --debug audit` shows it.
    `shared_classes`: a local driver JVM loads Spark's classes from that archive (or writes it);
    `java_options`: the local driver JVM's collector and compiler (`driver_java_options`)."""
    level = "OFF" if quiet else "ERROR"
    under_submit = "PYSPARK_GATEWAY_PORT" in os.environ
    builder = (
        SparkSession.builder.appName(app_name)
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.ui.showConsoleProgress", str(progress).lower())
        .config("spark.log.level", level)
        # PySpark otherwise records the Python call site of every DataFrame and column function
        # for its error messages: ten Py4J round trips each, 3,200 of the 5,200 it took to build
        # the audit's plans (1M points, cProfile). The audit reports failures in one line anyway.
        .config("spark.python.sql.dataFrameDebugging.enabled", "false")
        # The audit's independent steps submit jobs from threads of their own, each in a pool of its own
        # (pipeline/steps.py): fair shares of the task slots between them, not first come first served.
        .config("spark.scheduler.mode", "FAIR")
    )
    if master is None and not under_submit:
        master = DEFAULT_MASTER
    if master is not None:
        builder = builder.master(master)
        cores = _local_cores(master)
        if cores is not None:
            # Read by the JVM at launch, before any conf: without it Spark binds to the first
            # non-loopback interface it finds (its own warning says so).
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            # Smaller input splits than the cluster default (128 MB) keep every local core busy
            # to the end of a scan, also when other processes share the machine.
            builder = (
                builder.config("spark.ui.enabled", "false")
                # A local run talks to itself: bind to loopback, never to the machine's interfaces.
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                # Enough shuffle partitions that a 100M-point duplicate detection fits each task's
                # share of the heap; adaptive execution merges the small ones back, but into no
                # fewer than two per core, so a big stage does not end on one core alone.
                .config("spark.sql.shuffle.partitions", str(max(2, min(8 * cores, 64))))
                .config("spark.sql.adaptive.coalescePartitions.minPartitionNum", str(2 * cores))
                .config("spark.sql.files.maxPartitionBytes", "8m")
            )
            if "spark.driver.extraJavaOptions" not in (conf or {}):
                options = [*java_options, *(shared_classes.java_options if shared_classes else ())]
                builder = builder.config("spark.driver.extraJavaOptions", " ".join(options))
    for key, value in (conf or {}).items():  # the caller's settings win
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(level)
    return spark


#: Input at or under this many bytes (as listed, before Spark reads it) is a small estate: its tables
#: fit one partition and are planned with AQE off (`small_estate_conf`). The sample estate is 218 KB;
#: the 1M-point benchmark's input is about 100 MB and keeps the cluster plan.
SMALL_ESTATE_BYTES = 32 * 1024 * 1024


def small_estate_conf(input_bytes: int) -> dict[str, str]:
    """The session's SQL settings for an estate of `input_bytes`, or none when it is not small.

    Adaptive execution runs every shuffle stage as a job of its own and plans the rest of the query
    again after each (the sample audit: 84 jobs for 27 queries), which pays only when the sizes it
    measures change the plan; a small estate's every table fits one partition, so it is planned once
    with sizes known up front: AQE off, one shuffle partition (one task a stage, one job a query), and
    no broadcast joins, since a broadcast is collected to the driver in a job of its own, where a
    join of two one-partition sides runs in the query's job. Its files are read in splits of up to
    Spark's default 128 MB (the local 8 MB is for keeping cores busy on large inputs): Spark still
    spreads them over the cores, but a scan of 20 small files is 2 tasks, not 10."""
    if input_bytes > SMALL_ESTATE_BYTES:
        return {}
    return {
        "spark.sql.adaptive.enabled": "false",
        "spark.sql.shuffle.partitions": "1",
        "spark.sql.autoBroadcastJoinThreshold": "-1",
        "spark.sql.files.maxPartitionBytes": "128m",
    }


#: A module the audit needs that a bare driver (only Python and Spark) lacks.
DEPENDENCY_PROBE = "pydantic"


def use_shipped_dependencies(spark: SparkSession, probe: str = DEPENDENCY_PROBE) -> Path | None:
    """When the driver's Python lacks the audit's dependencies, put the ones shipped with the job
    on its path: `spark-submit --archives deps.tar.gz#deps` unpacks the archive into the driver's
    SparkFiles directory too (client mode), as a directory of installed packages
    (`pip install --target`). Returns the directory used, or None when nothing was missing."""
    if importlib.util.find_spec(probe) is not None:
        return None
    from pyspark import SparkFiles

    root = Path(SparkFiles.getRootDirectory())
    archives = spark.sparkContext.getConf().get("spark.archives", "")
    for archive in filter(None, archives.split(",")):
        name = archive.rsplit("#", 1)[1] if "#" in archive else Path(archive).name
        directory = root / name
        candidates = [directory, *sorted(directory.glob("lib/python*/site-packages"))]
        for candidate in candidates:
            if (candidate / probe).is_dir():
                sys.path.insert(0, str(candidate))
                importlib.invalidate_caches()
                return candidate
    return None


#: The driver JVM spends most of a bare session's start loading and verifying Spark's classes (about
#: 10,000 from 280 jars); Java's class data sharing maps them from an archive instead, written once by a
#: run that ends (-XX:ArchiveClassesAtExit) and used by the next ones (-XX:SharedArchiveFile).
#: -Xshare:auto: a JVM that cannot use the archive (missing, stale, corrupt) runs without it.
ARCHIVE_OPTIONS = ("-Xshare:auto",)


@dataclass(frozen=True)
class SharedClasses:
    """A class-data-sharing archive of the driver JVM: `archive` is used when it exists, otherwise the
    JVM writes `writing` as it exits, and `finish` moves it into place."""

    archive: Path
    writing: Path | None

    @property
    def java_options(self) -> tuple[str, ...]:
        if self.writing is None:
            return (f"-XX:SharedArchiveFile={self.archive}", *ARCHIVE_OPTIONS)
        return (f"-XX:ArchiveClassesAtExit={self.writing}", *ARCHIVE_OPTIONS)

    def finish(self, timeout: float = 600.0) -> None:
        """After the session stopped: when this run writes the archive, end the JVM (pyspark's
        gateway exits when its stdin closes), wait for it to write, and move the archive into place
        under its own name, so that a JVM never maps one half written. Nothing here fails the caller:
        an archive that is not written is left for the next run to write."""
        if self.writing is None:
            return
        gateway = SparkContext._gateway
        process = getattr(gateway, "proc", None)  # launch_gateway's Popen; None under spark-submit
        try:
            if isinstance(process, subprocess.Popen):
                if process.stdin is not None:
                    process.stdin.close()
                process.wait(timeout)
                if self.writing.is_file() and self.writing.stat().st_size > 0:
                    os.replace(self.writing, self.archive)
        except (OSError, subprocess.TimeoutExpired):
            pass
        finally:
            self.writing.unlink(missing_ok=True)


def shared_classes(cache: Path) -> SharedClasses | None:
    """The archive for this Java and these Spark jars under `cache` (named by their digest, so that
    another Java or another Spark gets an archive of its own), or None when either is not found."""
    java_home = os.environ.get("JAVA_HOME")
    java = shutil.which("java", path=str(Path(java_home) / "bin")) if java_home else shutil.which("java")
    try:
        from pyspark.find_spark_home import _find_spark_home

        jars = sorted((Path(_find_spark_home()) / "jars").glob("*.jar"))
        if java is None or not jars:
            return None
        digest = hashlib.sha256()
        for path in (Path(java).resolve(), *jars):
            stat = path.stat()
            digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
        cache.mkdir(parents=True, exist_ok=True)
    except (OSError, SystemExit):  # _find_spark_home exits when it finds no Spark
        return None
    archive = cache / f"spark-{digest.hexdigest()[:16]}.jsa"
    if archive.is_file():
        return SharedClasses(archive, None)
    return SharedClasses(archive, archive.with_name(f"{archive.name}.{os.getpid()}.tmp"))


def cache_directory() -> Path:
    """Where the audit keeps what it may rebuild (the class archive): $PAIREDBUS_CACHE_DIR, else
    $XDG_CACHE_HOME/pairedbus, else ~/.cache/pairedbus. Never the repository."""
    explicit = os.environ.get("PAIREDBUS_CACHE_DIR")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pairedbus"
