"""`pairedbus plan STACK`: the program itself, rendered offline for a stack file."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
import yaml

from pairedbus import contract
from pairedbus.cli import main
from pairedbus.iac.render import PulumiProject, render_stack
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


def test_a_stack_without_a_file_is_one_line_naming_it_and_the_config_the_program_needs(capsys) -> None:
    # As for the Pulumi CLI, a missing Pulumi.qa.yaml is an empty config: pairedbus's program needs some.
    assert main(["plan", "qa", "--project-dir", str(REPO)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith(
        "pairedbus: error: stack 'qa': no stacks/Pulumi.qa.yaml (stacks with a file: dev, prod, staging); "
        "the program needs config: pairedbus:"
    )
    assert "pairedbus:primary" in captured.err and "pairedbus:secondary" in captured.err


#: A program of another project that reads its own config, registering three resources.
NEEDY_PROGRAM = """
import pulumi

class Thing(pulumi.CustomResource):
    def __init__(self, name, size):
        super().__init__("shop:index:Thing", name, {"size": size})

size = pulumi.Config().require_int("size")
for name in ("a", "b", "c"):
    Thing(name, size)
"""


def _shop(tmp_path: Path, stack_file: str | None = None) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "Pulumi.yaml").write_text("name: shop\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(NEEDY_PROGRAM)
    if stack_file is not None:
        (tmp_path / "Pulumi.dev.yaml").write_text(stack_file)
    return tmp_path


@pytest.mark.parametrize(
    ("stack_file", "where"),
    [(None, "no Pulumi.dev.yaml (stacks with a file: none)"), ("config: {}\n", "not set in Pulumi.dev.yaml")],
)
def test_a_program_missing_its_own_config_is_one_line_naming_the_key(
    tmp_path: Path, capsys, stack_file: str | None, where: str
) -> None:
    assert main(["plan", "dev", "--project-dir", str(_shop(tmp_path, stack_file))]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"pairedbus: error: stack 'dev': the program needs config shop:size; {where}\n"


def test_a_program_of_another_project_is_not_held_to_pairedbus_stack_config(tmp_path: Path, capsys) -> None:
    assert main(["plan", "dev", "--project-dir", str(_shop(tmp_path, "config:\n  shop:size: 2\n"))]) == 0
    out = capsys.readouterr().out
    assert "Thing a" in out and "passed: 3 resources: 3 Thing" in out


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plan_shows_its_progress_on_a_terminals_stderr(tmp_path: Path, capsys, monkeypatch) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["plan", "dev", "--project-dir", str(_shop(tmp_path, "config:\n  shop:size: 2\n"))]) == 0
    drawn = terminal.getvalue()
    # The last frame is drawn before the bar clears itself: the phase, and every registration counted.
    assert "plan: running the policy pack" in drawn and "3 resources registered" in drawn
    assert "resources registered" not in capsys.readouterr().out  # the plan itself is on stdout, untouched


def test_the_progress_says_the_program_is_loading_until_its_first_resource_registers() -> None:
    from pairedbus.commands.plan import _registered, plan_progress

    progress = plan_progress(enabled=False)
    progress.set_description("plan: loading the program for stack 'dev'")
    registered = _registered(progress, "dev")
    registered("pulumi:pulumi:Stack", "shop-dev")  # the root stack registers before the program runs
    assert progress.done == 0 and progress.description == "plan: loading the program for stack 'dev'"
    registered("shop:index:Thing", "a")
    registered("shop:index:Thing", "b")
    assert progress.done == 2 and progress.description == "plan: rendering stack 'dev'"


def test_plan_shows_no_progress_when_stderr_is_piped_or_the_json_goes_to_stdout(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    project = str(_shop(tmp_path, "config:\n  shop:size: 2\n"))
    assert main(["plan", "dev", "--project-dir", project]) == 0
    assert capsys.readouterr().err == ""  # piped (pytest's capture is no terminal)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["plan", "dev", "--project-dir", project, "--json", "-"]) == 0
    assert terminal.getvalue() == ""
    document = json.loads(capsys.readouterr().out)  # stdout is the JSON document alone
    assert [r["name"] for r in document["resources"] if r["type"] == "shop:index:Thing"] == ["a", "b", "c"]
    assert document["policy"]["passed"] is True


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


# --- A gate no state can fool (issue 35, item 3) -----------------------------------------------

DEV_STATE = REPO / "tests" / "iac" / "fixtures" / "state" / "dev.json"


def _dev_state_with(tmp_path: Path, edit) -> Path:
    document = json.loads(DEV_STATE.read_text())
    resources = document["deployment"]["resources"]
    edit(resources, next(r for r in resources if r["urn"].endswith("::queue-orders")))
    path = tmp_path / "state.json"
    path.write_text(json.dumps(document))
    return path


def _gate(baseline: Path | str, *flags: str) -> list[str]:
    return ["plan", "dev", "--project-dir", str(REPO), "--baseline", str(baseline), *flags]


@pytest.mark.parametrize(
    "value",
    [
        "contoso[/]",  # crashed `plan` (rich's MarkupError, exit 3)
        "[link=https://example.com/x]contoso[/link]",  # swallowed: a hyperlink on a terminal
        "[bold red]contoso[/bold red]",
    ],
)
def test_printed_values_are_never_read_as_markup(tmp_path: Path, capsys, value: str) -> None:
    def rename(resources, orders) -> None:
        orders["inputs"]["namespaceName"] = value  # a create-only input: the gate prints it

    assert main(_gate(_dev_state_with(tmp_path, rename))) == 1
    out = capsys.readouterr().out
    assert f"namespaceName {value!r} -> 'contoso-dev-weu'" in out


def test_a_secret_in_the_state_prints_as_the_mask_and_is_no_evidence_of_a_change(tmp_path: Path, capsys) -> None:
    secret = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "ciphertext": "AAAA"}

    def mask(resources, orders) -> None:
        orders["inputs"]["enablePartitioning"] = secret  # a masked create-only input: not "would be replaced"
        gone = json.loads(json.dumps(orders))
        gone["urn"] = gone["urn"].replace("::queue-orders", "::queue-legacy")
        gone["inputs"]["queueName"] = secret
        resources.append(gone)

    assert main(_gate(_dev_state_with(tmp_path, mask))) == 1  # the legacy queue leaves the program
    out = capsys.readouterr().out
    assert "would be replaced" not in out
    assert "blocked: [secret] (azure-native:servicebus:Queue) leaves the program and would be deleted" in out


def test_a_read_resource_leaving_the_program_is_a_note_and_passes(tmp_path: Path, capsys) -> None:
    def read(resources, orders) -> None:
        gone = json.loads(json.dumps(orders))
        gone.update(urn=gone["urn"].replace("::queue-orders", "::queue-legacy"), external=True)
        gone["inputs"]["queueName"] = "legacy"
        resources.append(gone)

    assert main(_gate(_dev_state_with(tmp_path, read))) == 0
    out = capsys.readouterr().out
    assert (
        "note: legacy (azure-native:servicebus:Queue) leaves the program; it was read (external), not created, "
        "so Pulumi forgets it and Azure keeps it"
    ) in out
    assert "<  Queue legacy" in out and "deletions" not in out


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda rs, orders: rs.append(dict(orders, protect=True)), "deployment.resources[35].urn: duplicate of"),
        (lambda rs, orders: orders.update(urn=orders["urn"] + "\x00"), "deployment.resources[20].urn: a control"),
        (lambda rs, orders: orders.update(parent=orders["urn"]), "deployment.resources[20].parent: a parent cycle"),
    ],
)
def test_a_baseline_pulumi_would_never_write_is_refused_before_rendering(
    tmp_path: Path, capsys, edit, expected: str
) -> None:
    path = _dev_state_with(tmp_path, edit)
    assert main(_gate(path)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"pairedbus: error: --baseline {path}: {expected}")
    assert captured.err.count("\n") == 1


def test_a_baseline_that_is_not_a_regular_file_is_refused_before_reading(capsys) -> None:
    assert main(_gate("/dev/zero")) == 2  # read until memory ran out
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "pairedbus: error: --baseline /dev/zero: not a regular file (a character device); expected a JSON file\n"
    )


# --- Regions (issue 35, item 5) ----------------------------------------------------------------


def test_plan_refuses_a_misspelt_region_unless_the_stack_marks_it_as_new(project_copy: Path, capsys) -> None:
    path = project_copy / "stacks" / "Pulumi.dev.yaml"
    document = yaml.safe_load(path.read_text())
    document["config"]["pairedbus:secondary"]["location"] = "northeurop"
    path.write_text(yaml.safe_dump(document))
    assert main(["plan", "dev", "--project-dir", str(project_copy)]) == 2  # was exit 0, with a warning
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "pairedbus: error: pairedbus:secondary.location: expected a region of pairedbus's region table "
        "(as of 2025-09-23), got 'northeurop' (did you mean northeurope?); if it is a region newer than the table, "
        "set pairedbus:allowUnknownRegion: true\n"
    )
    document["config"]["pairedbus:allowUnknownRegion"] = True
    path.write_text(yaml.safe_dump(document))
    assert main(["plan", "dev", "--project-dir", str(project_copy)]) == 0
    assert "warning: pairedbus:secondary.location: 'northeurop' is not in" in capsys.readouterr().out


def test_plan_refuses_a_pair_across_clouds(project_copy: Path, capsys) -> None:
    path = project_copy / "stacks" / "Pulumi.dev.yaml"
    document = yaml.safe_load(path.read_text())
    document["config"]["pairedbus:secondary"]["location"] = "usgovvirginia"
    path.write_text(yaml.safe_dump(document))
    assert main(["plan", "dev", "--project-dir", str(project_copy)]) == 2  # was exit 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "pairedbus:secondary.location: expected a region of the primary's cloud, got 'usgovvirginia'" in err


def test_against_a_baseline_the_resources_are_matched_once(tmp_path: Path, capsys, monkeypatch) -> None:
    from pairedbus.plans.baseline import ResourceMatch

    project = str(_shop(tmp_path / "shop", "config:\n  shop:size: 2\n"))
    baseline = tmp_path / "baseline.json"
    assert main(["plan", "dev", "--project-dir", project, "--json", str(baseline)]) == 0
    made: list[int] = []
    original = ResourceMatch.of

    def counted(_cls: type[ResourceMatch], old: Plan, new: Plan) -> ResourceMatch:
        made.append(len(new.resources))
        return original(old, new)

    monkeypatch.setattr(ResourceMatch, "of", classmethod(counted))
    (tmp_path / "shop" / "Pulumi.dev.yaml").write_text("config:\n  shop:size: 3\n")
    assert main(["plan", "dev", "--project-dir", project, "--baseline", str(baseline)]) == 0
    assert "~ Thing a (update)" in capsys.readouterr().out
    assert made == [3]  # its three Things, matched once for both the operations and the gate's changes
