"""`emulator serve --config`: a stack file translated as the IaC creates its entities (no socket)."""

from __future__ import annotations

from pathlib import Path

from pairedbus import contract
from pairedbus.commands.emulator import read_config

DEV_STACK = Path(__file__).parents[2] / "stacks" / "Pulumi.dev.yaml"
CONFIG_JSON = Path(__file__).parents[1] / "emulator" / "fixtures" / "Config.json"


def _stack(tmp_path: Path, *edits: tuple[str, str]) -> Path:
    text = DEV_STACK.read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "Pulumi.test.yaml"
    path.write_text(text)
    return path


def test_a_premium_secondary_gets_partitioned_backlog_queues(tmp_path: Path) -> None:
    path = _stack(tmp_path, ("location: northeurope\n    sku: Standard", "location: northeurope\n    sku: Premium"))
    secondary = read_config(path).user_config.namespaces[1]
    assert secondary.name == "contoso-dev-neu"
    assert len(secondary.queues) == 10
    assert all(q.properties["enable_partitioning"] is True for q in secondary.queues)


def test_a_standard_secondary_gets_the_backlog_table_alone(tmp_path: Path) -> None:
    secondary = read_config(_stack(tmp_path, ("backlogQueueCount: 10", "backlogQueueCount: 3"))).user_config.namespaces[
        1
    ]
    assert [q.name for q in secondary.queues] == contract.backlog_queue_names("contoso-dev-weu", 3)
    table = {contract.ARM_TO_SDK_QUEUE_FIELD[k]: v for k, v in contract.BACKLOG_QUEUE_PROPERTIES.items()}
    assert all(q.properties == table for q in secondary.queues)


def test_an_unpaired_queue_has_no_duplicate_detection_and_unset_values_stay_unset(tmp_path: Path) -> None:
    path = _stack(tmp_path, ("    - name: invoices\n", "    - name: invoices\n      paired: false\n"))
    invoices = read_config(path).user_config.namespaces[0].queues[1]
    assert invoices.properties["requires_duplicate_detection"] is False
    assert "lock_duration" not in invoices.properties and "forward_to" not in invoices.properties


def test_config_json_is_still_read_as_microsofts(tmp_path: Path) -> None:
    path = tmp_path / "Config.json"
    path.write_bytes(b"\n  " + CONFIG_JSON.read_bytes())  # told apart by its first character past blanks
    assert read_config(path).user_config.namespaces[0].name == "sbemulatorns"
