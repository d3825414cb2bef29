"""Hashed from source to image: every pip install in the workflows and the Dockerfile checks a sha256.

An install passes only when it is one of:
- a hashed install: `--require-hashes` with every requirement read from a lock file (`-r LOCK`) in which
  every pinned requirement carries its hashes; nothing named on the command line;
- this package alone (`--no-deps`) built by a hashed backend: a source install or `pip wheel` of `.` with
  `--no-build-isolation`, in a venv that installed requirements-build-lock.txt before; or a wheel such a
  `pip wheel` wrote earlier in the same job or stage.
Anything else (an unpinned name, a pin without a hash, a build that lets pip fetch setuptools from the
index) is listed by where it is and what it says.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
DOCKERFILE = ROOT / "Dockerfile"
BUILD_LOCK = "requirements-build-lock.txt"
SYPHON_LOCK = "requirements-syphon-lock.txt"
VENV_LOCKS = ("requirements-lock.txt", "policies/requirements-lock.txt", SYPHON_LOCK)

#: pip options that take a value (the ones these files use, and those that name what gets installed).
_VALUED = {
    "-r": "requirement",
    "--requirement": "requirement",
    "-e": "editable",
    "--editable": "editable",
    "-c": "constraint",
    "--constraint": "constraint",
    "-w": "wheel-dir",
    "--wheel-dir": "wheel-dir",
    "-i": "index-url",
    "--index-url": "index-url",
    "--extra-index-url": "index-url",
    "-f": "index-url",
    "--find-links": "index-url",
    "-t": "target",
    "--target": "target",
}


# --- Lock files --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pin:
    name: str
    version: str
    marker: str | None
    hashes: tuple[str, ...]
    via: tuple[str, ...]


def lock_pins(path: Path) -> list[Pin]:
    """The pinned requirements of a lock scripts/lock writes; a line that is none of pin, hash, comment fails."""
    pins: list[Pin] = []
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.startswith("#"):
            continue
        match = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?", line)
        if not match:
            raise ValueError(f"{path.name}: not a pinned requirement: {line!r}")
        hashes, via = [], []
        while i < len(lines) and lines[i].startswith("    "):
            item = lines[i].strip()
            i += 1
            if hashed := re.fullmatch(r"--hash=sha256:([0-9a-f]{64})\s*\\?", item):
                hashes.append(hashed[1])
            elif item.startswith("#"):
                via.append(re.sub(r"^#\s*(via\s*)?", "", item))
            else:
                raise ValueError(f"{path.name}: {match[1]}: not a hash: {item!r}")
        pins.append(Pin(canonicalize_name(match[1]), match[2], match[3], tuple(hashes), tuple(v for v in via if v)))
    return pins


def is_hashed_lock(path: Path) -> bool:
    try:
        pins = lock_pins(path)
    except (OSError, ValueError):
        return False
    return bool(pins) and all(pin.hashes for pin in pins)


# --- Shell commands --------------------------------------------------------------------------------------


def simple_commands(script: str) -> list[list[str]]:
    """The simple commands of a shell script: continuations joined, split on `&&`, `||`, `;`, `|`, comments off."""
    commands: list[list[str]] = []
    for line in script.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        lexer.commenters = ""
        current: list[str] = []
        for token in lexer:
            if token.startswith("#"):  # a comment: a word that starts with #
                break
            if token and set(token) <= set(";&|"):
                if current:
                    commands.append(current)
                current = []
            else:
                current.append(token)
        if current:
            commands.append(current)
    return commands


@dataclass
class PipCall:
    where: str
    text: str
    venv: str  # the directory whose bin/ holds the pip (or python -m pip); "" for a bare `pip`
    verb: str
    flags: set[str] = field(default_factory=set)
    values: dict[str, list[str]] = field(default_factory=dict)
    targets: list[str] = field(default_factory=list)  # positional arguments: names, paths, `.`


def pip_call(where: str, tokens: list[str]) -> PipCall | None:
    while tokens and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", tokens[0]):  # VAR=value before a command
        tokens = tokens[1:]
    if not tokens:
        return None
    exe = PurePosixPath(tokens[0])
    if re.fullmatch(r"pip[0-9.]*", exe.name):
        rest = tokens[1:]
    elif re.fullmatch(r"python[0-9.]*", exe.name) and tokens[1:3] == ["-m", "pip"]:
        rest = tokens[3:]
    else:
        return None
    venv = str(exe.parent.parent) if exe.parent.name == "bin" else ""
    call = PipCall(where=where, text=" ".join(tokens), venv=venv, verb="")
    args = iter(rest)
    for arg in args:
        option, eq, value = arg.partition("=")
        if option in _VALUED:
            call.values.setdefault(_VALUED[option], []).append(value if eq else next(args, ""))
        elif arg.startswith("-"):
            call.flags.add(arg)
        elif not call.verb:
            call.verb = arg
        else:
            call.targets.append(arg)
    return call


# --- The rule ------------------------------------------------------------------------------------------------


@dataclass
class _Context:
    """What one job (or one image stage) has done so far: venvs holding the hashed backend, wheels built so."""

    backend_in: set[str] = field(default_factory=set)
    wheel_dirs: set[str] = field(default_factory=set)


def _hashed_install(call: PipCall, root: Path) -> bool:
    locks = call.values.get("requirement", [])
    return (
        "--require-hashes" in call.flags
        and bool(locks)
        and not call.targets
        and not call.values.get("editable")
        and all(is_hashed_lock(root / lock) for lock in locks)
    )


def _built_by_hashed_backend(call: PipCall, context: _Context) -> bool:
    """`pip install`/`pip wheel` of this source tree alone, built by the venv's hashed backend."""
    source = call.targets + call.values.get("editable", [])
    return (
        source == ["."]
        and "--no-deps" in call.flags
        and "--no-build-isolation" in call.flags
        and call.venv in context.backend_in
        and not call.values.get("requirement")
    )


def _prebuilt_wheel(call: PipCall, context: _Context) -> bool:
    return (
        call.verb == "install"
        and "--no-deps" in call.flags
        and len(call.targets) == 1
        and call.targets[0].endswith(".whl")
        and str(PurePosixPath(call.targets[0]).parent) in context.wheel_dirs
        and not call.values.get("requirement")
        and not call.values.get("editable")
    )


def unhashed_installs(calls: list[PipCall], root: Path = ROOT) -> list[str]:
    """`where: command` of every call that installs, builds or downloads something no hash covers."""
    bad = []
    context = _Context()
    for call in calls:
        if call.verb not in ("install", "wheel", "download"):
            continue  # pip check, pip list, pip --version
        if call.verb != "wheel" and _hashed_install(call, root):
            if BUILD_LOCK in call.values["requirement"]:
                context.backend_in.add(call.venv)
        elif call.verb != "download" and _built_by_hashed_backend(call, context):
            if call.verb == "wheel":
                context.wheel_dirs.update(call.values.get("wheel-dir", []))
        elif not _prebuilt_wheel(call, context):
            bad.append(f"{call.where}: {call.text}")
    return bad


def workflow_pip_calls(path: Path) -> dict[str, list[PipCall]]:
    """Each job's pip calls, in step order."""
    import yaml

    jobs = yaml.safe_load(path.read_text())["jobs"]
    calls = {}
    for name, job in jobs.items():
        where = f"{path.name}: {name}"
        runs = [step.get("run", "") for step in job.get("steps", [])]
        calls[name] = [c for run in runs for tokens in simple_commands(run) if (c := pip_call(where, tokens))]
    return calls


def dockerfile_pip_calls(text: str, name: str = "Dockerfile") -> dict[str, list[PipCall]]:
    """Each stage's pip calls, in order (shell-form RUN instructions)."""
    calls: dict[str, list[PipCall]] = {}
    stage = ""
    for line in text.replace("\\\n", " ").splitlines():
        keyword, _, rest = line.strip().partition(" ")
        if keyword.upper() == "FROM":
            stage = rest.split()[-1] if " as " in f" {rest.lower()} " else str(len(calls))
            calls[stage] = []
        elif keyword.upper() == "RUN":
            where = f"{name}: stage {stage}"
            calls[stage] += [c for tokens in simple_commands(rest) if (c := pip_call(where, tokens))]
    return calls


def all_unhashed() -> list[str]:
    bad = []
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for calls in workflow_pip_calls(path).values():
            bad += unhashed_installs(calls)
    for calls in dockerfile_pip_calls(DOCKERFILE.read_text()).values():
        bad += unhashed_installs(calls)
    return bad


# --- The repository ---------------------------------------------------------------------------------------


def test_no_workflow_and_no_image_stage_installs_anything_unhashed() -> None:
    assert all_unhashed() == []


def test_every_workflow_job_and_the_image_install_something_the_check_saw() -> None:
    # The check above passes vacuously if the parser finds no pip at all: make sure it reads them.
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for job, calls in workflow_pip_calls(path).items():
            assert any(c.verb == "install" for c in calls), f"{path.name}: {job}"
    stages = dockerfile_pip_calls(DOCKERFILE.read_text())
    verbs = [(c.verb, c.venv) for calls in stages.values() for c in calls]
    assert ("wheel", "/opt/build") in verbs and ("install", "/opt/venv") in verbs


@pytest.mark.parametrize("path", sorted(WORKFLOWS.glob("*.yml")), ids=lambda p: p.name)
def test_each_workflow_venv_takes_the_backend_then_its_lock_then_the_package(path: Path) -> None:
    for job, calls in workflow_pip_calls(path).items():
        for venv, lock, target in ((".venv", "requirements-lock.txt", "-e ."), ("policies/venv", VENV_LOCKS[1], ".")):
            mine = [c.text for c in calls if c.venv == venv and c.verb == "install"]
            if mine:
                pip = f"{venv}/bin/pip install"
                assert mine == [
                    f"{pip} --require-hashes -r {BUILD_LOCK}",
                    f"{pip} --require-hashes -r {lock}",
                    f"{pip} --no-build-isolation --no-deps {target}",
                ], (path.name, job)


def test_the_image_builds_the_wheel_with_the_locked_backend_and_installs_the_syphon_lock() -> None:
    build = dockerfile_pip_calls(DOCKERFILE.read_text())["build"]
    assert [(c.venv, c.verb, c.values.get("requirement"), c.targets) for c in build] == [
        ("/opt/build", "install", [BUILD_LOCK], []),
        ("/opt/build", "wheel", None, ["."]),
        ("/opt/venv", "install", [SYPHON_LOCK], []),
        ("/opt/venv", "install", None, ["/wheels/pairedbus-*.whl"]),
        ("/opt/venv", "check", None, []),
    ]
    assert "--no-build-isolation" in build[1].flags and "--no-deps" in build[3].flags


# --- The rule itself, on what it must refuse -------------------------------------------------------------------


BACKEND = f".venv/bin/pip install --require-hashes -r {BUILD_LOCK}"


@pytest.mark.parametrize(
    ("before", "line"),
    [
        ([], ".venv/bin/pip install --no-deps -e ."),  # the workflows before: pip fetches setuptools>=77 unhashed
        ([], "policies/venv/bin/pip install --no-deps ."),
        ([], ".venv/bin/pip install --no-build-isolation --no-deps -e ."),  # no backend installed by hash first
        ([BACKEND], "policies/venv/bin/pip install --no-build-isolation --no-deps ."),  # the backend is in another venv
        ([BACKEND], ".venv/bin/pip install --no-deps -e ."),  # isolation on: the backend comes from the index
        ([BACKEND], ".venv/bin/pip install --no-build-isolation -e ."),  # dependencies resolved from the index
        ([], ".venv/bin/pip install -r requirements.txt"),
        ([], ".venv/bin/pip install --require-hashes -r requirements.txt"),  # hashes asked, the file has none
        ([], ".venv/bin/pip install --require-hashes -r requirements-lock.txt pulumi==3.200.0"),
        ([], ".venv/bin/pip install --require-hashes -r requirements-lock.txt -e ."),
        ([], "pip install pulumi"),
        ([], "python -m pip install --upgrade pip"),
        ([], ".venv/bin/pip install --no-deps pulumi"),
        ([], "pip download -d out pulumi"),
        ([], "pip wheel --no-cache-dir --no-deps --wheel-dir /wheels ."),  # the image before: an isolated build
        ([], "pip install --no-deps /wheels/pairedbus-0.1.0-py3-none-any.whl"),  # a wheel nobody built here
    ],
)
def test_the_check_refuses_an_unhashed_install(before: list[str], line: str) -> None:
    script = "\n".join(["python -m venv .venv", *before, line])
    workflow_calls = [c for tokens in simple_commands(script) if (c := pip_call("x", tokens))]
    assert unhashed_installs(workflow_calls) == [f"x: {line}"]
    # The same in one RUN of a Dockerfile stage, joined with && and continuation lines.
    run = " \\\n    && ".join(["python -m venv .venv", *before, line])
    stages = dockerfile_pip_calls(f"FROM python:3.11 AS build\nRUN {run}\n")
    assert unhashed_installs(stages["build"]) == [f"Dockerfile: stage build: {line}"]


def test_the_check_reads_the_dockerfile_as_it_was_before_the_locks() -> None:
    old = """FROM python:3.11-slim AS build
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .
RUN python -m venv /opt/venv \\
    && /opt/venv/bin/pip install --no-cache-dir \\
        aiohttp==3.14.5 \\
        pyyaml==6.0.3 \\
        /wheels/pairedbus-*.whl
"""
    assert unhashed_installs(dockerfile_pip_calls(old)["build"]) == [
        "Dockerfile: stage build: pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .",
        "Dockerfile: stage build: /opt/venv/bin/pip install --no-cache-dir aiohttp==3.14.5 pyyaml==6.0.3"
        " /wheels/pairedbus-*.whl",
    ]


def test_the_check_passes_the_hashed_sequence_and_nothing_after_the_venv_changes() -> None:
    script = f"""python -m venv /opt/build
/opt/build/bin/pip install --require-hashes -r {BUILD_LOCK}  # the backend
/opt/build/bin/pip wheel --no-build-isolation --no-deps --wheel-dir /wheels .
/opt/venv/bin/pip install --require-hashes -r {SYPHON_LOCK} && /opt/venv/bin/pip install --no-deps /wheels/x.whl
/opt/venv/bin/pip check
/opt/venv/bin/pip wheel --no-build-isolation --no-deps --wheel-dir /w2 .
"""
    calls = [c for tokens in simple_commands(script) if (c := pip_call("x", tokens))]
    assert unhashed_installs(calls) == ["x: /opt/venv/bin/pip wheel --no-build-isolation --no-deps --wheel-dir /w2 ."]


# --- The locks ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lock", [BUILD_LOCK, *VENV_LOCKS])
def test_every_lock_pins_every_requirement_with_hashes(lock: str) -> None:
    assert is_hashed_lock(ROOT / lock)
    assert "generated by scripts/lock" in (ROOT / lock).read_text().splitlines()[0].lower()


def test_the_build_lock_pins_exactly_the_build_system_requirements() -> None:
    requires = [
        Requirement(r) for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    ]
    pins = {pin.name: pin for pin in lock_pins(ROOT / BUILD_LOCK)}
    assert set(pins) == {canonicalize_name(r.name) for r in requires}  # setuptools needs nothing else
    for requirement in requires:
        assert requirement.specifier.contains(pins[canonicalize_name(requirement.name)].version), requirement


@pytest.mark.parametrize("lock", ["requirements-lock.txt", "policies/requirements-lock.txt"])
def test_a_venv_lock_that_also_pins_the_backend_pins_the_same_version(lock: str) -> None:
    # Installed after the backend into the same venv: another version would swap the backend under the build.
    backend = {pin.name: pin.version for pin in lock_pins(ROOT / BUILD_LOCK)}
    for pin in lock_pins(ROOT / lock):
        if pin.name in backend:
            assert pin.version == backend[pin.name], (lock, pin.name)


def test_the_syphon_lock_is_the_core_dependencies_at_the_versions_ci_runs() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = {canonicalize_name(Requirement(r).name): Requirement(r) for r in project["dependencies"]}
    pins = lock_pins(ROOT / SYPHON_LOCK)
    direct = {pin.name for pin in pins if "pairedbus (pyproject.toml)" in pin.via}
    assert direct == set(core)  # compiled from the core: no extra (Pulumi, PySpark) asked for
    for pin in pins:
        if pin.name in core:
            assert core[pin.name].specifier.contains(pin.version), pin
    program = {pin.name: pin.version for pin in lock_pins(ROOT / "requirements-lock.txt")}
    assert {p.name: p.version for p in pins if program.get(p.name, p.version) != p.version} == {}
