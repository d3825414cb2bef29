"""The `pairedbus` command: every sub-command registered, user errors as one line."""

from __future__ import annotations

import argparse

import pytest

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


def test_a_missing_module_of_our_own_is_a_bug_not_a_user_error(monkeypatch) -> None:
    def handler(_args):
        raise ModuleNotFoundError("No module named 'pairedbus.nothing'", name="pairedbus.nothing")

    with pytest.raises(ModuleNotFoundError):
        _run_with_handler(monkeypatch, handler)
