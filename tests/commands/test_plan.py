"""`pairedbus plan STACK`: the program itself, rendered offline for a stack file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from pairedbus import contract
from pairedbus.cli import main
from pairedbus.iac.plan import PulumiProject, render_stack
from pairedbus.plans.model import Plan

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_every_repository_stack_renders(stack: str) -> None:
    config, plan = render_stack(PulumiProject.find(REPO), stack)
    backlog = plan.of_type(contract.TYPE_BACKLOG_QUEUE)
    assert len(backlog) == config.backlog_queue_count == 10
    assert plan.outputs["backlogQueues"] == config.backlog_queue_names
    assert {r.type for r in plan.resources if not r.custom} == {
        contract.TYPE_PAIRED_NAMESPACE,
        contract.TYPE_NAMESPACE_PAIR,
        contract.TYPE_BACKLOG_QUEUES,
        contract.TYPE_MESSAGING_ENTITIES,
        contract.TYPE_SYPHON_HOST,
    }


def test_prod_is_premium_partitioned_and_protected() -> None:
    _, plan = render_stack(PulumiProject.find(REPO), "prod")
    for ns in plan.of_type(contract.TYPE_NAMESPACE):
        assert ns.inputs["premiumMessagingPartitions"] == 2 and ns.inputs["zoneRedundant"] is True and ns.protect
    for entity in plan.of_type(contract.TYPE_QUEUE) + plan.of_type(contract.TYPE_TOPIC):
        assert entity.inputs["enablePartitioning"] is True and entity.protect
    # Backlog queues are retained, not protected, so a lowered count can leave the program.
    for queue in plan.of_type(contract.TYPE_BACKLOG_QUEUE):
        assert queue.inputs["enablePartitioning"] is True and queue.retain_on_delete and not queue.protect


def test_dev_entities_are_all_partitioned_on_standard() -> None:
    _, plan = render_stack(PulumiProject.find(REPO), "dev")
    assert {ns.inputs["sku"]["name"] for ns in plan.of_type(contract.TYPE_NAMESPACE)} == {"Standard"}
    entities = plan.of_type(contract.TYPE_QUEUE) + plan.of_type(contract.TYPE_TOPIC)
    assert len(entities) == 3 and all(e.inputs["enablePartitioning"] for e in entities)
    assert len(plan.of_type(contract.TYPE_SUBSCRIPTION)) == 2


def test_plan_prints_an_offline_table_and_writes_json(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    out = tmp_path / "plan.json"
    assert main(["plan", "dev", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "NOT a cloud preview" in printed
    assert "contoso-dev-weu/x-servicebus-transfer/9" in printed
    document = json.loads(out.read_text())
    assert document["offline_render"] is True
    plan = Plan.from_json(document)
    assert {"type", "name", "inputs", "parent"} <= set(document["resources"][0])
    assert len(plan.of_type(contract.TYPE_BACKLOG_QUEUE)) == 10


def test_rendering_is_deterministic() -> None:
    project = PulumiProject.find(REPO)
    first = render_stack(project, "dev")[1].to_json()
    assert render_stack(project, "dev")[1].to_json() == first


def test_bad_stack_config_stops_before_rendering_with_one_line_per_problem(project_copy: Path, capsys) -> None:
    path = project_copy / "stacks" / "Pulumi.dev.yaml"
    document = yaml.safe_load(path.read_text())
    document["config"]["pairedbus:secondary"]["location"] = "westeurope"
    document["config"]["pairedbus:queues"][1]["maxSizeInMegabytes"] = 1000
    path.write_text(yaml.safe_dump(document))
    assert main(["plan", "dev", "--project-dir", str(project_copy)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing rendered
    lines = captured.err.strip().splitlines()
    assert lines == [
        "pairedbus: error: pairedbus:secondary.location: expected a region other than the primary's ('westeurope')",
        "pairedbus: error: pairedbus:queues[1].maxSizeInMegabytes: expected one of 1024, 2048, 3072, 4096, 5120 for a Standard namespace, got 1000",
    ]


def test_unknown_stack_names_the_stacks_there_are(capsys) -> None:
    assert main(["plan", "qa", "--project-dir", str(REPO)]) == 2
    assert "expected one of: dev, prod, staging" in capsys.readouterr().err


def test_invalid_yaml_is_a_one_line_error(project_copy: Path, capsys) -> None:
    (project_copy / "stacks" / "Pulumi.dev.yaml").write_text("config:\n  pairedbus:primary: [unclosed\n")
    assert main(["plan", "dev", "--project-dir", str(project_copy)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not valid YAML" in err


def test_secure_values_are_masked_not_decrypted(project_copy: Path) -> None:
    path = project_copy / "stacks" / "Pulumi.dev.yaml"
    document = yaml.safe_load(path.read_text())
    document["config"]["pairedbus:tags"] = {"environment": "dev"}
    document["config"]["azure-native:clientSecret"] = {"secure": "v1:AAAA"}
    path.write_text(yaml.safe_dump(document))
    settings, secrets = PulumiProject.find(project_copy).stack_settings("dev")
    assert secrets == ["azure-native:clientSecret"]
    assert settings["azure-native:clientSecret"] == "[secret]"


def test_baseline_catches_a_partitioning_flip_unless_replacement_is_allowed(
    project_copy: Path, tmp_path: Path, capsys
) -> None:
    baseline = tmp_path / "baseline.json"
    assert main(["plan", "dev", "--project-dir", str(project_copy), "--json", str(baseline)]) == 0
    path = project_copy / "stacks" / "Pulumi.dev.yaml"
    document = yaml.safe_load(path.read_text())
    document["config"]["pairedbus:queues"][1]["enablePartitioning"] = False
    path.write_text(yaml.safe_dump(document))
    capsys.readouterr()

    assert main(["plan", "dev", "--project-dir", str(project_copy), "--baseline", str(baseline)]) == 1
    out = capsys.readouterr().out
    assert "invoices" in out and "enablePartitioning" in out
    assert (
        main(["plan", "dev", "--project-dir", str(project_copy), "--baseline", str(baseline), "--allow-replace"]) == 0
    )


def test_plan_json_carries_the_gate_verdict(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    assert main(["plan", "prod", "--project-dir", str(REPO), "--json", str(out)]) == 0
    document = json.loads(out.read_text())
    assert document["policy"]["violations"] == []


def test_a_missing_baseline_file_is_a_one_line_error(capsys) -> None:
    assert main(["plan", "dev", "--project-dir", str(REPO), "--baseline", "/nonexistent/plan.json"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "baseline" in err
