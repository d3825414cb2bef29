"""The type checker: mypy, strict, as pyproject.toml's [tool.mypy] configures it.

The runtime's packages and the Service Bus model (`pairedbus.servicebus`) are strict with no exception; the rest of `src/pairedbus` is
strict except for the error codes its per-module overrides list (each with its reason); `benchmarks/` is
strict too. Any error fails, with mypy's report as the message. mypy's cache is the checkout's `.mypy_cache` (ignored by git): a cold
run of the whole tree takes minutes, a warm one seconds.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.load import guard

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = REPO / "pyproject.toml"

#: Strict with no override: the runtime (paired-namespaces.md's sender and syphon, and what they share)
#: and the Service Bus model both fakes serve, the whole package.
STRICT_PACKAGES = ("pairedbus.pairing", "pairedbus.sender", "pairedbus.syphon", "pairedbus.servicebus")
#: Test modules whose assertions are static (checked by this run, not by pytest): the SDK's aio
#: classes and the fake's satisfy the runtime's ports.
STATIC_TESTS = ("tests.pairing.test_ports",)


def _mypy(*targets: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(PYPROJECT), "--no-error-summary", *targets],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=guard(900),  # a hang guard: a cold run of the whole tree took > 900 s at load 15 on 2 cores
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _overridden_modules() -> list[str]:
    overrides = tomllib.loads(PYPROJECT.read_text())["tool"]["mypy"].get("overrides", [])
    modules: list[str] = []
    for override in overrides:
        module = override["module"]
        modules.extend([module] if isinstance(module, str) else module)
    return modules


def test_no_override_relaxes_a_strict_package() -> None:
    strict = STRICT_PACKAGES
    relaxed = [
        module
        for module in _overridden_modules()
        if any(
            module == name or module.startswith(f"{name}.") or name.startswith(module.rstrip("*")) for name in strict
        )
    ]
    assert relaxed == []


def test_the_runtime_and_the_fakes_model_type_check_strictly() -> None:
    targets = [arg for package in STRICT_PACKAGES for arg in ("-p", package)]
    _mypy(*targets, *(arg for module in STATIC_TESTS for arg in ("-m", module)))


@pytest.mark.slow
@pytest.mark.timeout(900)  # stretched with the load by tests/load.py, as the subprocess's own bound
def test_src_with_its_listed_overrides_and_the_benchmarks_type_check() -> None:
    packages = tomllib.loads(PYPROJECT.read_text())["tool"]["mypy"]["packages"]
    benchmarks = sorted(str(path.relative_to(REPO)) for path in (REPO / "benchmarks").glob("*.py"))
    # One run, of files (mypy takes packages or files, not both): the benchmarks import src, which a
    # second run would check again from a cold cache (140 s of CPU).
    _mypy(*(str(Path("src", *package.split("."))) for package in packages), *benchmarks)
