"""The CI workflows: valid against GitHub's workflow schema, and gating what they should."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

WORKFLOWS = Path(__file__).resolve().parents[2] / ".github" / "workflows"
PREVIEW = WORKFLOWS / "preview.yml"
DEPLOY = WORKFLOWS / "deploy.yml"
STACKS = ["dev", "staging", "prod"]


def load(path: Path) -> dict:
    # PyYAML reads the key `on` as True (YAML 1.1); map it back.
    data = yaml.safe_load(path.read_text())
    if True in data:
        data["on"] = data.pop(True)
    return data


def steps_using(job: dict, action: str) -> list[dict]:
    return [s for s in job.get("steps", []) if s.get("uses", "").split("@")[0] == action]


def check_jsonschema() -> Path:
    executable = Path(sys.executable).parent / "check-jsonschema"
    if not executable.exists():
        pytest.fail(f"check-jsonschema not installed next to {sys.executable} (pip install -e '.[dev]')")
    return executable


@pytest.mark.parametrize("path", [PREVIEW, DEPLOY], ids=lambda p: p.name)
def test_workflow_is_valid_against_the_github_workflow_schema(path):
    result = subprocess.run(
        [str(check_jsonschema()), "--builtin-schema", "vendor.github-workflows", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_schema_lint_rejects_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text("on: pull_request\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps: nope\n")
    result = subprocess.run(
        [str(check_jsonschema()), "--builtin-schema", "vendor.github-workflows", str(broken)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0


def test_preview_runs_on_pull_requests_with_oidc_and_pr_comment_permissions():
    workflow = load(PREVIEW)
    assert "pull_request" in workflow["on"]
    assert workflow["permissions"] == {"id-token": "write", "contents": "read", "pull-requests": "write"}


def test_preview_gates_every_stack_offline_before_the_real_preview():
    jobs = load(PREVIEW)["jobs"]
    assert jobs["gate"]["strategy"]["matrix"]["stack"] == STACKS
    runs = " ".join(s.get("run", "") for s in jobs["gate"]["steps"])
    assert "pairedbus plan" in runs and "${{ matrix.stack }}" in runs
    assert jobs["preview"]["needs"] == "gate"
    assert jobs["preview"]["strategy"]["matrix"]["stack"] == STACKS
    [setup] = steps_using(jobs["gate"], "actions/setup-python")
    assert setup["with"]["python-version"] == "3.11"


def test_preview_runs_pulumi_with_the_policy_pack_and_comments_on_the_pr():
    job = load(PREVIEW)["jobs"]["preview"]
    [pulumi] = steps_using(job, "pulumi/actions")
    assert pulumi["uses"] == "pulumi/actions@v6"
    assert pulumi["with"]["command"] == "preview"
    assert pulumi["with"]["stack-name"] == "${{ matrix.stack }}"
    assert pulumi["with"]["policyPacks"] == "policies"
    assert pulumi["with"]["comment-on-pr"] is True
    assert job["env"]["ARM_USE_OIDC"] == "true"
    [login] = steps_using(job, "azure/login")
    assert login["uses"] == "azure/login@v2"
    assert {"client-id", "tenant-id", "subscription-id"} <= set(login["with"])
    steps = [s.get("uses", s.get("name")) for s in job["steps"]]
    assert steps.index(login["uses"]) < steps.index(pulumi["uses"])


def test_deploy_runs_on_main_and_goes_dev_staging_prod_behind_environments():
    workflow = load(DEPLOY)
    assert workflow["on"]["push"]["branches"] == ["main"]
    assert workflow["permissions"]["id-token"] == "write"
    assert workflow["concurrency"]["cancel-in-progress"] is False
    jobs = workflow["jobs"]
    assert [jobs[s]["environment"] for s in STACKS] == STACKS
    assert (jobs["dev"]["needs"], jobs["staging"]["needs"], jobs["prod"]["needs"]) == ("gate", "dev", "staging")
    for stack in STACKS:
        [pulumi] = steps_using(jobs[stack], "pulumi/actions")
        assert pulumi["with"] == {**pulumi["with"], "command": "up", "stack-name": stack, "policyPacks": "policies"}
        assert jobs[stack]["env"]["ARM_USE_OIDC"] == "true"
        assert steps_using(jobs[stack], "azure/login")


@pytest.mark.parametrize("path", sorted(WORKFLOWS.glob("*.yml")), ids=lambda p: p.name)
def test_every_job_installs_the_program_with_its_pulumi_dependencies(path):
    # The core package alone has no Pulumi: the program and the offline gate need the `iac` extra.
    for job in load(path)["jobs"].values():
        for step in job["steps"]:
            for line in step.get("run", "").splitlines():
                if "pip install" in line and "policies" not in line and "requirements.txt" not in line:
                    assert ".[dev]" in line or ".[iac]" in line, f"{path.name}: {line.strip()}"
