"""scripts/bootstrap run by two checkouts at once (two copies of the suite side by side, the browser asked for): one
installs the browser with apt, the other waits for it instead of failing on apt's lock."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.load import guard

REPO = Path(__file__).resolve().parents[1]

#: apt-get as far as the lock goes: a second one while the first holds the lists' lock fails as apt's does.
FAKE_APT = """#!/usr/bin/env bash
set -u
lock="$FAKE_ROOT/apt.lock"
if ! mkdir "$lock" 2>/dev/null; then
  echo "E: Could not get lock /var/lib/apt/lists/lock" >&2
  exit 100
fi
echo "$*" >> "$FAKE_ROOT/apt-calls"
sleep 0.5
case " $* " in *" install "*) printf '#!/bin/sh\\n' > "$FAKE_ROOT/bin/chromium"; chmod +x "$FAKE_ROOT/bin/chromium";; esac
rmdir "$lock"
"""


def _checkout(root: Path) -> Path:
    """A checkout whose .venv is already installed: bootstrap goes straight to the browser."""
    (root / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "bootstrap", root / "scripts" / "bootstrap")
    (root / "pyproject.toml").write_text("")
    (root / ".venv" / "bin").mkdir(parents=True)
    (root / ".venv" / "bin" / "python").symlink_to(sys.executable)
    stamp = root / ".venv" / ".pairedbus-installed"
    stamp.write_text("")
    os.utime(root / "pyproject.toml", (0, 0))
    return root


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("flock") is None, reason="bootstrap installs only as root")
def test_two_checkouts_bootstrapping_at_once_install_the_browser_once(tmp_path: Path) -> None:
    # Before, the second apt-get failed on the lock and `set -e` ended that checkout's scripts/test (exit 100).
    fake = tmp_path / "fake"
    (fake / "bin").mkdir(parents=True)
    (fake / "bin" / "apt-get").write_text(FAKE_APT)
    (fake / "bin" / "apt-get").chmod(0o755)
    tools = tmp_path / "tools"  # what bootstrap and the fake use, without the machine's own chromium
    tools.mkdir()
    for tool in ("bash", "dirname", "id", "flock", "mkdir", "rmdir", "sleep", "chmod"):
        found = shutil.which(tool)
        assert found is not None, tool
        (tools / tool).symlink_to(found)
    env = {**os.environ, "PATH": f"{fake / 'bin'}:{tools}", "FAKE_ROOT": str(fake), "PAIREDBUS_INSTALL_BROWSER": "1"}
    runs = [
        subprocess.Popen(
            ["bash", str(_checkout(tmp_path / name) / "scripts" / "bootstrap")],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for name in ("a", "b")
    ]
    outcomes = [(run.wait(timeout=guard(60)), run.stdout.read() if run.stdout else "") for run in runs]
    for run in runs:
        if run.stdout:
            run.stdout.close()
    assert [code for code, _ in outcomes] == [0, 0], outcomes
    calls = (fake / "apt-calls").read_text().splitlines()
    assert [call.split()[-1] for call in calls] == ["-qq", "chromium"], calls  # one update, one install
