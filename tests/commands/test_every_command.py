"""Every command as a person runs it, in a subprocess: --help, a happy path, a bad flag as one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pairedbus import cli
from tests.load import guard

REPO = Path(__file__).resolve().parents[2]


def _run(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pairedbus.cli", *argv],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        timeout=guard(300),
    )


@pytest.mark.parametrize("command", cli.COMMAND_MODULES)
def test_every_command_has_help(command: str) -> None:
    result = _run(command, "--help")
    assert result.returncode == 0 and result.stdout.startswith("usage: pairedbus "), result.stderr


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (("plan",), "stack"),
        (("plan", "dev", "--bogus"), "--bogus"),
        (("drift", "--secondary", "x.servicebus.windows.net"), "--primary-name"),
        (("syphon", "--primary"), "--primary"),
        (("drill", "--messages", "many"), "--messages"),
        (("inventory",), "inventory"),
        (
            (
                "metrics",
                "export",
                "--subscription",
                "0b1f6471-1bf0-4dda-aec3-cb9272f09590",
                "--out",
                "o",
                "--since",
                "x",
            ),
            "--since",
        ),
        (("inventory", "export", "--subscription", "../../x y", "--out", "o"), "--subscription"),
        (("metrics", "export", "--subscription", "../../x y", "--out", "o", "--since", "1d"), "--subscription"),
        (("audit", "--inventory", "i"), "--metrics"),
        (("doctor", "--fix"), "--fix"),
        (("nosuchcommand",), "nosuchcommand"),
    ],
)
def test_a_bad_invocation_is_one_line_naming_it_and_exit_2(argv: tuple[str, ...], names: str) -> None:
    result = _run(*argv)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("pairedbus: error: "), result.stderr
    assert names in result.stderr


def test_drill_happy_path_as_a_subprocess(tmp_path: Path) -> None:
    out = tmp_path / "drill.json"
    result = _run("drill", "--messages", "40", "--outages", "1", "--syphon-restarts", "0", "--json", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("PASS  sent 40 · ") and "\x1b[" not in result.stdout
    assert out.exists()


def test_doctor_as_a_subprocess_says_one_line_per_requirement() -> None:
    result = _run("doctor", env={"PATH": "/nonexistent"})
    lines = result.stdout.splitlines()
    assert result.returncode == 1  # no java, no pulumi, no az on that PATH
    assert len(lines) == 8 and lines[-1].endswith("missing")
    assert all(line.startswith(("ok", "MISSING")) for line in lines[:-1])
