"""The command line's loose ends (issue 21): each one line naming what to fix, exit 2, before any work."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
import yaml

from pairedbus.cli import main

REPO = Path(__file__).resolve().parents[2]
GUID = "0b1f6471-1bf0-4dda-aec3-cb9272f09590"


def _one_line_error(err: str, *words: str) -> None:
    assert err.count("\n") == 1 and err.startswith("pairedbus: error: "), err
    for word in words:
        assert word in err, err


# --- drift checks its outputs before the listing -------------------------------------------------


def test_drift_refuses_an_unwritable_json_before_listing_the_queues(mocker, tmp_path: Path, capsys) -> None:
    listing = mocker.patch("pairedbus.iac.drift.check_live_backlog")
    (tmp_path / "file").write_text("x")
    target = tmp_path / "file" / "drift.json"  # a path under a file: cannot be written
    code = main(
        [
            "drift",
            "--secondary",
            "contoso-neu.servicebus.windows.net",
            "--primary-name",
            "contoso-weu",
            "--json",
            str(target),
        ]
    )
    assert code == 2
    captured = capsys.readouterr()
    _one_line_error(captured.err, "--json", str(target))
    assert captured.out == ""
    listing.assert_not_called()


def test_drift_with_a_writable_json_still_exits_1_on_drift(mocker, tmp_path: Path, capsys) -> None:
    report = mocker.Mock(drifted=True, lines=lambda: ["drift: x"], to_json=lambda: {"drifted": True})
    mocker.patch("pairedbus.iac.drift.check_live_backlog", return_value=report)
    target = tmp_path / "out" / "drift.json"
    argv = ["drift", "--secondary", "contoso-neu.servicebus.windows.net", "--primary-name", "contoso-weu"]
    assert main([*argv, "--json", str(target)]) == 1
    assert json.loads(target.read_text()) == {"drifted": True}


# --- a subscription id is a GUID --------------------------------------------------------------------


@pytest.mark.parametrize(
    "subscription", ["../../x y", "sub-1", "", GUID + "/../..", "0b1f6471-1bf0-4dda-aec3-cb9272f0959"]
)
def test_inventory_export_refuses_a_subscription_that_is_not_a_guid(
    mocker, tmp_path: Path, capsys, subscription
) -> None:
    export = mocker.patch("pairedbus.exports.inventory.export_inventory")
    out = tmp_path / "a" / "b" / "out"
    assert main(["inventory", "export", "--subscription", subscription, "--out", str(out)]) == 2
    _one_line_error(capsys.readouterr().err, "--subscription", "GUID")
    export.assert_not_called()
    assert list(tmp_path.rglob("*")) == []  # nothing written, above --out or anywhere


def test_inventory_export_takes_a_guid_in_any_case(mocker, tmp_path: Path) -> None:
    from pairedbus.exports.inventory import InventoryExport

    export = mocker.patch(
        "pairedbus.exports.inventory.export_inventory", return_value=InventoryExport(path=tmp_path / "x.jsonl")
    )
    assert main(["inventory", "export", "--subscription", GUID.upper(), "--out", str(tmp_path)]) == 0
    assert export.call_args.args[0] == GUID


def test_metrics_export_refuses_a_subscription_that_is_not_a_guid(mocker, tmp_path: Path, capsys) -> None:
    export = mocker.patch("pairedbus.exports.metrics.export_metrics")
    argv = ["metrics", "export", "--subscription", "../../x y", "--since", "1d", "--out", str(tmp_path / "o")]
    assert main(argv) == 2
    _one_line_error(capsys.readouterr().err, "--subscription")
    export.assert_not_called()


# --- policy names in --policy-config ------------------------------------------------------------------


def test_an_unknown_policy_name_is_refused_with_a_did_you_mean(tmp_path: Path, capsys) -> None:
    config = tmp_path / "policy.json"
    config.write_text(json.dumps({"local-auth-disable": "advisory"}))
    assert main(["plan", "dev", "--project-dir", str(REPO), "--policy-config", str(config)]) == 2
    captured = capsys.readouterr()
    _one_line_error(
        captured.err, "--policy-config", "'local-auth-disable' is not a policy", "did you mean 'local-auth-disabled'?"
    )
    assert captured.out == ""  # before the render


def test_a_name_far_from_any_policy_lists_the_pack(tmp_path: Path) -> None:
    from pairedbus.errors import UserError
    from pairedbus.policy.gate import load_policy_config

    config = tmp_path / "policy.json"
    config.write_text(json.dumps({"zzz": "advisory"}))
    with pytest.raises(UserError, match=r"the pack.s policies: .*backlog-queue-settings"):
        load_policy_config(config)
    config.write_text(json.dumps({"all": "advisory", "local-auth-disabled": {"enforcementLevel": "mandatory"}}))
    assert load_policy_config(config)["all"] == "advisory"  # `all` is Pulumi's own key for every policy


# --- stack file keys -----------------------------------------------------------------------------------


def _write_dev(project: Path, edit) -> None:
    path = project / "stacks" / "Pulumi.dev.yaml"
    document = yaml.safe_load(path.read_text())
    edit(document)
    path.write_text(yaml.safe_dump(document, sort_keys=False))


@pytest.mark.parametrize(
    ("key", "hint"),
    [
        ("encryptionsaltt", "did you mean 'encryptionsalt'?"),
        ("Config", "did you mean 'config'?"),
        ("stacks", "ignores any other"),
    ],
)
def test_a_stack_file_key_pulumi_does_not_read_is_refused(project_copy: Path, capsys, key: str, hint: str) -> None:
    _write_dev(project_copy, lambda d: d.update({key: "v1:abc"}))
    assert main(["plan", "dev", "--project-dir", str(project_copy)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"Pulumi.dev.yaml: '{key}': not a stack file key" in captured.err and hint in captured.err


def test_every_key_pulumi_reads_is_accepted(project_copy: Path) -> None:
    def edit(document: dict) -> None:
        document.update(encryptionsalt="v1:c2FsdA==:v1:abc", secretsprovider="passphrase", environment=["shared"])

    _write_dev(project_copy, edit)
    assert main(["plan", "dev", "--project-dir", str(project_copy)]) == 0


# --- the syphon's registry id ------------------------------------------------------------------------------

_REGISTRY = (
    "/subscriptions/" + GUID + "/resourceGroups/rg-acr/providers/Microsoft.ContainerRegistry/registries/contosoacr"
)


@pytest.mark.parametrize(
    "resource_id",
    [
        _REGISTRY.replace("rg-acr", ".."),
        _REGISTRY + "/../../other",
        _REGISTRY.replace("contosoacr", "../../x"),
        _REGISTRY.replace("Microsoft.ContainerRegistry/registries", "Microsoft.Storage/storageAccounts"),
        _REGISTRY.replace(GUID, "prod"),
        _REGISTRY.replace("contosoacr", "acr"),  # registry names are 5-50 letters and digits
    ],
)
def test_a_registry_id_that_is_not_a_registry_is_refused(project_copy: Path, capsys, resource_id: str) -> None:
    _write_dev(
        project_copy,
        lambda d: d["config"]["pairedbus:syphon"].update(
            registry={"server": "contosoacr.azurecr.io", "resourceId": resource_id}
        ),
    )
    assert main(["plan", "dev", "--project-dir", str(project_copy)]) == 2
    err = capsys.readouterr().err
    assert "pairedbus:syphon.registry.resourceId" in err and "container registry's ARM id" in err


def test_a_registry_id_is_the_acr_pull_scope(project_copy: Path, tmp_path: Path) -> None:
    _write_dev(
        project_copy,
        lambda d: d["config"]["pairedbus:syphon"].update(
            registry={"server": "contosoacr.azurecr.io", "resourceId": _REGISTRY}
        ),
    )
    out = tmp_path / "plan.json"
    assert main(["plan", "dev", "--project-dir", str(project_copy), "--json", str(out)]) == 0
    scopes = [r["inputs"].get("scope") for r in json.loads(out.read_text())["resources"]]
    assert _REGISTRY in scopes


# --- doctor says why Java did not start -------------------------------------------------------------------


def _tool(folder: Path, name: str, script: str) -> Path:
    path = folder / name
    path.write_text(script)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def _java_line(tmp_path: Path, monkeypatch, capsys) -> str:
    monkeypatch.setenv("PATH", str(tmp_path))
    main(["doctor"])
    [line] = [line for line in capsys.readouterr().out.splitlines() if line.split()[1:2] == ["java"]]
    return line


def test_doctor_says_why_java_failed(tmp_path: Path, monkeypatch, capsys) -> None:
    _tool(tmp_path, "java", "#!/bin/sh\necho 'Error: could not open `/usr/lib/jvm/x/lib/jvm.cfg'\"'\"'' >&2\nexit 1\n")
    line = _java_line(tmp_path, monkeypatch, capsys)
    assert line.startswith("MISSING") and "failed with exit 1: Error: could not open" in line
    assert "no java on PATH" not in line


def test_doctor_says_when_java_cannot_be_started(tmp_path: Path, monkeypatch, capsys) -> None:
    _tool(tmp_path, "java", "\x7fELF not really a binary")  # exec format error
    line = _java_line(tmp_path, monkeypatch, capsys)
    assert line.startswith("MISSING") and "could not be started (Exec format error)" in line


def test_doctor_still_says_when_there_is_no_java(tmp_path: Path, monkeypatch, capsys) -> None:
    assert "no java on PATH" in _java_line(tmp_path, monkeypatch, capsys)
