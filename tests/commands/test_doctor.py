"""`pairedbus doctor`: one line per requirement, exit 1 when anything is missing, no network."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from pairedbus.cli import main


def _tool(folder: Path, name: str, script: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def _clear_azure_env(monkeypatch) -> None:
    for name in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)


def test_everything_present_is_ready(tmp_path: Path, monkeypatch, capsys) -> None:
    _tool(tmp_path, "java", "echo 'openjdk version \"17.0.15\" 2025-04-15' >&2")
    _tool(tmp_path, "pulumi", 'case "$1" in version) echo v3.200.0;; whoami) echo platform-team;; esac')
    _tool(tmp_path, "az", "exit 0")
    monkeypatch.setenv("PATH", str(tmp_path))
    _clear_azure_env(monkeypatch)
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "7 of 7 ready"
    assert any(line.startswith("ok") and "Java 17" in line for line in out)
    assert any(line.startswith("ok") and "platform-team" in line for line in out)


def test_each_missing_piece_is_one_line_saying_what_to_do(tmp_path: Path, monkeypatch, capsys) -> None:
    _tool(tmp_path, "java", "echo 'java version \"1.8.0_392\"' >&2")
    _tool(
        tmp_path,
        "pulumi",
        'case "$1" in version) echo v3.200.0;; whoami) echo "error: not logged in" >&2; exit 1;; esac',
    )
    monkeypatch.setenv("PATH", str(tmp_path))
    _clear_azure_env(monkeypatch)
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out.splitlines()
    missing = [line for line in out if line.startswith("MISSING")]
    assert [line.split()[1] for line in missing] == ["java", "pulumi", "azure"]
    assert "Java 8: Spark 4 needs Java >= 17" in missing[0]
    assert "run `pulumi login`" in missing[1]
    assert "run `az login`" in missing[2]
    assert out[-1] == "4 of 7 ready; 3 missing"


def test_a_service_principal_in_the_environment_counts(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("AZURE_CLIENT_ID", "00000000-0000-0000-0000-000000000001")
    monkeypatch.setenv("AZURE_TENANT_ID", "00000000-0000-0000-0000-000000000002")
    monkeypatch.setenv("AZURE_FEDERATED_TOKEN_FILE", "/var/run/token")
    main(["doctor"])
    assert any(
        line.startswith("ok") and "AZURE_FEDERATED_TOKEN_FILE" in line for line in capsys.readouterr().out.splitlines()
    )


def test_version_in_process_and_as_a_subprocess(capsys) -> None:
    try:
        main(["--version"])
    except SystemExit as exc:
        assert exc.code == 0
    assert capsys.readouterr().out.strip() == "pairedbus 0.1.0"
    result = subprocess.run(
        [sys.executable, "-m", "pairedbus.cli", "--version"], capture_output=True, text=True, env={**os.environ}
    )
    assert (result.returncode, result.stdout.strip()) == (0, "pairedbus 0.1.0")
