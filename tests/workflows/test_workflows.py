"""The CI workflows: valid against GitHub's workflow schema, and gating what they should."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.load import guard

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


def pulumi_step(job: dict, command: str) -> dict:
    """The job's one pulumi/actions step running `command` (another may only install the CLI)."""
    [step] = [s for s in steps_using(job, "pulumi/actions") if s.get("with", {}).get("command") == command]
    return step


def evaluate(expression: str, inputs: dict[str, bool] | None) -> object:
    """A `${{ ... }}` expression of the forms these workflows use (`inputs.X`, string literals, `&&`, `||`,
    `!`, parentheses), evaluated as GitHub does: `&&` and `||` return an operand, a missing input is null.
    `inputs` None is a push, whose inputs context is empty."""
    match = re.fullmatch(r"\$\{\{(.*)\}\}", expression.strip(), flags=re.DOTALL)
    if not match:
        return expression  # a plain string
    body = match[1]
    token = r"\s+|\(|\)|&&|\|\||!(?!=)|'[^']*'|inputs\.[A-Za-z0-9_-]+|true|false"
    assert re.fullmatch(f"(?:{token})*", body), f"not an expression this helper reads: {expression}"
    python = re.sub(r"inputs\.([A-Za-z0-9_-]+)", r"_input('\1')", body)
    python = python.replace("&&", " and ").replace("||", " or ").replace("!", " not ")
    python = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", python))
    return eval(python, {"__builtins__": {}}, {"_input": lambda name: (inputs or {}).get(name)})


def environment_of(job: dict, inputs: dict[str, bool] | None = None) -> str:
    """The GitHub environment a job runs in for a run with these inputs (None: a push)."""
    environment = job["environment"]
    name = environment["name"] if isinstance(environment, dict) else environment
    return str(evaluate(name, inputs))


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
        timeout=guard(120),
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_schema_lint_rejects_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text("on: pull_request\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps: nope\n")
    result = subprocess.run(
        [str(check_jsonschema()), "--builtin-schema", "vendor.github-workflows", str(broken)],
        capture_output=True,
        text=True,
        timeout=guard(120),
    )
    assert result.returncode != 0


def test_preview_runs_on_pull_requests_with_oidc_and_pr_comment_permissions_only_where_needed():
    workflow = load(PREVIEW)
    assert "pull_request" in workflow["on"] and "pull_request_target" not in workflow["on"]
    assert workflow["permissions"] == {"contents": "read"}
    jobs = workflow["jobs"]
    assert jobs["gate"]["permissions"] == {"contents": "read"}  # no token for the offline gate
    assert jobs["preview"]["permissions"] == {"contents": "read", "id-token": "write", "pull-requests": "write"}


def test_the_pull_request_preview_uses_a_read_only_identity_in_a_protected_environment():
    text = PREVIEW.read_text()
    job = load(PREVIEW)["jobs"]["preview"]
    assert job["environment"] == "preview"
    assert job["env"]["ARM_CLIENT_ID"] == "${{ secrets.AZURE_READER_CLIENT_ID }}"
    assert job["env"]["PULUMI_ACCESS_TOKEN"] == "${{ secrets.PULUMI_READ_ACCESS_TOKEN }}"
    [login] = steps_using(job, "azure/login")
    assert login["with"]["client-id"] == "${{ secrets.AZURE_READER_CLIENT_ID }}"
    # The deploy identity's secrets are never named in the workflow that runs pull-request code.
    for deploy_secret in ("secrets.AZURE_CLIENT_ID", "secrets.PULUMI_ACCESS_TOKEN"):
        assert deploy_secret not in text
    deploy = load(DEPLOY)["jobs"]
    assert {deploy[s]["env"]["ARM_CLIENT_ID"] for s in STACKS} == {"${{ secrets.AZURE_CLIENT_ID }}"}
    assert "preview" not in {environment_of(deploy[s]) for s in STACKS}


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
    pulumi = pulumi_step(job, "preview")
    assert pulumi["with"]["command"] == "preview"
    assert pulumi["with"]["stack-name"] == "${{ matrix.stack }}"
    assert pulumi["with"]["policyPacks"] == "policies"
    assert pulumi["with"]["policyPackConfigs"] == "out/policy-config-${{ matrix.stack }}.json"
    runs = " ".join(s.get("run", "") for s in job["steps"])
    assert '--write-policy-config "out/policy-config-${{ matrix.stack }}.json"' in runs
    assert pulumi["with"]["comment-on-pr"] is True
    assert job["env"]["ARM_USE_OIDC"] == "true"
    [login] = steps_using(job, "azure/login")
    assert {"client-id", "tenant-id", "subscription-id"} <= set(login["with"])
    assert job["steps"].index(login) < job["steps"].index(pulumi)


def test_deploy_runs_on_main_and_goes_dev_staging_prod_behind_environments():
    workflow = load(DEPLOY)
    assert workflow["on"]["push"]["branches"] == ["main"]
    assert workflow["permissions"] == {"contents": "read"}
    assert workflow["concurrency"]["cancel-in-progress"] is False
    jobs = workflow["jobs"]
    assert [environment_of(jobs[s]) for s in STACKS] == STACKS  # a push: no override, the stage's own environment
    assert (jobs["dev"]["needs"], jobs["staging"]["needs"], jobs["prod"]["needs"]) == ("gate", "dev", "staging")
    for stack in STACKS:
        pulumi = pulumi_step(jobs[stack], "up")
        assert pulumi["with"] == {**pulumi["with"], "command": "up", "stack-name": stack, "policyPacks": "policies"}
        assert jobs[stack]["env"]["ARM_USE_OIDC"] == "true"
        assert jobs[stack]["permissions"] == {"contents": "read", "id-token": "write"}
        assert steps_using(jobs[stack], "azure/login")
        assert pulumi["with"]["policyPackConfigs"] == f"out/policy-config-{stack}.json"


def _config_map(step: dict) -> dict:
    # pulumi/actions `config-map`: a YAML string {key: {value: ..., secret: ...}}.
    return yaml.safe_load(step["with"]["config-map"])


@pytest.mark.parametrize("stack", STACKS)
def test_deploy_sets_the_deployer_principal_type_to_service_principal(stack):
    # deploy.yml signs in as a service principal (azure/login with a client id and OIDC); the
    # deployer's role assignment must say so, or ARM answers UnmatchedPrincipalType.
    pulumi = pulumi_step(load(DEPLOY)["jobs"][stack], "up")
    assert _config_map(pulumi) == {"pairedbus:deployerPrincipalType": {"value": "ServicePrincipal", "secret": False}}


#: Release tags and the commits they point to, read from each action's repository
#: (`git rev-parse <tag>^{commit}`); a pin is the full SHA with its tag as a comment.
RELEASES = {
    "actions/checkout": ("v4.4.0", "11d5960a326750d5838078e36cf38b85af677262"),
    "actions/setup-python": ("v5.6.0", "a26af69be951a213d495a4c3e4e4022e16d87065"),
    "actions/upload-artifact": ("v4.6.2", "ea165f8d65b6e75b540449e92b4886f43607fa02"),
    "azure/login": ("v2.3.1", "7184910d9eb2b1c5e48f7073824a90609bb9b6d6"),
    "pulumi/actions": ("v6.6.1", "8582a9e8cc630786854029b4e09281acd6794b58"),
}


@pytest.mark.parametrize("path", sorted(WORKFLOWS.glob("*.yml")), ids=lambda p: p.name)
def test_every_action_is_pinned_by_the_full_commit_sha_of_a_named_release(path):
    uses = re.findall(r"^\s*-?\s*uses:\s*(\S+)(.*)$", path.read_text(), flags=re.MULTILINE)
    assert uses
    for ref, comment in uses:
        action, _, sha = ref.partition("@")
        assert re.fullmatch(r"[0-9a-f]{40}", sha), f"{path.name}: {ref} is not pinned by a commit SHA"
        tag, expected = RELEASES[action]
        assert (sha, comment.strip()) == (expected, f"# {tag}"), f"{path.name}: {ref}{comment}"
