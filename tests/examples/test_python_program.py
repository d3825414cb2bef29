"""examples/python-program: PairedNamespace built from code next to another resource, rendered by `pairedbus plan`
with Pulumi's mocks and no stack config at all (no `Pulumi.dev.yaml`: an empty config, as for the Pulumi CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from pairedbus import contract
from pairedbus.cli import main
from pairedbus.plans.model import Plan

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "python-program"


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> Plan:
    """`cd examples/python-program && pairedbus plan dev --project-dir .`, as the README says."""
    assert not list(EXAMPLE.glob("Pulumi.*.yaml"))  # the pair is described in code: no stack file at all
    out = tmp_path_factory.mktemp("example") / "plan.json"
    assert main(["plan", "dev", "--project-dir", str(EXAMPLE), "--json", str(out)]) == 0
    document = json.loads(out.read_text())
    assert document["policy"]["passed"] is True and document["project"] == "orders-platform"
    return Plan.from_json(document)


def test_it_is_a_python_pulumi_project() -> None:
    manifest = yaml.safe_load((EXAMPLE / "Pulumi.yaml").read_text())
    assert manifest["runtime"]["name"] == "python"
    requirements = [
        line for line in (EXAMPLE / "requirements.txt").read_text().splitlines() if line and not line.startswith("#")
    ]
    # Not from the package index, where pairedbus is not published: this checkout, resolved from the example's
    # directory (where Pulumi runs pip), is the repository root with its iac extra.
    assert requirements == ["-e ../..[iac]"]
    assert 'name = "pairedbus"' in (EXAMPLE / "../../pyproject.toml").read_text()


def test_the_pair_is_built_from_code(plan: Plan) -> None:
    (paired,) = plan.of_type(contract.TYPE_PAIRED_NAMESPACE)
    assert paired.name == "orders" and paired.parent is not None and paired.parent.endswith("::orders-platform-dev")
    names = sorted(r.inputs["namespaceName"] for r in plan.of_type(contract.TYPE_NAMESPACE))
    assert names == ["orders-neu", "orders-weu"]
    backlog = sorted(r.inputs["queueName"] for r in plan.of_type(contract.TYPE_BACKLOG_QUEUE))
    assert backlog == [f"orders-weu/x-servicebus-transfer/{i}" for i in range(4)]
    assert sorted(r.inputs["queueName"] for r in plan.of_type(contract.TYPE_QUEUE)) == ["orders", "payments"]
    assert len(plan.of_type(contract.TYPE_SUBSCRIPTION)) == 2


def test_the_other_resource_is_wired_to_the_pairs_outputs(plan: Plan) -> None:
    (account,) = plan.of_type("azure-native:storage:StorageAccount")
    assert account.parent is not None and contract.TYPE_PAIRED_NAMESPACE not in account.parent
    assert account.inputs["resourceGroupName"] == "rg-orders-weu"
    assert any(dep.endswith("::orders-pair-primary-rg") for dep in account.dependencies)


def test_the_outputs_reach_the_program(plan: Plan) -> None:
    assert plan.outputs["primaryEndpoint"] == "https://orders-weu.servicebus.windows.net:443/"
    assert plan.outputs["orderQueueId"] == "orders-entities-queue-orders-id"  # the mocks id the orders queue so
    assert plan.outputs["syphonPrincipalId"] == "orders-syphon-identity-principal"
