"""`pairedbus inventory export` and `pairedbus metrics export` wire their flags to the exporters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from pairedbus import cli
from pairedbus.exports.inventory import InventoryExport
from pairedbus.exports.metrics import MetricsExport

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


def test_metrics_export_command_parses_since_and_granularity(mocker, tmp_path: Path) -> None:
    export = mocker.patch(
        "pairedbus.exports.metrics.export_metrics", return_value=MetricsExport(out=tmp_path, namespaces=1)
    )
    # Within Azure Monitor's 93 days of retention, whenever the test runs.
    start = datetime.now(UTC).date() - timedelta(days=10)
    since, until = start.isoformat(), (start + timedelta(days=2)).isoformat()
    code = cli.main(
        [
            "metrics",
            "export",
            "--subscription",
            SUB,
            "--since",
            since,
            "--until",
            until,
            "--granularity",
            "PT1H",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 0
    kwargs = export.call_args.kwargs
    assert kwargs["since"] == datetime.fromisoformat(since).replace(tzinfo=UTC)
    assert kwargs["until"] == datetime.fromisoformat(until).replace(tzinfo=UTC)
    assert kwargs["granularity"] == timedelta(hours=1)


def test_metrics_export_command_rejects_a_bad_granularity(tmp_path: Path, capsys) -> None:
    code = cli.main(
        ["metrics", "export", "--subscription", SUB, "--since", "1d", "--granularity", "hourly", "--out", str(tmp_path)]
    )
    assert code == 2
    assert "--granularity hourly" in capsys.readouterr().err


def test_missing_azure_credentials_are_one_line_exit_7(mocker, tmp_path: Path, capsys) -> None:
    from azure.identity import CredentialUnavailableError

    mocker.patch(
        "pairedbus.exports.inventory.export_inventory",
        side_effect=CredentialUnavailableError("DefaultAzureCredential failed to retrieve a token.\nAttempted ..."),
    )
    assert cli.main(["inventory", "export", "--subscription", SUB, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pairedbus: error: no Azure credential found") and err.count("\n") == 1


def test_an_unwritable_output_is_refused_before_azure_is_called(mocker, tmp_path: Path, capsys) -> None:
    export = mocker.patch("pairedbus.exports.metrics.export_metrics")
    (tmp_path / "file").write_text("x")
    code = cli.main(["metrics", "export", "--subscription", SUB, "--since", "1d", "--out", str(tmp_path / "file")])
    assert code == 2
    assert capsys.readouterr().err.startswith(f"pairedbus: error: --out {tmp_path / 'file'}: exists and is not")
    export.assert_not_called()


def test_a_huge_since_is_one_line_not_an_overflow(mocker, tmp_path: Path, capsys) -> None:
    export = mocker.patch("pairedbus.exports.metrics.export_metrics")
    for since in ("99999999999d", "400d"):
        code = cli.main(["metrics", "export", "--subscription", SUB, "--since", since, "--out", str(tmp_path)])
        err = capsys.readouterr().err
        assert code == 2 and err.startswith("pairedbus: error: --since ") and err.count("\n") == 1, err
    export.assert_not_called()


def test_export_progress_is_drawn_on_a_terminal_only() -> None:
    import io

    from pairedbus.commands.output import Steps

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    piped = io.StringIO()
    with Steps("inventory: namespaces", stream=piped) as steps:
        steps("contoso-prod-weu")
    assert piped.getvalue() == "" and steps.done == 1

    terminal = Terminal()
    with Steps("inventory: namespaces", stream=terminal) as steps:
        steps("contoso-prod-weu")
        steps("contoso-prod-neu")
    assert steps.done == 2 and "inventory: namespaces" in terminal.getvalue()
