"""`pairedbus syphon` (`commands/syphon.py`): the command's flags reach the service's options, and a bad one
is one line with exit 2 before anything starts."""

from __future__ import annotations

import pytest

from pairedbus import cli
from pairedbus.service import syphon_process
from pairedbus.service.endpoints import ENV_PRIMARY, ENV_SECONDARY, ENV_SECONDARY_RESOURCE_ID
from pairedbus.service.syphon_process import ServiceOptions

PRIMARY = "contoso.servicebus.windows.net"
SECONDARY = "contoso-dr.servicebus.windows.net"


def test_cli_prints_a_bad_flag_as_one_line_and_exits_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_PRIMARY, raising=False)
    monkeypatch.delenv(ENV_SECONDARY, raising=False)
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("syphon",))  # other commands' imports are not under test
    assert cli.main(["syphon", "--primary", "sb://contoso", "--secondary", SECONDARY]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("pairedbus: error: --primary: expected a fully qualified namespace")


def test_the_flags_and_the_environment_reach_the_service_and_its_exit_code_is_the_commands(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(ENV_PRIMARY, raising=False)
    monkeypatch.delenv(ENV_SECONDARY_RESOURCE_ID, raising=False)
    monkeypatch.setenv(ENV_SECONDARY, SECONDARY)
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("syphon",))
    started: list[ServiceOptions] = []

    def run_service(options: ServiceOptions) -> int:
        started.append(options)
        return 7

    monkeypatch.setattr(syphon_process, "run_service", run_service)
    assert cli.main(["syphon", "--primary", PRIMARY, "--port", "9100", "--host", "127.0.0.1"]) == 7
    [options] = started
    assert (options.primary, options.secondary, options.port, options.host) == (PRIMARY, SECONDARY, 9100, "127.0.0.1")


def test_nothing_starts_when_a_flag_is_bad(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("syphon",))
    monkeypatch.setattr(syphon_process, "run_service", lambda options: pytest.fail("the service started"))
    assert cli.main(["syphon", "--primary", PRIMARY, "--secondary", SECONDARY, "--port", "http"]) == 2
