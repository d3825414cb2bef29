"""`pairedbus metrics export` wires its flags to the exporter (moved from tests/exports/test_commands.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from pairedbus import cli
from pairedbus.exports.metrics import MetricsExport

#: Subscription ids are GUIDs (pairedbus.commands.checks.check_subscription_id).
SUB = "0b1f6471-1bf0-4dda-aec3-cb9272f09590"


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
