"""The syphon image's Dockerfile: lint-clean, multi-stage, pinned, non-root, and complete.

No Docker engine here, so the build itself is not run; instead the runtime lock (what `pip install
--require-hashes` puts in the image) is checked against what `pairedbus syphon` actually imports, in a
subprocess that refuses everything else.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import Marker, default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from pairedbus.service.endpoints import DEFAULT_PORT
from tests.test_hashed_installs import Pin, dockerfile_pip_calls, lock_pins

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
HADOLINT = Path(sys.executable).with_name("hadolint")
#: Distributions the syphon must never drag into its image.
HEAVY = {"pyspark", "pulumi", "pulumi-azure-native", "pulumi-policy", "duckdb"}


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [args for kw, args in self.instructions if kw == keyword]


def _instructions(text: str) -> list[tuple[str, str]]:
    joined = re.sub(r"\\\n", " ", text)
    result = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, args = line.partition(" ")
            result.append((keyword.upper(), " ".join(args.split())))
    return result


@cache
def _parse() -> tuple[dict[str, str], list[Stage]]:
    args: dict[str, str] = {}
    stages: list[Stage] = []
    for keyword, rest in _instructions(DOCKERFILE.read_text()):
        if keyword == "ARG" and not stages:
            name, _, default = rest.partition("=")
            args[name] = default
        elif keyword == "FROM":
            parts = rest.split()
            base = re.sub(r"\$\{(\w+)\}", lambda m: args[m[1]], parts[0])
            stages.append(Stage(base=base, name=parts[2] if len(parts) > 2 and parts[1].upper() == "AS" else None))
        else:
            stages[-1].instructions.append((keyword, rest))
    return args, stages


def _image_lock() -> Path:
    """The lock the runtime venv installs from (`/opt/venv/bin/pip install --require-hashes -r LOCK`)."""
    [lock] = [
        lock
        for call in dockerfile_pip_calls(DOCKERFILE.read_text())["build"]
        if call.venv == "/opt/venv" and "--require-hashes" in call.flags
        for lock in call.values.get("requirement", [])
    ]
    return ROOT / lock


def _image_pins() -> list[Pin]:
    """What the image's runtime venv holds besides pairedbus: the lock's pins that apply to the image's
    Python (CPython 3.11 on Linux; a pin for Windows or PyPy is skipped by pip there too)."""
    environment = {**default_environment(), "extra": ""}
    environment |= {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"}
    environment |= {"implementation_name": "cpython", "platform_python_implementation": "CPython"}
    return [pin for pin in lock_pins(_image_lock()) if pin.marker is None or Marker(pin.marker).evaluate(environment)]


def _hadolint(path: Path) -> list[dict[str, object]]:
    result = subprocess.run(
        [str(HADOLINT), "--no-color", "--format", "json", str(path)], capture_output=True, text=True, check=False
    )
    return json.loads(result.stdout or "[]")


# --- Lint -------------------------------------------------------------------------------------


def test_hadolint_has_no_finding() -> None:
    assert _hadolint(DOCKERFILE) == []


def test_hadolint_does_report_a_known_bad_dockerfile(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:latest\nRUN pip install requests\n")
    codes = {finding["code"] for finding in _hadolint(bad)}
    assert {"DL3007", "DL3013"} <= codes


# --- Shape ------------------------------------------------------------------------------------


def test_image_is_multi_stage_and_the_runtime_takes_only_the_built_venv() -> None:
    _, stages = _parse()
    assert len(stages) >= 2
    build, runtime = stages[0], stages[-1]
    assert any("pip wheel" in run for run in build.all("RUN"))
    assert runtime.all("COPY") == [f"--from={build.name} /opt/venv /opt/venv"]


def test_every_stage_uses_the_same_pinned_python_3_11_slim_bookworm_base() -> None:
    _, stages = _parse()
    bases = {stage.base for stage in stages}
    assert len(bases) == 1
    (base,) = bases
    assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm@sha256:[0-9a-f]{64}", base), base


def test_runtime_runs_as_a_non_root_user() -> None:
    runtime = _parse()[1][-1]
    (user,) = runtime.all("USER")
    name, _, group = user.partition(":")
    assert name not in ("root", "0") and group not in ("root", "0")
    keywords = [kw for kw, _ in runtime.instructions]
    assert keywords.index("USER") > max(i for i, kw in enumerate(keywords) if kw in ("RUN", "COPY"))


def test_entrypoint_is_the_syphon_command_in_exec_form_and_exposes_the_service_port() -> None:
    runtime = _parse()[1][-1]
    (entrypoint,) = runtime.all("ENTRYPOINT")
    assert json.loads(entrypoint) == ["pairedbus", "syphon"]
    assert runtime.all("EXPOSE") == [str(DEFAULT_PORT)]
    assert runtime.all("HEALTHCHECK") == []  # Container Apps probes /healthz instead


def test_the_package_goes_in_without_dependencies_after_its_lock_then_pip_check_and_no_pip_cache() -> None:
    runs = " ".join(run for stage in _parse()[1] for run in stage.all("RUN"))
    (install,) = [i for i in re.findall(r"pip install[^&]*", runs) if "/wheels/" in i]
    # Its dependencies came from the hashed lock just before; pip check fails the build if one is missing.
    assert "--no-deps" in install
    assert (
        runs.index("--require-hashes -r requirements-syphon-lock.txt") < runs.index(install) < runs.index("pip check")
    )
    for command in re.findall(r"pip (?:install|wheel)[^&]*", runs):
        assert "--no-cache-dir" in command


def test_every_copied_path_exists_in_the_build_context() -> None:
    for stage in _parse()[1]:
        for copy in stage.all("COPY"):
            if not copy.startswith("--from="):
                *sources, _destination = copy.split()
                missing = [source for source in sources if not (ROOT / source).exists()]
                assert not missing, f"COPY {copy}: {missing} not in the repository; the build would fail"


def test_dockerignore_is_an_allow_list_that_admits_every_copied_path() -> None:
    lines = [line for line in DOCKERIGNORE.read_text().splitlines() if line and not line.startswith("#")]
    assert lines[0] == "*"
    allowed = {line[1:].rstrip("/") for line in lines if line.startswith("!")}
    for stage in _parse()[1]:
        for copy in stage.all("COPY"):
            if copy.startswith("--from="):
                continue
            *sources, _destination = copy.split()
            assert set(sources) <= allowed, f"COPY {copy} needs a '!' line in .dockerignore"


# --- Runtime packages -------------------------------------------------------------------------


def _project_dependencies() -> dict[str, Requirement]:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return {canonicalize_name(r.name): r for r in map(Requirement, pyproject["project"]["dependencies"])}


def test_every_core_dependency_is_locked_within_its_range_and_nothing_heavy() -> None:
    declared = _project_dependencies()
    pins = {pin.name: pin for pin in _image_pins()}
    assert set(declared) <= set(pins), set(declared) - set(pins)
    assert not set(pins) & HEAVY
    for name, requirement in declared.items():
        assert requirement.specifier.contains(pins[name].version), f"{pins[name]} is outside pyproject's {requirement}"


_IMPORT_CHECK = """
import importlib.abc, json, sys

ABSENT = set(json.loads(sys.argv[1]))


class NotInImage(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.partition(".")[0] not in ABSENT:
            return None
        raise ModuleNotFoundError(f"{name} is not installed in the syphon image", name=name)


sys.meta_path.insert(0, NotInImage())
from pairedbus import cli

cli.build_parser()
import azure.identity.aio
import pairedbus.service.syphon_process
from pairedbus.syphon import Syphon, SyphonFaulted
import azure.mgmt.servicebus.aio  # the syphon lists backlog queues through ARM in Azure

print("ok")
"""


def test_the_image_packages_cover_every_import_of_pairedbus_syphon() -> None:
    distributions = {pin.name for pin in _image_pins()}
    assert not distributions & HEAVY
    # Top-level modules installed here that no image distribution provides (pairedbus itself aside).
    absent = sorted(
        module
        for module, owners in metadata.packages_distributions().items()
        if module != "pairedbus" and not any(canonicalize_name(owner) in distributions for owner in owners)
    )
    assert {"pyspark", "pulumi"} <= set(absent)
    result = subprocess.run(
        [sys.executable, "-c", _IMPORT_CHECK, json.dumps(absent)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "ok"


@pytest.mark.parametrize("heavy", ["pyspark", "pulumi"])
def test_the_import_check_refuses_what_the_image_lacks(heavy: str) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            _IMPORT_CHECK.replace("from pairedbus import cli", f"import {heavy}"),
            json.dumps([heavy]),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0
    assert f"{heavy} is not installed in the syphon image" in result.stderr
