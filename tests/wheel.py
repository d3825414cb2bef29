"""The package's wheel, built offline from a copy of the checkout (no build isolation: setuptools is in the venv)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.load import guard

REPO = Path(__file__).resolve().parents[1]


def build_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build `pairedbus-*.whl` from pyproject.toml, README.md and src/ only, so nothing else of the checkout can
    leak into it; returns its path."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    out = tmp_path_factory.mktemp("dist")
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), "."]
    result = subprocess.run(command, cwd=source, capture_output=True, text=True, timeout=guard(600))
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    (built,) = out.glob("pairedbus-*.whl")
    return built
