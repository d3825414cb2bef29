"""The output layer: colour only on a terminal and never under NO_COLOR; outputs checked first."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from pairedbus.cli import main
from pairedbus.commands.output import bounded, check_writable, check_writable_dir, console
from pairedbus.errors import UserError
from tests.load import guard

REPO = Path(__file__).resolve().parents[2]
#: SGR colour codes (foreground 30-37/90-97, or 38;5 / 38;2) — what NO_COLOR forbids.
COLOUR = ("\x1b[3", "\x1b[9", ";3", "38;5;", "38;2;")


def _run_in_pty(argv: list[str], env: dict[str, str]) -> str:
    """Run the real CLI with a pseudo-terminal as its stdout, as a person's shell would."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        argv, stdout=follower, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=REPO
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=guard(120))
    os.close(leader)
    return b"".join(chunks).decode()


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM", "COLUMNS")}
    return {**env, "TERM": "xterm-256color", **extra}


def test_piped_output_is_plain_text_with_no_escape_codes() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pairedbus.cli", "plan", "dev"], capture_output=True, text=True, env=_env(), cwd=REPO
    )
    assert result.returncode == 0, result.stderr
    assert "\x1b[" not in result.stdout
    assert "BacklogQueue contoso-dev-weu/x-servicebus-transfer/0" in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= 160


def test_a_terminal_gets_colour() -> None:
    out = _run_in_pty([sys.executable, "-m", "pairedbus.cli", "plan", "dev"], _env())
    assert any(code in out for code in COLOUR), out[:400]


def test_no_color_on_a_terminal_means_no_colour() -> None:
    out = _run_in_pty([sys.executable, "-m", "pairedbus.cli", "plan", "dev"], _env(NO_COLOR="1"))
    assert "contoso-dev-weu/x-servicebus-transfer/0" in out
    assert not any(code in out for code in COLOUR), out[:400]


def test_console_on_a_string_buffer_is_plain() -> None:
    buffer = io.StringIO()
    console(buffer).print("[red]alert[/red]")
    assert buffer.getvalue() == "alert\n"


def test_problems_are_bounded_with_a_count_of_the_rest() -> None:
    assert list(bounded([f"p{i}" for i in range(25)], limit=20)) == [f"p{i}" for i in range(20)] + ["... and 5 more"]
    assert list(bounded(["a", "b"], limit=20)) == ["a", "b"]


def test_an_unwritable_output_names_its_flag(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(UserError, match=r"^--json .*file/plan\.json: not writable"):
        check_writable(a_file / "plan.json", "--json")
    with pytest.raises(UserError, match="is a directory"):
        check_writable(tmp_path, "--json")
    with pytest.raises(UserError, match=r"--out .*: exists and is not a directory"):
        check_writable_dir(a_file, "--out")
    check_writable(tmp_path / "new" / "plan.json", "--json")  # parents are created, nothing left behind
    assert list((tmp_path / "new").iterdir()) == []


def test_plan_checks_json_before_rendering(tmp_path: Path, monkeypatch, capsys) -> None:
    def render_stack(*_args, **_kwargs):
        raise AssertionError("rendered before the output was checked")

    monkeypatch.setattr("pairedbus.iac.render.render_stack", render_stack)
    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert main(["plan", "dev", "--project-dir", str(REPO), "--json", str(a_file / "plan.json")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("pairedbus: error: --json ")


def test_export_progress_is_drawn_on_a_terminal_only() -> None:
    import io

    from pairedbus.commands.output import Steps

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    piped = io.StringIO()
    with Steps("inventory: namespaces", stream=piped) as steps:
        steps("contoso-prod-weu")
    assert piped.getvalue() == "" and steps.done == 1

    terminal = Terminal()
    with Steps("inventory: namespaces", stream=terminal) as steps:
        steps("contoso-prod-weu")
        steps("contoso-prod-neu")
    assert steps.done == 2 and "inventory: namespaces" in terminal.getvalue()
