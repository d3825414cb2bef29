"""`pairedbus syphon`'s options (`pairedbus.commands.syphon_options`): flags, the environment, one-line errors."""

from __future__ import annotations

import pytest

from pairedbus.commands.syphon_options import options_from
from pairedbus.errors import UserError
from pairedbus.service.endpoints import ENV_LOG_LEVEL, ENV_PRIMARY, ENV_SECONDARY, ENV_SECONDARY_RESOURCE_ID
from pairedbus.service.syphon_process import ServiceOptions

PRIMARY = "contoso.servicebus.windows.net"
SECONDARY = "contoso-dr.servicebus.windows.net"


# --- Options and flags ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "names"),
    [
        ({"primary": "sb://contoso.servicebus.windows.net"}, "--primary"),
        ({"primary": "contoso"}, "--primary"),
        ({"primary": "contoso.servicebus.windows.net:5671"}, "--primary"),
        ({"primary": "contoso.servicebus.windows.net/queue"}, "--primary"),
        ({"primary": "1contoso.servicebus.windows.net"}, "--primary"),
        ({"secondary": "dr.servicebus.windows.net"}, "--secondary"),
        ({"secondary": PRIMARY.upper()}, "--secondary"),
        ({"port": "http"}, "--port"),
        ({"port": "70000"}, "--port"),
        ({"log_level": "verbose"}, "--log-level"),
    ],
)
def test_bad_flags_are_one_line_user_errors_naming_the_flag(flags: dict[str, str], names: str) -> None:
    args = {"primary": PRIMARY, "secondary": SECONDARY, "port": None, "log_level": None, "host": "0.0.0.0", **flags}
    with pytest.raises(UserError) as error:
        options_from(**args, env={})
    message = str(error.value)
    assert message.startswith(f"{names}: expected ")
    assert "\n" not in message


def test_missing_namespace_names_both_the_flag_and_its_environment_variable() -> None:
    with pytest.raises(UserError, match=rf"^--primary \(or {ENV_PRIMARY}\): expected .* got nothing$"):
        options_from(primary=None, secondary=SECONDARY, port=None, log_level=None, host="0.0.0.0", env={})


def test_environment_supplies_what_the_flags_do_not() -> None:
    env = {ENV_PRIMARY: PRIMARY, ENV_SECONDARY: SECONDARY, ENV_LOG_LEVEL: "debug"}
    options = options_from(primary=None, secondary=None, port=None, log_level=None, host="0.0.0.0", env=env)
    assert options == ServiceOptions(primary=PRIMARY, secondary=SECONDARY, port=8080, log_level="DEBUG")


def test_a_bad_environment_value_is_reported_under_the_variable_name() -> None:
    env = {ENV_PRIMARY: "https://contoso.servicebus.windows.net/", ENV_SECONDARY: SECONDARY}
    with pytest.raises(UserError, match=rf"^{ENV_PRIMARY}: expected "):
        options_from(primary=None, secondary=None, port=None, log_level=None, host="0.0.0.0", env=env)


def test_flags_win_over_the_environment() -> None:
    env = {ENV_PRIMARY: "other-primary.servicebus.windows.net", ENV_SECONDARY: SECONDARY}
    options = options_from(primary=PRIMARY, secondary=None, port="0", log_level=None, host="127.0.0.1", env=env)
    assert (options.primary, options.port) == (PRIMARY, 0)


def test_the_secondary_arm_id_comes_from_the_environment_the_host_sets() -> None:
    arm_id = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ServiceBus/namespaces/contoso-dr"
    env = {ENV_PRIMARY: PRIMARY, ENV_SECONDARY: SECONDARY, ENV_SECONDARY_RESOURCE_ID: arm_id}
    options = options_from(primary=None, secondary=None, port=None, log_level=None, host="0.0.0.0", env=env)
    assert options.secondary_resource_id == arm_id


def test_a_malformed_secondary_arm_id_is_a_one_line_error() -> None:
    with pytest.raises(UserError, match=r"^--secondary-resource-id: expected /subscriptions/"):
        options_from(
            primary=PRIMARY,
            secondary=SECONDARY,
            port=None,
            log_level=None,
            host="0.0.0.0",
            env={},
            secondary_resource_id="contoso-dr",
        )


# --- connection strings (SAS, or an emulator's), from the environment only ------------------------

KEY = "c2VjcmV0LWtleS12YWx1ZQ=="
SAS_PRIMARY = f"Endpoint=sb://contoso.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={KEY}"
SAS_SECONDARY = f"Endpoint=sb://contoso-dr.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={KEY}"
EMULATOR = (
    "Endpoint=sb://localhost:5672;SharedAccessKeyName=R;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true"
)


def _from_env(env: dict[str, str], **flags: str | None) -> object:
    args = {"primary": None, "secondary": None, "port": None, "log_level": None, "host": "0.0.0.0", **flags}
    return options_from(**args, env=env)


def test_connection_strings_in_the_environment_give_both_namespaces_and_keep_the_key_out_of_repr() -> None:
    options = _from_env(
        {"PAIREDBUS_PRIMARY_CONNECTION_STRING": SAS_PRIMARY, "PAIREDBUS_SECONDARY_CONNECTION_STRING": SAS_SECONDARY}
    )
    assert str(options.primary) == "contoso.servicebus.windows.net"
    assert options.primary.name == "contoso"
    assert KEY not in repr(options)


@pytest.mark.parametrize(
    ("env", "flags", "says"),
    [
        ({"PAIREDBUS_PRIMARY_CONNECTION_STRING": SAS_PRIMARY}, {}, "PAIREDBUS_SECONDARY_CONNECTION_STRING: set both"),
        (
            {
                "PAIREDBUS_PRIMARY_CONNECTION_STRING": SAS_PRIMARY,
                "PAIREDBUS_SECONDARY_CONNECTION_STRING": SAS_SECONDARY,
            },
            {"primary": PRIMARY},
            "--primary/--secondary",
        ),
        (
            {"PAIREDBUS_PRIMARY_CONNECTION_STRING": EMULATOR, "PAIREDBUS_SECONDARY_CONNECTION_STRING": EMULATOR},
            {},
            "PAIREDBUS_PRIMARY_CONNECTION_STRING: the host 'localhost' does not name the namespace",
        ),
        (
            {"PAIREDBUS_PRIMARY_CONNECTION_STRING": "nonsense", "PAIREDBUS_SECONDARY_CONNECTION_STRING": SAS_SECONDARY},
            {},
            "PAIREDBUS_PRIMARY_CONNECTION_STRING: not a Service Bus connection string",
        ),
    ],
)
def test_a_bad_connection_string_setting_is_one_line_naming_the_variable_without_the_key(
    env: dict[str, str], flags: dict[str, str], says: str
) -> None:
    with pytest.raises(UserError) as caught:
        _from_env(env, **flags)
    assert says in str(caught.value)
    assert KEY not in str(caught.value) and "SAS_KEY_VALUE" not in str(caught.value)


def test_an_emulators_connection_strings_take_the_primary_name_and_the_ca_from_the_environment() -> None:
    env = {
        "PAIREDBUS_PRIMARY_CONNECTION_STRING": EMULATOR,
        "PAIREDBUS_SECONDARY_CONNECTION_STRING": EMULATOR.replace("5672", "5673"),
        "PAIREDBUS_PRIMARY_NAME": "primary",
        "PAIREDBUS_CONNECTION_VERIFY": "/tmp/ca.pem",
    }
    options = _from_env(env)
    assert (options.primary.fqdn, options.primary.name) == ("localhost:5672", "primary")
    assert options.secondary.connection_verify == "/tmp/ca.pem"
