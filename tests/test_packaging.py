"""The built package, used from outside this repository: `pip install pairedbus[iac]` then
`from pairedbus.iac import PairedNamespace` works, with the package's data files, and nothing needs the checkout.

The wheel is built from a copy of the sources (no build artefacts in the checkout) with the venv's setuptools,
installed with `pip install --no-deps --target`, and imported in a fresh interpreter whose working directory is
a temporary one and whose only path to pairedbus is that target (the venv supplies the dependencies).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
import zipfile
from fnmatch import fnmatch
from pathlib import Path

import pytest

from tests.load import guard

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "pairedbus"


def _run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=guard(300))
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def outside(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Install the wheel into <tmp>/site and import it from <tmp>, with nothing of the checkout on the path."""
    tmp = tmp_path_factory.mktemp("outside")
    site = tmp / "site"
    _run(sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel), cwd=tmp)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    env["PYTHONPATH"] = str(site)
    script = (
        "import json, importlib.resources as r, pairedbus, pairedbus.iac\n"
        "from pairedbus.iac import PairedNamespace, PairedNamespaceArgs\n"
        "from pairedbus.iac.provider import COMPONENTS\n"
        "data = sorted(str(p.relative_to(r.files('pairedbus'))) for p in r.files('pairedbus').rglob('*')"
        " if p.is_file() and p.suffix not in ('.py', '.pyc'))\n"
        "print(json.dumps({'file': pairedbus.__file__, 'component': PairedNamespace.__module__,"
        " 'components': [c.__name__ for c in COMPONENTS], 'data': data}))\n"
    )
    report = json.loads(_run(sys.executable, "-c", script, cwd=tmp, env=env).strip().splitlines()[-1])
    return {**report, "site": str(site)}


@pytest.mark.slow  # builds the wheel and installs it with pip (subprocesses)
def test_paired_namespace_imports_from_outside_the_repository(outside: dict[str, object]) -> None:
    assert Path(str(outside["file"])).resolve().is_relative_to(Path(str(outside["site"])).resolve())
    assert not Path(str(outside["file"])).resolve().is_relative_to(REPO)
    assert outside["component"] == "pairedbus.iac.components.paired_namespace"
    assert "PairedNamespace" in outside["components"]  # type: ignore[operator]


@pytest.mark.slow  # builds the wheel and installs it with pip (subprocesses)
def test_the_package_data_is_installed(outside: dict[str, object]) -> None:
    data = set(outside["data"])  # type: ignore[arg-type]
    assert "py.typed" in data
    assert "pipeline/prices/azure-service-bus-usd-2024-09.json" in data


@pytest.mark.slow  # builds the wheel and installs it with pip (subprocesses)
def test_every_data_file_of_the_source_is_in_the_wheel_and_every_pattern_matches_one(wheel: Path) -> None:
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["pairedbus"]
    source_data = sorted(
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    )
    in_wheel = {n.removeprefix("pairedbus/") for n in zipfile.ZipFile(wheel).namelist() if n.startswith("pairedbus/")}
    assert source_data and set(source_data) <= in_wheel
    for pattern in patterns:
        assert any(fnmatch(f, pattern) for f in source_data), f"package-data pattern {pattern!r} matches no file"


@pytest.mark.slow  # builds the wheel and installs it with pip (subprocesses)
def test_the_wheel_declares_an_spdx_license_and_the_iac_extra(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        text = archive.read(metadata).decode()
    assert "License-Expression: MIT" in text.splitlines()
    assert "Provides-Extra: iac" in text.splitlines()
    assert any(line.startswith("Requires-Dist: pulumi") and 'extra == "iac"' in line for line in text.splitlines())


@pytest.mark.slow  # builds the wheel and installs it with pip (subprocesses)
def test_the_wheel_has_no_tests_and_no_repository_program(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert not any(
        n.startswith(("tests/", "components/", "examples/", "provider/")) or n == "__main__.py" for n in names
    )


def test_no_test_needs_the_checkout_on_sys_path() -> None:
    options = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "pythonpath" not in options
