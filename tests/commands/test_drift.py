"""`pairedbus drift`'s flags: each refused with one line naming it (exit 2) before anything is listed."""

from __future__ import annotations

import pytest

from pairedbus.cli import main


@pytest.fixture
def listing(mocker):
    """The live listing; these tests must be refused before it."""
    return mocker.patch("pairedbus.iac.drift.check_live_backlog", side_effect=AssertionError("listed"))


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["--secondary", "contoso-backlog", "--primary-name", "contoso"],
            "--secondary: expected a fully qualified namespace such as NAME.servicebus.windows.net, "
            "got 'contoso-backlog'",
        ),
        (["--secondary", "https://x.servicebus.windows.net", "--primary-name", "contoso"], "--secondary: expected"),
        (["--secondary", "x.servicebus.windows.net:5671", "--primary-name", "contoso"], "--secondary: expected"),
        (
            ["--secondary", "x.servicebus.windows.net", "--primary-name", "contoso.servicebus.windows.net"],
            "--primary-name: expected a namespace name, not an FQDN (6-50 letters",
        ),
        (["--secondary", "x.servicebus.windows.net", "--primary-name", "1contoso"], "--primary-name: expected"),
        (
            ["--secondary", "x.servicebus.windows.net", "--primary-name", "contoso", "--count", "0"],
            "--count: expected 1..10000, got 0",
        ),
        (
            ["--secondary", "x.servicebus.windows.net", "--primary-name", "contoso", "--count", "10001"],
            "--count: expected 1..10000, got 10001",
        ),
    ],
)
def test_a_bad_flag_is_one_line_and_exit_two_before_listing(listing, capsys, argv: list[str], line: str) -> None:
    assert main(["drift", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and line in err[0]
    listing.assert_not_called()


def test_an_unwritable_json_is_refused_before_listing(listing, tmp_path, capsys) -> None:
    (tmp_path / "file").write_text("")
    argv = ["--secondary", "x.servicebus.windows.net", "--primary-name", "contoso", "--json"]
    assert main(["drift", *argv, str(tmp_path / "file" / "r.json")]) == 2
    assert "--json" in capsys.readouterr().err
    listing.assert_not_called()


def test_the_limits_themselves_pass_to_the_listing(mocker, capsys) -> None:
    report = mocker.Mock(drifted=False)
    report.lines.return_value = ["no drift"]
    check = mocker.patch("pairedbus.iac.drift.check_live_backlog", return_value=report)
    for count in ("1", "10000"):
        argv = ["--secondary", "x.servicebus.windows.net", "--primary-name", "contoso", "--count", count]
        assert main(["drift", *argv]) == 0
    assert [c.args for c in check.call_args_list] == [
        ("x.servicebus.windows.net", "contoso", 1),
        ("x.servicebus.windows.net", "contoso", 10000),
    ]
