"""Reading a `--baseline` (`plans/state.py`): a plan or a `pulumi stack export`, checked as hostile input."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pairedbus import contract
from pairedbus.plans.model import Plan, PlannedResource
from pairedbus.plans.state import BaselineError, check_same_stack, read_baseline

STATE = Path(__file__).resolve().parents[1] / "iac" / "fixtures" / "state"


def _state(stack: str) -> dict[str, Any]:
    return json.loads((STATE / f"{stack}.json").read_text())


def _write(tmp_path: Path, document: Any, name: str = "state.json") -> Path:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


def test_secrets_are_masked_and_engine_only_resources_left_out(tmp_path: Path) -> None:
    document = _state("dev")
    resources = document["deployment"]["resources"]
    queue = next(r for r in resources if r["urn"].endswith("::queue-orders"))
    queue["inputs"]["forwardTo"] = {
        "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
        "ciphertext": "x",
    }
    pending = {**copy.deepcopy(queue), "delete": True, "inputs": {**queue["inputs"], "enablePartitioning": False}}
    resources.append(pending)  # the old copy of a replaced resource, awaiting deletion
    plan = read_baseline(_write(tmp_path, document))
    [orders] = [r for r in plan.resources if r.name == "queue-orders"]
    assert orders.inputs["forwardTo"] == "[secret]" and orders.inputs["enablePartitioning"] is True
    assert not {r.type for r in plan.resources} & {"pulumi:pulumi:Stack", "pulumi:providers:azure-native"}
    backlog = next(r for r in plan.resources if r.type == contract.TYPE_BACKLOG_QUEUE)
    assert "__provider" not in backlog.inputs and backlog.retain_on_delete and backlog.parent


def test_a_plan_written_by_plan_json_reads_back_as_the_same_plan(tmp_path: Path) -> None:
    urn = "urn:pulumi:dev::pairedbus::azure-native:servicebus:Queue::queue-orders"
    plan = Plan(
        project="pairedbus",
        stack="dev",
        resources=(
            PlannedResource(urn=urn, type="azure-native:servicebus:Queue", name="queue-orders", inputs={}, custom=True),
        ),
    )
    back = read_baseline(_write(tmp_path, plan.to_json()))
    assert (back.project, back.stack) == ("pairedbus", "dev")
    assert [(r.urn, r.name, r.custom) for r in back.resources] == [(urn, "queue-orders", True)]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("{not json", "not JSON"),
        (
            {"version": 4, "features": ["refreshBeforeUpdate"], "deployment": {}},
            "version: a Pulumi deployment of version 4",
        ),
        ({"version": "3", "deployment": {}}, "version: expected the deployment version 3, got"),
        ({"hello": 1}, "the document: expected a plan written by `pairedbus plan --json`"),
        ({"project": "p", "stack": "s", "resources": [{"urn": "not-a-urn"}]}, "resources[0].urn"),
    ],
)
def test_a_bad_baseline_is_one_line_naming_the_flag_and_the_field(tmp_path: Path, document: Any, message: str) -> None:
    path = _write(tmp_path, document)
    with pytest.raises(BaselineError) as caught:
        read_baseline(path)
    text = str(caught.value)
    assert text.startswith(f"--baseline {path}: ") and message in text and "\n" not in text


def test_a_baseline_nested_deeper_than_64_levels_is_refused(tmp_path: Path) -> None:
    deep: Any = {}
    for _ in range(70):
        deep = {"x": deep}
    with pytest.raises(BaselineError, match="nested deeper than 64 levels"):
        read_baseline(_write(tmp_path, {"project": "p", "stack": "s", "resources": [], "outputs": deep}))


def test_another_stacks_baseline_is_refused_unless_it_is_empty() -> None:
    dev = Plan(project="pairedbus", stack="dev", resources=())
    check_same_stack(dev, project="pairedbus", stack="dev", path="b.json")
    check_same_stack(Plan(project="", stack="", resources=()), project="pairedbus", stack="prod", path="b.json")
    with pytest.raises(BaselineError, match=r"is of stack pairedbus/dev, not pairedbus/prod"):
        check_same_stack(dev, project="pairedbus", stack="prod", path="b.json")
