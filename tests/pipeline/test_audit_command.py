"""`pairedbus audit`'s hostile arguments: one line naming the flag, exit code 2 (user error), and no
Spark session started (issue 14, item 6)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from pairedbus import cli
from pairedbus.errors import EXIT_INTERRUPTED
from tests.load import guard

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples" / "estate"


@pytest.fixture
def no_spark(mocker):
    return mocker.patch("pairedbus.pipeline.spark_session.build_session", side_effect=AssertionError("Spark started"))


def audit(tmp_path: Path, *extra: str, out: str | None = None) -> list[str]:
    return [
        "audit",
        "--inventory",
        str(SAMPLES / "inventory"),
        "--metrics",
        str(SAMPLES / "metrics"),
        "--out",
        out if out is not None else str(tmp_path / "out"),
        *extra,
    ]


@pytest.mark.parametrize(
    ("extra", "out", "code", "named"),
    [
        (("--master", "spark:/host:7077"), None, 2, "--master spark:/host:7077"),
        (("--master", "locl[2]"), None, 2, "--master locl[2]"),
        ((), "/proc/pairedbus-cannot-write/out", 2, "--out /proc/pairedbus-cannot-write/out"),
        ((), "ftp://example.invalid/out", 2, "--out ftp://example.invalid/out"),
        (("--since", "2026-13-01"), None, 2, "--since 2026-13-01"),
        (("--since", "99999999-01-01"), None, 2, "--since 99999999-01-01"),
        (("--since", "2026-11-19", "--until", "2026-11-16"), None, 2, "--since 2026-11-19 --until 2026-11-16"),
        (("--costs", "/nonexistent/costs"), None, 2, "--costs /nonexistent/costs"),
        (("--clients", "0"), None, 2, "--clients 0"),
    ],
)
def test_bad_argument_is_one_line_naming_the_flag_and_exit_2_before_spark(
    tmp_path: Path, capsys, no_spark, extra, out, code, named
) -> None:
    assert cli.main(audit(tmp_path, *extra, out=out)) == code
    err = capsys.readouterr().err
    assert err.startswith(f"pairedbus: error: {named}") and err.count("\n") == 1, err
    no_spark.assert_not_called()


def test_an_output_that_is_a_file_is_refused(tmp_path: Path, capsys, no_spark) -> None:
    (tmp_path / "file").write_text("x")
    assert cli.main(audit(tmp_path, out=str(tmp_path / "file"))) == 2
    assert "exists and is not a directory" in capsys.readouterr().err


def test_the_pipeline_is_imported_while_the_jvm_starts(tmp_path: Path, mocker) -> None:
    from pairedbus.commands import audit as command

    release = threading.Event()
    seen: dict[str, bool] = {}

    def importing() -> None:
        release.wait(60)  # held until the session has looked; bounded, should it never look

    def session(*_args: object, **_kwargs: object) -> None:
        seen["importing"] = any(t.name == "import-audit-job" and t.is_alive() for t in threading.enumerate())
        release.set()
        raise KeyboardInterrupt  # the run stops here, after the checks and the thread's start

    mocker.patch.object(command, "_import_audit_job", importing)
    mocker.patch("pairedbus.pipeline.spark_session.build_session", session)
    assert cli.main(audit(tmp_path, "--progress", "never")) == EXIT_INTERRUPTED
    # The JVM takes seconds to start, with the driver's Python idle: the imports (pydantic, Jinja2 and
    # the audit's own modules) run meanwhile, not after it.
    assert seen == {"importing": True}


def test_the_import_thread_registers_no_fork_hooks_while_the_jvm_is_forked(tmp_path: Path) -> None:
    """The main thread forks the JVM while the import thread runs: a module that thread first imports
    must not register fork hooks (CI, 2026-11-28: concurrent.futures.thread's, registered mid-fork, released
    a lock the fork never took, and CPython printed "release unlocked lock" on the audit's stderr)."""
    import json
    import os
    import subprocess
    import sys

    script = """
import json, os, sys, threading
from unittest import mock
registered, real = [], os.register_at_fork
def spy(**hooks):
    registered.append(threading.current_thread().name)
    return real(**hooks)
os.register_at_fork = spy
from pairedbus import cli
def session(*args, **kwargs):
    next(t for t in threading.enumerate() if t.name == "import-audit-job").join(60)
    raise KeyboardInterrupt
with mock.patch("pairedbus.pipeline.spark_session.build_session", session):
    code = cli.main(sys.argv[1:])
print(json.dumps([code, registered]))
"""
    done = subprocess.run(
        [sys.executable, "-c", script, *audit(tmp_path, "--progress", "never")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])},
        timeout=guard(120),
    )
    code, registered = json.loads(done.stdout.splitlines()[-1])
    assert code == EXIT_INTERRUPTED, done.stderr[-2000:]
    assert "import-audit-job" not in registered


def test_progress_shows_on_a_terminal_only_unless_asked(capsys, monkeypatch) -> None:
    from pairedbus.commands import audit as command

    monkeypatch.setattr("sys.stderr.isatty", lambda: False, raising=False)
    assert not command.progress_enabled("auto")
    assert command.progress_enabled("always") and not command.progress_enabled("never")
    command._show_stage("write", ("read", "transform", "write", "render"))
    assert capsys.readouterr().err == "audit: [3/4] write\n"


def hostile_estate(root: Path) -> Path:
    """The sample estate plus what issue 21 tried: the same FOCUS export twice, a EUR export, a row
    with NaN costs, and a garbage Parquet file in each input directory; and what issue 35 tried: a
    `_metadata` column, and random bytes named as CSV, JSON Lines and JSON."""
    import csv
    import random
    import shutil

    estate = root / "estate"
    shutil.copytree(SAMPLES, estate, ignore=shutil.ignore_patterns("generate.py"))
    costs = estate / "costs"
    shutil.copy(costs / "focus-2026-11.csv", costs / "focus-2026-11 (copy).csv")
    with (costs / "focus-2026-11.csv").open(newline="", encoding="utf-8") as handle:
        header, *rows = list(csv.reader(handle))
    column = {name: i for i, name in enumerate(header)}

    def with_values(row: list[str], **values: str) -> list[str]:
        out = list(row)
        for name, value in values.items():
            out[column[name]] = value
        return out

    # The pair's secondary in a EUR billing account, one day; and one USD row gone wrong.
    eur = [with_values(rows[1], BillingCurrency="EUR", BillingAccountId="billing-account-eu", BilledCost="11.0",
                       EffectiveCost="10.0")]  # fmt: skip
    nan = [with_values(rows[1], BilledCost="NaN", EffectiveCost="NaN", ChargeDescription="broken meter")]
    for name, extra in (("focus-2026-11-eur.csv", eur), ("focus-2026-11-nan.csv", nan)):
        with (costs / name).open("w", newline="", encoding="utf-8") as handle:
            csv.writer(handle, lineterminator="\n").writerows([header, *extra])
    for directory in ("costs", "inventory", "metrics"):
        (estate / directory / "part-00000.parquet").write_bytes(b"PAR1 garbage, the footer is missing")
    with (costs / "focus-2026-11-metadata.csv").open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows([[*header, "_metadata"], *[[*row, "x"] for row in rows]])
    noise = random.Random(35)
    for path in (costs / "garbage.csv", estate / "metrics" / "garbage.jsonl", estate / "inventory" / "garbage.json"):
        path.write_bytes(noise.randbytes(300_000))
    return estate


@pytest.mark.spark
def test_the_hostile_sample_keeps_the_clean_bills_per_currency_and_counts_the_refusals(tmp_path: Path) -> None:
    """Issue 21's "must show", through the CLI as a user runs it: bills unchanged from the clean run
    (billed 4.50 USD, effective 75.77 USD), a line per currency, the refusals counted, exit 0, and no
    Java stack on stderr. Issue 35's hostile files too: before, the `_metadata` column exited 3 with
    12 KB of Java stack, and random bytes were quarantined row by row."""
    import json
    import os
    import subprocess
    import sys

    estate, out = hostile_estate(tmp_path), tmp_path / "out"
    argv = ["audit", "--inventory", str(estate / "inventory"), "--metrics", str(estate / "metrics")]
    argv += ["--costs", str(estate / "costs"), "--out", str(out), "--progress", "never"]
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from pairedbus import cli; sys.exit(cli.main(sys.argv[1:]))", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        timeout=guard(900),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "\tat " not in done.stderr and "Exception" not in done.stderr and "Traceback" not in done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["bills"] == {
        "EUR": {"billed": 11.0, "effective": 10.0},
        "USD": {"billed": 4.5, "effective": 75.77},
    }
    assert summary["actual_pairing_cost_usd"] == 75.77
    assert summary["duplicates_dropped"]["costs"] == 32  # the copied export, every row
    refused = {f"{Path(uri).parent.name}/{Path(uri).name}": reason for uri, reason in summary["files_refused"].items()}
    assert sorted(refused) == [
        "costs/focus-2026-11-metadata.csv",
        "costs/garbage.csv",
        "costs/part-00000.parquet",
        "inventory/garbage.json",
        "inventory/part-00000.parquet",
        "metrics/garbage.jsonl",
        "metrics/part-00000.parquet",
    ]
    assert refused["costs/focus-2026-11-metadata.csv"].startswith("a column name Spark reserves: _metadata")
    assert all(refused[name].startswith("unparsable: ") for name in refused if "garbage" in name)
    assert all(refused[name].startswith("unreadable") for name in refused if name.endswith(".parquet"))
    assert "BilledCost or EffectiveCost is not a finite number (NaN or infinity)" in summary["quarantined_by_reason"]
    line = done.stdout.strip().splitlines()[-1]
    assert "7 files refused" in line
    assert "billed 11.00 EUR, effective (amortised) 10.00 EUR; billed 4.50 USD, effective (amortised) 75.77 USD" in line
