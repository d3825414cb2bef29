"""The stack facts the pack cannot see in resource inputs reach it as policy settings."""

from __future__ import annotations

import json
from pathlib import Path

from pairedbus.cli import main
from pairedbus.iac.render.policy_settings import merge_policy_config
from tests.iac.names import program_name

ROOT = Path(__file__).resolve().parents[3]


def test_plan_writes_the_derived_policy_settings_for_pulumi_preview(tmp_path: Path) -> None:
    out = tmp_path / "policy-config.json"
    assert main(["plan", "prod", "--project-dir", str(ROOT), "--write-policy-config", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["backlog-queue-set"] == {"backlogQueueCount": 10}
    assert written["paired-entities-duplicate-detection"] == {"maxOutage": "PT1H", "unpaired": []}


def test_the_users_policy_config_wins_and_a_bare_level_is_kept() -> None:
    derived = {"backlog-queue-set": {"backlogQueueCount": 5}, "paired-entities-duplicate-detection": {"unpaired": []}}
    user = {
        "backlog-queue-set": "advisory",
        "paired-entities-duplicate-detection": {"unpaired": ["audit"]},
        "x": "disabled",
    }
    assert merge_policy_config(derived, user) == {
        "backlog-queue-set": {"backlogQueueCount": 5, "enforcementLevel": "advisory"},
        "paired-entities-duplicate-detection": {"unpaired": ["audit"]},
        "x": "disabled",
    }
    assert merge_policy_config(derived, None) == derived


def test_an_entity_opted_out_of_pairing_passes_the_gate_and_is_named_unpaired(tmp_path: Path, capsys) -> None:
    import shutil

    import yaml

    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    path = tmp_path / "stacks" / "Pulumi.dev.yaml"
    document = yaml.safe_load(path.read_text())
    document["config"]["pairedbus:queues"].append({"name": "audit-log", "paired": False})
    path.write_text(yaml.safe_dump(document))
    out = tmp_path / "policy-config.json"

    assert main(["plan", "dev", "--project-dir", str(tmp_path), "--write-policy-config", str(out)]) == 0
    assert "audit-log" not in "".join(line for line in capsys.readouterr().out.splitlines() if "mandatory" in line)
    assert json.loads(out.read_text())["paired-entities-duplicate-detection"]["unpaired"] == ["audit-log"]
    # Without the derived setting the pack cannot know it is unpaired, and fails it.
    from pairedbus.iac.render import PulumiProject, render_stack
    from pairedbus.policy.gate import run_gate

    _config, plan = render_stack(PulumiProject.find(tmp_path), "dev")
    assert [v.resource_name for v in run_gate(plan).violations if v.mandatory] == [program_name("queue-audit-log")]
