"""Reading a `--baseline` (`plans/state.py`): a plan or a `pulumi stack export`, checked as hostile input."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest

from pairedbus import contract
from pairedbus.plans import state
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


# --- A baseline no state can fool (issue 35, item 3) -------------------------------------------


def _refused(path: Path) -> str:
    with pytest.raises(BaselineError) as caught:
        read_baseline(path)
    text = str(caught.value)
    assert text.startswith(f"--baseline {path}: ") and "\n" not in text and len(text) < 400
    return text


def _dev_with(edit) -> dict[str, Any]:
    document = _state("dev")
    edit(document["deployment"]["resources"])
    return document


def _orders(resources: list[dict[str, Any]]) -> dict[str, Any]:
    return next(r for r in resources if r["urn"].endswith("::queue-orders"))


@pytest.mark.parametrize("protected_first", [True, False])
def test_a_urn_twice_in_a_state_is_refused_whichever_comes_first(tmp_path: Path, protected_first: bool) -> None:
    """Today the verdict depends on the order: protected-then-unprotected passes, the reverse blocks."""

    def twice(resources: list[dict[str, Any]]) -> None:
        orders = _orders(resources)
        copy_ = {**copy.deepcopy(orders), "protect": not protected_first}
        orders["protect"] = protected_first
        resources.append(copy_)

    document = _dev_with(twice)
    text = _refused(_write(tmp_path, document))
    last = len(document["deployment"]["resources"]) - 1
    assert f"deployment.resources[{last}].urn: duplicate of deployment.resources[20]" in text


def test_a_copy_pending_deletion_may_share_its_urn(tmp_path: Path) -> None:
    document = _dev_with(lambda rs: rs.append({**copy.deepcopy(_orders(rs)), "delete": True}))
    assert [r.name for r in read_baseline(_write(tmp_path, document)).resources].count("queue-orders") == 1


def test_a_urn_twice_in_a_plan_is_refused(tmp_path: Path) -> None:
    plan = _plan_document()
    plan["resources"].append(copy.deepcopy(plan["resources"][0]))
    assert "resources[1].urn: duplicate of resources[0]" in _refused(_write(tmp_path, plan))


def _plan_document(stack: str = "dev") -> dict[str, Any]:
    urn = f"urn:pulumi:{stack}::pairedbus::azure-native:servicebus:Queue::queue-orders"
    return {
        "project": "pairedbus",
        "stack": "dev",
        "resources": [{"urn": urn, "type": "azure-native:servicebus:Queue", "name": "queue-orders", "custom": True}],
    }


def test_a_plan_whose_urns_name_another_stack_is_refused(tmp_path: Path) -> None:
    text = _refused(_write(tmp_path, _plan_document(stack="prod")))
    assert "resources[0].urn: of stack pairedbus/prod, not the document's pairedbus/dev" in text


@pytest.mark.parametrize("field", ["parent", "dependencies"])
def test_a_state_linking_another_stack_is_refused(tmp_path: Path, field: str) -> None:
    def link(resources: list[dict[str, Any]]) -> None:
        elsewhere = _orders(resources)["parent"].replace("urn:pulumi:dev::", "urn:pulumi:prod::")
        _orders(resources)[field] = elsewhere if field == "parent" else [elsewhere]

    text = _refused(_write(tmp_path, _dev_with(link)))
    where = "parent" if field == "parent" else "dependencies[0]"
    assert f"deployment.resources[20].{where}: of stack pairedbus/prod, not the document's pairedbus/dev" in text


@pytest.mark.parametrize(
    ("urn", "problem"),
    [
        ("urn:pulumi:dev::pairedbus::azure-native:servicebus:Queue::queue\x00orders", "a control character (U+0000)"),
        (
            "urn:pulumi:dev::pairedbus::azure-native:servicebus:Queue::queue\x1b[2Jorders",
            "a control character (U+001B)",
        ),
        ("urn:pulumi:dev::pairedbus::azure-native:servicebus:Queue::queue\u0085orders", "a control character (U+0085)"),
        ("urn:pulumi:de v::pairedbus::azure-native:servicebus:Queue::queue-orders", "stack 'de v' is not"),
        ("urn:pulumi:dev::pair/edbus::azure-native:servicebus:Queue::queue-orders", "project 'pair/edbus' is not"),
        ("urn:pulumi:dev::pairedbus::a:b:C$$azure-native:servicebus:Queue::queue-orders", "an empty type"),
    ],
)
def test_a_urn_pulumi_would_never_write_is_refused_in_both_formats(tmp_path: Path, urn: str, problem: str) -> None:
    plan = _plan_document()
    plan["resources"][0]["urn"] = urn
    assert f"resources[0].urn: {problem}" in _refused(_write(tmp_path, plan, "plan.json"))
    document = _dev_with(lambda rs: _orders(rs).update(urn=urn))
    assert f"deployment.resources[20].urn: {problem}" in _refused(_write(tmp_path, document))


def test_a_state_urn_that_does_not_carry_its_parents_types_is_refused(tmp_path: Path) -> None:
    """The engine builds a child's URN from its parent's (`resource.NewURN`): a state whose URNs do not is not
    one Pulumi wrote, and rebuilding them is what made a deep chain quadratic."""

    def shorten(resources: list[dict[str, Any]]) -> None:
        _orders(resources)["urn"] = "urn:pulumi:dev::pairedbus::azure-native:servicebus:Queue::queue-orders"

    text = _refused(_write(tmp_path, _dev_with(shorten)))
    assert "deployment.resources[20].urn: not the URN Pulumi makes under its parent" in text


def _chain(length: int) -> list[dict[str, Any]]:
    """`length` components, each the parent of the next, with the URNs the engine makes."""
    entries, qualified, parent = [], "", None
    for i in range(length):
        qualified = f"{qualified}$t:m:C" if qualified else "t:m:C"
        urn = f"urn:pulumi:dev::pairedbus::{qualified}::c{i}"
        entries.append({"urn": urn, "custom": False, "type": "t:m:C", **({"parent": parent} if parent else {})})
        parent = urn
    return entries


def _deployment(resources: list[dict[str, Any]]) -> dict[str, Any]:
    return {"version": 3, "deployment": {"manifest": {}, "resources": resources}}


def test_a_parent_chain_at_the_bound_is_read(tmp_path: Path) -> None:
    plan = read_baseline(_write(tmp_path, _deployment(_chain(64))))
    assert len(plan.resources) == 64
    assert state.MAX_PARENT_DEPTH == 64


def test_a_parent_chain_deeper_than_the_bound_is_refused_in_both_formats(tmp_path: Path) -> None:
    """A 16,000-deep chain in a 3.2 MB state took 5.8 GB before; one level past the bound is enough to show."""
    text = _refused(_write(tmp_path, _deployment(_chain(65))))
    assert "deployment.resources[64].parent: nested more than 64 levels deep" in text
    entries = [{**entry, "name": f"c{i}"} for i, entry in enumerate(_chain(65))]
    text = _refused(_write(tmp_path, {"project": "pairedbus", "stack": "dev", "resources": entries}, "plan.json"))
    assert "resources[64].parent: nested more than 64 levels deep" in text


def test_a_parent_cycle_is_refused_in_both_formats(tmp_path: Path) -> None:
    a, b = "urn:pulumi:dev::pairedbus::t:m:A::a", "urn:pulumi:dev::pairedbus::t:m:B::b"
    entries = [
        {"urn": a, "type": "t:m:A", "name": "a", "custom": False, "parent": b},
        {"urn": b, "type": "t:m:B", "name": "b", "custom": False, "parent": a},
    ]
    text = _refused(_write(tmp_path, {"project": "pairedbus", "stack": "dev", "resources": entries}, "plan.json"))
    assert "resources[0].parent: a parent cycle (a -> b -> a)" in text
    loop = {"urn": a, "type": "t:m:A", "custom": False, "parent": a}  # its own parent: the URN check cannot see it
    text = _refused(_write(tmp_path, _deployment([loop])))
    assert "deployment.resources[0].parent: a parent cycle (a -> a)" in text


def test_a_baseline_that_is_not_a_regular_file_is_refused_before_reading(tmp_path: Path) -> None:
    """`/dev/zero` read until memory ran out; a FIFO would block."""
    text = _refused(Path("/dev/zero"))
    assert text == "--baseline /dev/zero: not a regular file (a character device); expected a JSON file"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert _refused(fifo).endswith(": not a regular file (a FIFO); expected a JSON file")


def test_a_baseline_over_the_size_bound_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:
        handle.truncate(64 * 1024 * 1024 + 1)  # sparse: nothing is written
    assert _refused(path).endswith(": 67108865 bytes, more than a baseline may hold (67108864)")
    assert state.MAX_BASELINE_BYTES == 64 * 1024 * 1024


def test_a_read_resource_is_marked_external(tmp_path: Path) -> None:
    document = _dev_with(lambda rs: _orders(rs).update(external=True))
    [orders] = [r for r in read_baseline(_write(tmp_path, document)).resources if r.name == "queue-orders"]
    assert orders.external is True
