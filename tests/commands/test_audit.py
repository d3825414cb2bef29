"""The audit command's checks of its flags, each before Spark starts: dates, the Spark master URL, the output
(a local folder or a URI Hadoop writes), and when progress is shown."""

from __future__ import annotations

import io
from datetime import date
from pathlib import Path

import pytest

from pairedbus.commands import audit
from pairedbus.commands.audit import check_master, check_output, parse_day, progress_enabled
from pairedbus.errors import DateRangeError, MasterError, OutputError


def test_a_day_is_iso_and_absent_is_none() -> None:
    assert parse_day("--since", "2026-11-18") == date(2026, 11, 18)
    assert parse_day("--since", None) is None


@pytest.mark.parametrize("text", ["18.11.2026", "2026-13-01", "yesterday", ""])
def test_a_day_that_is_not_a_date_names_the_flag(text: str) -> None:
    with pytest.raises(DateRangeError, match=rf"^--until {text}: expected a date YYYY-MM-DD$"):
        parse_day("--until", text)


@pytest.mark.parametrize("text", ["2007-12-31", "2100-01-02"])
def test_a_day_before_azure_or_after_2100_is_refused(text: str) -> None:
    with pytest.raises(DateRangeError, match=rf"^--since {text}: expected a date between 2008-01-01 and 2100-01-01$"):
        parse_day("--since", text)


@pytest.mark.parametrize("text", ["2008-01-01", "2100-01-01"])
def test_the_bounds_themselves_are_accepted(text: str) -> None:
    assert parse_day("--since", text) == date.fromisoformat(text)


@pytest.mark.parametrize(
    "master",
    [
        None,
        "local",
        "local[*]",
        "local[4]",
        "local[4,2]",
        "local-cluster[2,1,1024]",
        "spark://head:7077",
        "spark://a:7077,b:7077",
        "yarn",
        "k8s://https://10.0.0.1:6443",
        "mesos://zk://host:2181",
    ],
)
def test_spark_master_urls_pass(master: str | None) -> None:
    check_master(master)


@pytest.mark.parametrize("master", ["local[0]", "local[]", "spark://", "spark://a b:7077", "yarn-cluster", "http://x"])
def test_anything_else_is_not_a_master_url(master: str) -> None:
    with pytest.raises(MasterError, match=r"^--master .*: not a Spark master URL \(local\[N\]"):
        check_master(master)


@pytest.mark.parametrize("out", ["abfss://audit@acct.dfs.core.windows.net/run", "hdfs://nn/a", "S3A://bucket/a"])
def test_an_output_uri_hadoop_writes_passes_without_touching_it(out: str) -> None:
    check_output(out)


def test_an_output_uri_of_another_scheme_lists_the_schemes() -> None:
    with pytest.raises(OutputError) as raised:
        check_output("ftp://host/out")
    assert str(raised.value) == (
        "--out ftp://host/out: unknown scheme ftp:// (expected one of file, hdfs, abfs, abfss, wasb, wasbs, s3a, gs, "
        "viewfs)"
    )


def test_a_file_uri_is_checked_as_a_local_folder(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    with pytest.raises(OutputError, match=r"exists and is not a directory"):
        check_output(f"file://{blocker}")
    check_output(f"file://{tmp_path / 'out'}")


def test_progress_always_never_and_auto_by_the_terminal(monkeypatch) -> None:
    assert progress_enabled("always") and not progress_enabled("never")
    monkeypatch.setattr(audit.sys, "stderr", io.StringIO())
    assert not progress_enabled("auto")

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(audit.sys, "stderr", Terminal())
    assert progress_enabled("auto")


class SessionStarted(Exception):
    """Stands in for Spark: the test ends where the session would start."""


def test_the_sample_audit_starts_its_jvm_for_a_short_run(monkeypatch, tmp_path: Path) -> None:
    from pairedbus.cli import build_parser
    from pairedbus.pipeline import spark_session

    started: dict[str, object] = {}

    def build_session(master: str | None, **options: object) -> None:
        started.update(options)
        raise SessionStarted

    monkeypatch.setattr(spark_session, "build_session", build_session)
    monkeypatch.setenv("PAIREDBUS_CACHE_DIR", str(tmp_path / "cache"))
    sample = Path(__file__).resolve().parents[2] / "samples" / "estate"
    argv = ["audit", "--out", str(tmp_path / "out"), "--inventory", str(sample / "inventory")]
    argv += ["--metrics", str(sample / "metrics"), "--costs", str(sample / "costs")]
    with pytest.raises(SessionStarted):
        audit.run(build_parser().parse_args(argv))
    assert started["java_options"] == spark_session.SHORT_RUN_JAVA_OPTIONS
