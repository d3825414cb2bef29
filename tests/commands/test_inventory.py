"""`pairedbus inventory export` wires its flags to the exporter (moved from tests/exports/test_commands.py)."""

from __future__ import annotations

from pathlib import Path

from pairedbus import cli
from pairedbus.exports.inventory import InventoryExport

#: Subscription ids are GUIDs (pairedbus.commands.checks.check_subscription_id).
SUB = "0b1f6471-1bf0-4dda-aec3-cb9272f09590"


def test_inventory_export_command_passes_subscription_and_directory(mocker, tmp_path: Path, capsys) -> None:
    export = mocker.patch(
        "pairedbus.exports.inventory.export_inventory",
        return_value=InventoryExport(path=tmp_path / "s.jsonl", namespaces=2, queues=3, backlog_queues=10),
    )
    assert cli.main(["inventory", "export", "--subscription", SUB, "--out", str(tmp_path)]) == 0
    (call,) = export.call_args_list
    assert call.args == (SUB, str(tmp_path)) and callable(call.kwargs["on_step"])
    assert "2 namespaces, 3 queues" in capsys.readouterr().out


def test_inventory_export_command_fails_when_a_data_plane_was_not_listed(mocker, tmp_path: Path) -> None:
    result = InventoryExport(path=tmp_path / "s.jsonl", data_plane_failures={"ns": "PermissionError"})
    mocker.patch("pairedbus.exports.inventory.export_inventory", return_value=result)
    assert cli.main(["inventory", "export", "--subscription", SUB, "--out", str(tmp_path)]) == 1


def test_missing_azure_credentials_are_one_line_exit_7(mocker, tmp_path: Path, capsys) -> None:
    from azure.identity import CredentialUnavailableError

    mocker.patch(
        "pairedbus.exports.inventory.export_inventory",
        side_effect=CredentialUnavailableError("DefaultAzureCredential failed to retrieve a token.\nAttempted ..."),
    )
    assert cli.main(["inventory", "export", "--subscription", SUB, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pairedbus: error: no Azure credential found") and err.count("\n") == 1
