"""The syphon image's Dockerfile: lint-clean, multi-stage, pinned, non-root, and complete.

No Docker engine here, so the build itself is not run; instead the runtime package list is checked
against what `pairedbus syphon` actually imports, in a subprocess that refuses everything else.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from pairedbus.service.endpoints import DEFAULT_PORT

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


def _pinned_requirements() -> list[Requirement]:
    """The `name==version` arguments of the image's pip installs."""
    pins = []
    for stage in _parse()[1]:
        for run in stage.all("RUN"):
            for token in shlex.split(run):
                if re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[A-Za-z0-9_.\-]+", token):
                    pins.append(Requirement(token))
    return pins


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
    assert any(run.startswith("pip wheel") for run in build.all("RUN"))
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


def test_the_package_goes_in_with_its_pinned_core_dependencies_and_no_pip_cache() -> None:
    runs = " ".join(run for stage in _parse()[1] for run in stage.all("RUN"))
    (install,) = [i for i in re.findall(r"pip install[^&]*", runs) if "/wheels/" in i]
    assert "--no-deps" not in install  # pip resolves the wheel's own requirements with the pins
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


def test_every_core_dependency_is_pinned_within_its_range_and_nothing_heavy() -> None:
    declared = _project_dependencies()
    pins = _pinned_requirements()
    assert {canonicalize_name(p.name) for p in pins} == set(declared), "pin exactly pyproject's core dependencies"
    for pin in pins:
        name = canonicalize_name(pin.name)
        assert name not in HEAVY
        assert name in declared, f"{pin} is not a dependency in pyproject.toml"
        (version,) = (s.version for s in pin.specifier)
        assert declared[name].specifier.contains(version), f"{pin} is outside pyproject's {declared[name]}"


def _closure(names: list[str]) -> set[str]:
    """The installed distributions these pull in (the venv stands in for the image's resolver)."""
    environment = {**default_environment(), "extra": ""}
    seen: set[str] = set()
    todo = [canonicalize_name(n) for n in names]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for raw in metadata.requires(name) or []:
            requirement = Requirement(raw)
            if requirement.marker is None or requirement.marker.evaluate(environment):
                todo.append(canonicalize_name(requirement.name))
    return seen


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
    distributions = _closure([r.name for r in _pinned_requirements()])
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
