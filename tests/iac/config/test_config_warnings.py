"""Warnings of a valid stack config: a location the region table lacks, in a stack that marks it as new
(`allowUnknownRegion: true`), is deployed anyway (ARM decides), with one line naming the key; inside a Pulumi
program each warning goes to the engine once."""

from __future__ import annotations

import importlib
from typing import Any

from pairedbus.iac.config import parse_stack_config
from pairedbus.iac.config.config_warnings import config_warnings, log_in_program

# The module, not the function of the same name that pairedbus.iac.config re-exports.
module = importlib.import_module("pairedbus.iac.config.config_warnings")


def test_a_config_in_the_table_has_no_warnings(config_dict: dict[str, Any]) -> None:
    assert config_warnings(parse_stack_config(config_dict)) == []


def test_each_location_outside_the_table_is_one_line_naming_its_key(config_dict: dict[str, Any]) -> None:
    config_dict["secondary"]["location"] = "newzealandnorth2"
    config_dict["syphon"]["location"] = "Mars Central"
    config_dict["allowUnknownRegion"] = True  # refused otherwise (tests/iac/config/test_regions.py)
    assert config_warnings(parse_stack_config(config_dict)) == [
        "pairedbus:secondary.location: 'newzealandnorth2' is not in pairedbus's region table (as of 2025-09-23); "
        "deploying it anyway, ARM decides whether the region exists (did you mean newzealandnorth?)",
        "pairedbus:syphon.location: 'marscentral' is not in pairedbus's region table (as of 2025-09-23); "
        "deploying it anyway, ARM decides whether the region exists",
    ]


def test_outside_a_pulumi_program_nothing_is_logged(mocker) -> None:
    # No engine, whatever an earlier test's mocks left in this process (pulumi.runtime.set_mocks sets one for good).
    mocker.patch("pulumi.runtime.settings.get_engine", return_value=None)
    warn = mocker.patch("pulumi.log.warn")
    log_in_program(["pairedbus:syphon.location: not in the table"])
    warn.assert_not_called()


def test_inside_a_program_each_warning_is_logged_once_per_engine(mocker) -> None:
    class Engine:
        pass

    get_engine = mocker.patch("pulumi.runtime.settings.get_engine", return_value=Engine())
    warn = mocker.patch("pulumi.log.warn")
    mocker.patch.object(module, "_LOGGED", type(module._LOGGED)())

    log_in_program(["a", "b"])
    log_in_program(["b", "c"])  # the loader, then the component: validated twice

    assert [c.args[0] for c in warn.call_args_list] == ["a", "b", "c"]
    get_engine.return_value = Engine()  # another program run: its engine has seen nothing
    log_in_program(["a"])
    assert [c.args[0] for c in warn.call_args_list] == ["a", "b", "c", "a"]
