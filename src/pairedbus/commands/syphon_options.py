"""`pairedbus syphon`'s options: flags, falling back to the environment the container app sets.

Each bad value is one `UserError` naming the flag or environment variable it came from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pairedbus import contract
from pairedbus.errors import UserError
from pairedbus.pairing.endpoints import NamespaceEndpoint
from pairedbus.service.endpoints import (
    DEFAULT_PORT,
    ENV_CONNECTION_VERIFY,
    ENV_LOG_LEVEL,
    ENV_PRIMARY,
    ENV_PRIMARY_CONNECTION_STRING,
    ENV_PRIMARY_NAME,
    ENV_SECONDARY,
    ENV_SECONDARY_CONNECTION_STRING,
    ENV_SECONDARY_RESOURCE_ID,
)
from pairedbus.service.logs import LOG_LEVELS
from pairedbus.service.syphon_process import ServiceOptions
from pairedbus.syphon.backlog_directory import validate_namespace_resource_id

_DNS_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_FQDN_MAX = 253


def namespace_fqdn(source: str, value: str | None) -> str:
    """A fully qualified Service Bus namespace host, lower-cased; `source` names the flag or env var."""
    example = contract.service_bus_fqdn("contoso")
    if not value or not value.strip():
        raise UserError(f"{source}: expected a fully qualified namespace such as {example}, got nothing")
    fqdn = value.strip().lower()
    labels = fqdn.split(".")
    if len(fqdn) > _FQDN_MAX or len(labels) < 2 or not all(_DNS_LABEL.match(label) for label in labels):
        raise UserError(
            f"{source}: expected a fully qualified namespace host such as {example} (no scheme, port or path), got {value!r}"
        )
    namespace = contract.namespace_from_fqdn(fqdn)
    if not contract.is_namespace_name(namespace):
        raise UserError(
            f"{source}: expected its first label to be a namespace name ({contract.NAMESPACE_NAME_RULE}), "
            f"got {namespace!r}"
        )
    return fqdn


def _port(source: str, value: str | int) -> int:
    try:
        port = int(value)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise UserError(f"{source}: expected a TCP port 0-65535 (0 picks a free one), got {value!r}")
    return port


def _log_level(source: str, value: str) -> str:
    level = value.strip().upper()
    if level not in LOG_LEVELS:
        raise UserError(f"{source}: expected one of {', '.join(LOG_LEVELS)}, got {value!r}")
    return level


def _given(flag: str, flag_value: str | None, env_name: str, env: Mapping[str, str]) -> tuple[str, str | None]:
    """(where the value came from, the value): the flag wins over the environment variable."""
    if flag_value:
        return flag, flag_value
    if env.get(env_name):
        return env_name, env[env_name]
    return f"{flag} (or {env_name})", None


def options_from(
    *,
    primary: str | None,
    secondary: str | None,
    port: str | int | None,
    log_level: str | None,
    host: str,
    env: Mapping[str, str],
    secondary_resource_id: str | None = None,
) -> ServiceOptions:
    """Validated options from flags, falling back to the environment the container app sets."""
    primary_source, primary_value = _given("--primary", primary, ENV_PRIMARY, env)
    secondary_source, secondary_value = _given("--secondary", secondary, ENV_SECONDARY, env)
    level_source, level_value = _given("--log-level", log_level, ENV_LOG_LEVEL, env)
    arm_source, arm_value = _given("--secondary-resource-id", secondary_resource_id, ENV_SECONDARY_RESOURCE_ID, env)
    if arm_value is not None:
        try:
            validate_namespace_resource_id(arm_value)
        except ValueError as exc:
            raise UserError(f"{arm_source}: {exc}, got {arm_value!r}") from None
    endpoints = _connection_strings(env, flags_given=bool(primary or secondary), arm_given=arm_value is not None)
    options = ServiceOptions(
        secondary_resource_id=arm_value,
        primary=endpoints[0] if endpoints else namespace_fqdn(primary_source, primary_value),
        secondary=endpoints[1] if endpoints else namespace_fqdn(secondary_source, secondary_value),
        host=host,
        port=_port("--port", DEFAULT_PORT if port is None else port),
        log_level=_log_level(level_source, level_value or "INFO"),
    )
    if str(options.primary) == str(options.secondary):
        raise UserError(f"{secondary_source}: expected a namespace other than the primary ({options.primary})")
    return options


def _connection_strings(
    env: Mapping[str, str], *, flags_given: bool, arm_given: bool
) -> tuple[NamespaceEndpoint, NamespaceEndpoint] | None:
    """The two namespaces from connection strings in the environment (never flags: a key would
    sit in the process listing), or None when neither is set."""
    primary, secondary = env.get(ENV_PRIMARY_CONNECTION_STRING), env.get(ENV_SECONDARY_CONNECTION_STRING)
    if not primary and not secondary:
        return None
    if not primary or not secondary:
        missing = ENV_SECONDARY_CONNECTION_STRING if primary else ENV_PRIMARY_CONNECTION_STRING
        raise UserError(f"{missing}: set both connection strings or neither")
    if flags_given:
        raise UserError(
            f"--primary/--secondary: the namespaces come from {ENV_PRIMARY_CONNECTION_STRING}; give one or the other"
        )
    if arm_given:
        raise UserError(
            f"{ENV_SECONDARY_RESOURCE_ID}: listing through ARM needs Entra ID; connection strings list through the data plane"
        )
    verify = env.get(ENV_CONNECTION_VERIFY) or None
    try:
        return (
            NamespaceEndpoint.from_connection_string(
                primary,
                name=env.get(ENV_PRIMARY_NAME) or None,
                source=ENV_PRIMARY_CONNECTION_STRING,
                connection_verify=verify,
            ),
            NamespaceEndpoint.from_connection_string(
                secondary, name="secondary", source=ENV_SECONDARY_CONNECTION_STRING, connection_verify=verify
            ),
        )
    except ValueError as exc:
        raise UserError(str(exc)) from None
