"""The shared command-line checks: a subscription id, an output folder, Azure's credential and write errors, each
as one line naming what is wrong (a UserError: exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from azure.core.exceptions import ClientAuthenticationError
from azure.identity import CredentialUnavailableError

from pairedbus.commands.checks import check_output_dir, check_subscription_id, with_azure_errors
from pairedbus.errors import CredentialsError, OutputError, UserError


def test_a_subscription_id_is_a_guid_returned_in_lower_case() -> None:
    assert (
        check_subscription_id("--subscription", "6F1C2D3E-4A5B-4C6D-8E7F-9A0B1C2D3E4F")
        == "6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
    )


@pytest.mark.parametrize(
    "value",
    [
        "../../x y",
        "6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4",  # one digit short
        "6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f\n",  # fullmatch: no trailing newline
        "6f1c2d3e4a5b4c6d8e7f9a0b1c2d3e4f",  # no dashes
        "g f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f",
        "",
    ],
)
def test_anything_but_a_guid_is_refused_naming_the_flag(value: str) -> None:
    with pytest.raises(UserError) as raised:
        check_subscription_id("--subscription", value)
    message = str(raised.value)
    assert message.startswith("--subscription: expected a subscription id")
    assert message.endswith(repr(value)) and "\n" not in message  # the value shown with repr: one line


def test_a_long_refused_value_is_shortened_to_sixty_characters() -> None:
    with pytest.raises(UserError) as raised:
        check_subscription_id("--subscription", "x" * 500)
    assert "'" + "x" * 57 + "...'" in str(raised.value)
    assert "x" * 58 not in str(raised.value)


def test_an_output_dir_that_is_a_file_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "out"
    file.write_text("")
    with pytest.raises(OutputError, match=r"^--out .*out: exists and is not a directory$"):
        check_output_dir("--out", str(file))


def test_an_output_dir_that_can_be_created_passes_and_leaves_no_probe(tmp_path: Path) -> None:
    check_output_dir("--out", str(tmp_path / "new" / "dir"))
    assert not list(tmp_path.rglob(".pairedbus-probe"))


def test_with_azure_errors_returns_the_calls_result() -> None:
    assert with_azure_errors(lambda: 42) == 42


def _raise(exc: BaseException):
    def call():
        raise exc

    return call


def test_no_credential_is_one_line_with_the_first_line_of_azures_message() -> None:
    with pytest.raises(CredentialsError) as raised:
        with_azure_errors(_raise(CredentialUnavailableError("EnvironmentCredential: not configured\nmore detail")))
    assert str(raised.value) == (
        "no Azure credential found (az login, or AZURE_CLIENT_ID/AZURE_TENANT_ID/...): "
        "EnvironmentCredential: not configured"
    )
    assert raised.value.__suppress_context__  # `from None`: no traceback chain to print


def test_a_refused_credential_is_one_line() -> None:
    with pytest.raises(CredentialsError, match=r"^Azure refused the credential: AADSTS7000215 bad secret$"):
        with_azure_errors(_raise(ClientAuthenticationError("AADSTS7000215 bad secret\ntrace id")))


def test_a_write_that_fails_midway_is_an_output_error_naming_the_file() -> None:
    error = PermissionError(13, "Permission denied", "/out/metrics.json")
    with pytest.raises(OutputError, match=r"^--out: cannot write /out/metrics.json \(Permission denied\)$"):
        with_azure_errors(_raise(error))


def test_other_errors_pass_through() -> None:
    with pytest.raises(ValueError, match="a bug"):
        with_azure_errors(_raise(ValueError("a bug")))
