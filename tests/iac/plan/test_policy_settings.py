"""The stack facts the pack cannot see in resource inputs reach it as policy settings."""

from __future__ import annotations

import json
from pathlib import Path

from pairedbus.cli import main
from pairedbus.iac.plan.policy_settings import merge_policy_config

ROOT = Path(__file__).resolve().parents[3]


def test_plan_writes_the_derived_policy_settings_for_pulumi_preview(tmp_path: Path) -> None:
    out = tmp_path / "policy-config.json"
    assert main(["plan", "prod", "--project-dir", str(ROOT), "--write-policy-config", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["backlog-queue-set"] == {"backlogQueueCount": 10}
    assert written["paired-entities-duplicate-detection"] == {"maxOutage": "PT1H", "unpaired": []}


def test_the_users_policy_config_wins_and_a_bare_level_is_kept() -> None:
    derived = {"backlog-queue-set": {"backlogQueueCount": 5}, "paired-entities-duplicate-detection": {"unpaired": []}}
    user = {"backlog-queue-set": "advisory", "paired-entities-duplicate-detection": {"unpaired": ["audit"]}, "x": "disabled"}
    assert merge_policy_config(derived, user) == {
        "backlog-queue-set": {"backlogQueueCount": 5, "enforcementLevel": "advisory"},
        "paired-entities-duplicate-detection": {"unpaired": ["audit"]},
        "x": "disabled",
    }
    assert merge_policy_config(derived, None) == derived
