"""The destructive-change gate in CI, the prod runner inside the network, and hash-checked installs."""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.load import guard
from tests.workflows.test_workflows import DEPLOY, PREVIEW, STACKS, environment_of, load, pulumi_step, steps_using

REPO = Path(__file__).resolve().parents[2]
CI_GATE = REPO / "scripts" / "ci-gate"
LOCKS = {"iac": REPO / "requirements-lock.txt", "policy": REPO / "policies" / "requirements-lock.txt"}
STATE = REPO / "tests" / "iac" / "fixtures" / "state"


def _runs(job: dict) -> list[str]:
    return [step.get("run", "") for step in job["steps"]]


def _gate_step(job: dict) -> dict:
    [step] = [s for s in job["steps"] if "scripts/ci-gate" in s.get("run", "")]
    return step


# --- The gate before `pulumi preview` and before each `pulumi up` ---------------------------------


def test_preview_runs_the_gate_against_the_deployed_state_before_pulumi_preview() -> None:
    job = load(PREVIEW)["jobs"]["preview"]
    gate = _gate_step(job)
    assert gate["env"]["STACK"] == "${{ matrix.stack }}" and gate["run"].strip() == 'scripts/ci-gate "$STACK"'
    steps = job["steps"]
    preview = pulumi_step(job, "preview")
    [install_cli] = [s for s in steps_using(job, "pulumi/actions") if "with" not in s]  # CLI only: for the export
    [login] = steps_using(job, "azure/login")
    assert steps.index(login) < steps.index(install_cli) < steps.index(gate) < steps.index(preview)
    # A blocked gate is recorded, the preview still runs, and the job then fails.
    assert gate["id"] == "gate" and gate["continue-on-error"] is True
    last = steps[-1]
    assert last["if"] == "steps.gate.outcome == 'failure'" and "exit 1" in last["run"]


@pytest.mark.parametrize("stack", STACKS)
def test_deploy_runs_the_gate_before_each_up_with_only_the_stated_overrides(stack: str) -> None:
    job = load(DEPLOY)["jobs"][stack]
    gate = _gate_step(job)
    up = pulumi_step(job, "up")
    assert job["steps"].index(gate) < job["steps"].index(up)
    assert "continue-on-error" not in gate  # a blocked gate stops the stage before `up`
    assert f"scripts/ci-gate {stack} " in gate["run"]
    # The inputs reach the script as environment data, never as expressions spliced into it.
    assert "${{" not in gate["run"]
    assert gate["env"] == {
        "ALLOW_DELETE": "${{ inputs.allow-delete }}",
        "ALLOW_REPLACE": "${{ inputs.allow-replace }}",
        "ALLOW_UNPROTECT": "${{ inputs.allow-unprotect }}",
    }
    for env, flag in (("ALLOW_DELETE", "--allow-delete"), ("ALLOW_REPLACE", "--allow-replace")):
        assert f'if [ "${env}" = "true" ]; then flags+=({flag}); fi' in gate["run"]
    # A hand-started run deploys main only.
    assert job["if"] == "github.ref == 'refs/heads/main'"


def test_deploy_states_its_overrides_as_boolean_inputs_off_by_default() -> None:
    workflow = load(DEPLOY)
    inputs = workflow["on"]["workflow_dispatch"]["inputs"]
    assert set(inputs) == {"allow-delete", "allow-replace", "allow-unprotect"}
    for name, spec in inputs.items():
        assert spec["type"] == "boolean" and spec["default"] is False and spec["description"], name
    assert "allow-delete" in DEPLOY.read_text().split("name: deploy")[0]  # documented in the header


OVERRIDES = ("allow-delete", "allow-replace", "allow-unprotect")


def _runs_with(overrides: tuple[str, ...]) -> dict[str, bool]:
    return {name: name in overrides for name in OVERRIDES}


@pytest.mark.parametrize("stack", STACKS)
def test_an_override_runs_each_stage_in_its_protected_override_environment(stack: str) -> None:
    # An override in any environment (dev and staging too, not only prod) waits for a reviewer: the job that
    # passes it to the gate runs in `<stack>-override`, whose protection rule is required reviewers.
    job = load(DEPLOY)["jobs"][stack]
    assert environment_of(job, None) == stack  # a push
    assert environment_of(job, _runs_with(())) == stack  # started by hand, no override
    for count in (1, 2, 3):
        for overrides in itertools.combinations(OVERRIDES, count):
            assert environment_of(job, _runs_with(overrides)) == f"{stack}-override", overrides


@pytest.mark.parametrize("stack", STACKS)
def test_every_input_the_gate_step_reads_moves_the_job_to_the_override_environment(stack: str) -> None:
    # No override can reach `scripts/ci-gate` from a job outside the protected environment.
    job = load(DEPLOY)["jobs"][stack]
    inputs = load(DEPLOY)["on"]["workflow_dispatch"]["inputs"]
    read = set(re.findall(r"inputs\.([A-Za-z0-9_-]+)", " ".join(_gate_step(job)["env"].values())))
    assert read == set(inputs) == set(OVERRIDES)
    for name in read:
        assert environment_of(job, _runs_with((name,))) == f"{stack}-override", name


def test_the_readme_says_how_to_protect_the_override_environments() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("### CI: the gate, the prod runner, locked installs") :]
    section = section[: section.index("\n## ")] if "\n## " in section else section
    for needed in (
        "dev-override",
        "staging-override",
        "prod-override",
        "Required reviewers",
        "Prevent self-review",
        "environment:prod-override",
    ):
        assert needed in section, needed


def _run_ci_gate(tmp_path: Path, state: Path, *flags: str) -> tuple[int, str, str]:
    """scripts/ci-gate with a stand-in `pulumi` that exports `state`, and pairedbus from this checkout."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    pulumi = bin_dir / "pulumi"
    # `pulumi stack export --stack S --file F`: copy the fixture where --file says.
    pulumi.write_text(
        "#!/usr/bin/env bash\nset -e\n"
        '[ "$1 $2" = "stack export" ] || exit 9\n'
        'while [ $# -gt 0 ]; do [ "$1" = --file ] && cp ' + shlex.quote(str(state)) + ' "$2"; shift; done\n'
    )
    pairedbus = bin_dir / "pairedbus"
    pairedbus.write_text(f'#!/usr/bin/env bash\nexec {shlex.quote(sys.executable)} -m pairedbus.cli "$@"\n')
    for tool in (pulumi, pairedbus):
        tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    summary = tmp_path / "summary.md"
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "PAIREDBUS": str(pairedbus),
        "GATE_OUT": str(tmp_path / "out"),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    result = subprocess.run(
        [str(CI_GATE), "dev", *flags], capture_output=True, text=True, env=env, timeout=guard(300), check=False
    )
    return result.returncode, result.stdout, summary.read_text() if summary.exists() else ""


def _dev_state_with_a_deleted_queue(tmp_path: Path) -> Path:
    document = json.loads((STATE / "dev.json").read_text())
    queue = next(r for r in document["deployment"]["resources"] if r["urn"].endswith("::queue-invoices"))
    extra = {**queue, "urn": queue["urn"].replace("::queue-invoices", "::queue-legacy")}
    extra["inputs"] = {**queue["inputs"], "queueName": "legacy"}
    document["deployment"]["resources"].append(extra)
    path = tmp_path / "deployed.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.slow  # runs scripts/ci-gate: a bash script that renders the stack in subprocesses
def test_ci_gate_passes_the_deployed_stack_and_writes_the_verdict_to_the_job_summary(tmp_path: Path) -> None:
    code, out, summary = _run_ci_gate(tmp_path, STATE / "dev.json")
    assert code == 0, out
    assert summary.startswith("### Destructive-change gate: dev, passed")
    assert "policy gate: 0 mandatory" in summary and "Offline render" not in summary  # the verdict, not the tree


@pytest.mark.slow  # runs scripts/ci-gate: a bash script that renders the stack in subprocesses
def test_ci_gate_blocks_a_deleted_queue_unless_the_run_allows_deletions(tmp_path: Path) -> None:
    deployed = _dev_state_with_a_deleted_queue(tmp_path)
    (tmp_path / "blocked").mkdir()
    code, _out, summary = _run_ci_gate(tmp_path / "blocked", deployed)
    assert code == 1
    assert "### Destructive-change gate: dev, BLOCKED" in summary
    assert "blocked: legacy (azure-native:servicebus:Queue) leaves the program" in summary
    (tmp_path / "allowed").mkdir()
    code, _out, summary = _run_ci_gate(tmp_path / "allowed", deployed, "--allow-delete")
    assert code == 0 and "with --allow-delete" in summary and "allowed: legacy" in summary


def _dev_state_with_a_long_deleted_queue_and_a_read_queue_leaving(tmp_path: Path, long_name: str) -> Path:
    document = json.loads((STATE / "dev.json").read_text())
    resources = document["deployment"]["resources"]
    queue = next(r for r in resources if r["urn"].endswith("::queue-invoices"))
    deleted = {**queue, "urn": queue["urn"].replace("::queue-invoices", "::queue-long")}
    deleted["inputs"] = {**queue["inputs"], "queueName": long_name}
    read = {**queue, "urn": queue["urn"].replace("::queue-invoices", "::queue-read"), "external": True}
    read["inputs"] = {**queue["inputs"], "queueName": "read-only"}
    resources += [deleted, read]
    path = tmp_path / "deployed.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.slow  # runs scripts/ci-gate: a bash script that renders the stack in subprocesses
def test_ci_gate_copies_each_gate_line_whole_to_the_job_summary_notes_included(tmp_path: Path) -> None:
    # A line longer than the piped width (160) used to wrap: the summary kept only its first part.
    # A read (external) resource leaving the program is a `note:` line, which the summary used to drop.
    long_name = "orders-" + "x" * 190
    deployed = _dev_state_with_a_long_deleted_queue_and_a_read_queue_leaving(tmp_path, long_name)
    code, out, summary = _run_ci_gate(tmp_path, deployed)
    assert code == 1, out
    blocked = f"blocked: {long_name} (azure-native:servicebus:Queue) leaves the program"
    [line] = [line for line in summary.splitlines() if line.startswith("blocked:")]
    assert line.startswith(blocked) and line.endswith("(pass --allow-delete to accept)"), line
    note = (
        "note: read-only (azure-native:servicebus:Queue) leaves the program; it was read (external), not created, "
        "so Pulumi forgets it and Azure keeps it"
    )
    assert note in summary.splitlines()
    assert "policy gate: 0 mandatory, 0 advisory, 1 deletions, 1 forgotten - FAILED" in summary.splitlines()


def test_ci_gate_copies_every_kind_of_gate_line_to_the_job_summary() -> None:
    from pairedbus.policy.gate import _NOTE_LABELS

    [pattern] = re.findall(r"grep -E '\^\((.*?)\)'", CI_GATE.read_text())
    prefixes = pattern.split("|")
    for prefix in ("blocked:", "allowed:", "policy gate:", "LEVEL", "mandatory", "advisory", "warning:"):
        assert prefix in prefixes, prefix
    for label in _NOTE_LABELS.values():  # retained:, note:
        assert f"{label}:" in prefixes, label


def test_ci_gate_stops_when_the_state_cannot_be_exported(tmp_path: Path) -> None:
    code, _out, summary = _run_ci_gate(tmp_path, tmp_path / "missing.json")
    assert code == 2 and "NOT RUN: `pulumi stack export` failed" in summary


# --- Prod from inside the network -----------------------------------------------------------------


def test_prod_deploys_from_a_self_hosted_runner_in_the_network_and_the_others_from_hosted_runners() -> None:
    jobs = load(DEPLOY)["jobs"]
    assert jobs["prod"]["runs-on"] == ["self-hosted", "pairedbus-prod-vnet"]
    assert jobs["dev"]["runs-on"] == jobs["staging"]["runs-on"] == jobs["gate"]["runs-on"] == "ubuntu-latest"
    # Pull-request code never runs on the network's runner.
    assert all(job["runs-on"] == "ubuntu-latest" for job in load(PREVIEW)["jobs"].values())


def test_the_readme_says_what_the_prod_runner_needs_and_why() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("### CI: the gate, the prod runner, locked installs") :]
    section = section[: section.index("\n## ")] if "\n## " in section else section
    for needed in (
        "pairedbus-prod-vnet",
        "private endpoint",
        "privatelink.servicebus.windows.net",
        "Python 3.11",
        "Pulumi CLI",
        "OIDC",
        "data plane",
        "allow-delete",
        "scripts/lock",
        "--require-hashes",
    ):
        assert needed in section, needed


# --- Hash-checked installs --------------------------------------------------------------------------


# Which installs pass (a hashed lock, or this package built by the hashed backend) is tests/test_hashed_installs.py.


def _pins(lock: Path) -> dict[str, list[str]]:
    """name -> hashes of each pinned requirement of a lock file."""
    pins: dict[str, list[str]] = {}
    current = None
    for line in lock.read_text().splitlines():
        if match := re.match(r"^([A-Za-z0-9_.\-]+)==([^\s;\\]+)", line):
            current = match.group(1).lower().replace("_", "-")
            pins[current] = []
        elif (match := re.search(r"--hash=sha256:([0-9a-f]{64})", line)) and current:
            pins[current].append(match.group(1))
        elif line.strip() and not line.lstrip().startswith(("#", "--hash")):
            pytest.fail(f"{lock.name}: not a pinned, hashed requirement: {line}")
    return pins


def _requirement_names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requirements}


@pytest.mark.parametrize("extra", ["iac", "policy"])
def test_each_lock_pins_every_dependency_of_its_extra_with_hashes(extra: str) -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pins = _pins(LOCKS[extra])
    wanted = _requirement_names(project["dependencies"]) | _requirement_names(project["optional-dependencies"][extra])
    assert wanted <= set(pins), wanted - set(pins)
    assert all(pins.values()), [name for name, hashes in pins.items() if not hashes]
    assert "pairedbus" not in pins  # the package itself is installed --no-deps after the lock
    assert "generated by scripts/lock" in LOCKS[extra].read_text().splitlines()[0].lower()


def test_the_locks_are_refreshed_by_a_documented_script() -> None:
    script = REPO / "scripts" / "lock"
    assert script.stat().st_mode & stat.S_IXUSR
    text = script.read_text()
    assert "--generate-hashes" in text
    for lock in ("requirements-build-lock.txt", "requirements-lock.txt", "policies/requirements-lock.txt"):
        assert lock in text, lock
    assert "requirements-syphon-lock.txt" in text
    assert "scripts/lock" in (REPO / "README.md").read_text()


def test_the_ci_gate_script_is_valid_bash() -> None:
    assert subprocess.run(["bash", "-n", str(CI_GATE)], check=False).returncode == 0
