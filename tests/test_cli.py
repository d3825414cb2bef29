"""The `pairedbus` command: every sub-command registered, user errors as one line."""

from __future__ import annotations

import argparse

from pairedbus import cli
from pairedbus.errors import UserError


def test_every_command_module_is_registered() -> None:
    parser = cli.build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(subparsers.choices) >= set(cli.COMMAND_MODULES)


def _run_with_handler(monkeypatch, handler) -> int:
    from pairedbus.commands import plan

    monkeypatch.setattr(plan, "run", handler)
    return cli.main(["plan", "dev"])


def test_a_user_error_is_one_line_and_exit_2(monkeypatch, capsys) -> None:
    def handler(_args):
        raise UserError("--json: expected a writable path")

    assert _run_with_handler(monkeypatch, handler) == 2
    assert capsys.readouterr().err == "pairedbus: error: --json: expected a writable path\n"


def test_a_missing_optional_dependency_names_the_extra(monkeypatch, capsys) -> None:
    def handler(_args):
        raise ModuleNotFoundError("No module named 'pyspark'", name="pyspark")

    assert _run_with_handler(monkeypatch, handler) == 2
    assert "pip install 'pairedbus[audit]'" in capsys.readouterr().err


def test_a_missing_module_of_our_own_is_a_bug_not_a_user_error(monkeypatch, capsys) -> None:
    def handler(_args):
        raise ModuleNotFoundError("No module named 'pairedbus.nothing'", name="pairedbus.nothing")

    assert _run_with_handler(monkeypatch, handler) == 3
    err = capsys.readouterr().err
    assert err == (
        "pairedbus: internal error: ModuleNotFoundError: No module named 'pairedbus.nothing' "
        "(run again with --debug for the traceback)\n"
    )


def test_debug_prints_the_traceback_of_an_internal_error(monkeypatch, capsys) -> None:
    from pairedbus.commands import plan

    def handler(_args):
        raise RuntimeError("boom")

    monkeypatch.setattr(plan, "run", handler)
    assert cli.main(["--debug", "plan", "dev"]) == 3
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert err.splitlines()[-1] == "pairedbus: internal error: RuntimeError: boom"


def test_many_config_problems_are_capped_with_a_count(monkeypatch, capsys) -> None:
    from pairedbus.iac.config import StackConfigError

    def handler(_args):
        raise StackConfigError([f"pairedbus:queues[{i}].name: expected a name" for i in range(30)])

    assert _run_with_handler(monkeypatch, handler) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 21
    assert lines[0] == "pairedbus: error: pairedbus:queues[0].name: expected a name"
    assert lines[-1] == "pairedbus: error: ... and 10 more"


def test_a_huge_user_error_is_still_one_bounded_line(monkeypatch, capsys) -> None:
    def handler(_args):
        raise UserError("--json: " + "x" * 5000 + "\nsecond line")

    assert _run_with_handler(monkeypatch, handler) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 600


def test_the_command_line_does_not_import_the_stack_configuration_at_start() -> None:
    """Commands that never read a stack (the audit, the drill) do not pay for its models: importing them
    was 0.30 s of the CLI's 0.40 s at start (`python -X importtime`)."""
    import subprocess
    import sys

    probe = "import sys, pairedbus.cli; print('pairedbus.iac.config' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
