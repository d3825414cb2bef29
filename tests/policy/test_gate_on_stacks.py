"""End to end: the repository's stacks rendered offline, then gated by the whole pack."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pairedbus.iac.render import PulumiProject, render_stack
from pairedbus.policy.gate import evaluate_plan, format_violations, has_mandatory, load_policy_config
from tests.iac.names import program_name

ROOT = Path(__file__).resolve().parents[2]
PROJECT = PulumiProject.find(ROOT)


@pytest.mark.parametrize("stack", PROJECT.stacks())
def test_repository_stacks_pass_the_gate(stack):
    _config, plan = render_stack(PROJECT, stack)
    violations = evaluate_plan(plan)
    assert not has_mandatory(violations), "\n".join(format_violations(violations))


def test_repository_has_the_three_stacks():
    assert {"dev", "staging", "prod"} <= set(PROJECT.stacks())


def test_a_stack_with_a_non_partitioned_premium_queue_fails_naming_the_policy_and_the_queue(tmp_path, mocker):
    document = yaml.safe_load((PROJECT.stack_config_dir / "Pulumi.prod.yaml").read_text())
    queues = document["config"]["pairedbus:queues"]
    queues[0]["enablePartitioning"] = False
    queue_name = queues[0]["name"]
    (tmp_path / "Pulumi.broken.yaml").write_text(yaml.safe_dump(document))
    # The stack-config check refuses this too; switch it off to prove the pack catches it alone.
    mocker.patch("pairedbus.iac.config.model.cross_field_problems", return_value=[])
    project = PulumiProject(PROJECT.directory, PROJECT.name, tmp_path)

    _config, plan = render_stack(project, "broken")
    violations = evaluate_plan(plan)

    [violation] = [v for v in violations if v.mandatory]
    assert violation.policy == "premium-entities-partitioned"
    assert queue_name in violation.message and "enablePartitioning" in violation.message
    assert violation.resource_urn.endswith(f"::{program_name(f'queue-{queue_name}')}")
    assert any(
        line.startswith("mandatory") and "premium-entities-partitioned" in line
        for line in format_violations(violations)
    )


def test_the_sas_fallback_passes_only_with_the_policy_config_that_makes_local_auth_advisory(tmp_path):
    document = yaml.safe_load((PROJECT.stack_config_dir / "Pulumi.dev.yaml").read_text())
    document["config"]["pairedbus:backlogAuth"] = "sas"
    (tmp_path / "Pulumi.sas.yaml").write_text(yaml.safe_dump(document))
    _config, plan = render_stack(PulumiProject(PROJECT.directory, PROJECT.name, tmp_path), "sas")

    strict = evaluate_plan(plan)
    assert [(v.policy, v.resource_name) for v in strict if v.mandatory] == [
        ("local-auth-disabled", program_name("secondary"))
    ]

    relaxed = evaluate_plan(plan, config=load_policy_config(ROOT / "policies" / "sas-fallback.json"))
    assert not has_mandatory(relaxed)
    assert [(v.policy, v.enforcement_level) for v in relaxed] == [("local-auth-disabled", "advisory")]
