"""`pairedbus audit`'s hostile arguments: one line naming the flag, exit code 2 (user error), and no
Spark session started (issue 14, item 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pairedbus import cli

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples" / "estate"


@pytest.fixture
def no_spark(mocker):
    return mocker.patch("pairedbus.pipeline.session.build_session", side_effect=AssertionError("Spark started"))


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


def test_progress_shows_on_a_terminal_only_unless_asked(capsys, monkeypatch) -> None:
    from pairedbus.commands import audit as command

    monkeypatch.setattr("sys.stderr.isatty", lambda: False, raising=False)
    assert not command.progress_enabled("auto")
    assert command.progress_enabled("always") and not command.progress_enabled("never")
    command._show_stage("write", ("read", "transform", "write", "render"))
    assert capsys.readouterr().err == "audit: [3/4] write\n"
