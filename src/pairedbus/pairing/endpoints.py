"""How to reach one namespace: its fully qualified name and a credential (Entra ID, the default and
what deployed namespaces take: local auth is off), or a connection string (SAS, or an emulator's).

The sender and the syphon hold a `NamespaceEndpoint` per side and ask it for their clients, so
neither cares which. A connection string carries a key: it is never part of `repr`, `str` or a
log line; only the host is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from azure.servicebus import aio as servicebus_aio  # looked up at call time: the fake patches it
from azure.servicebus.aio import management as servicebus_management

from pairedbus import contract
from pairedbus.sdk import parse_connection_string

__all__ = ["NamespaceEndpoint", "endpoint_of"]


@dataclass(frozen=True)
class NamespaceEndpoint:
    """`fqdn` as the SDK names the host (`contoso.servicebus.windows.net`, or `localhost:5672` for
    an emulator); `name` the namespace name backlog queues are prefixed with."""

    fqdn: str
    name: str
    connection_string: str | None = field(default=None, repr=False, compare=False)
    #: The CA bundle the administration client verifies the namespace's certificate with (an
    #: emulator's generated CA); None: the system's.
    connection_verify: str | None = None

    @classmethod
    def from_fqdn(cls, fqdn: str) -> NamespaceEndpoint:
        return cls(fqdn, contract.namespace_from_fqdn(fqdn))

    @classmethod
    def from_connection_string(
        cls,
        value: str,
        *,
        name: str | None = None,
        source: str = "connection string",
        connection_verify: str | None = None,
    ) -> NamespaceEndpoint:
        """`name` is needed when the host does not name the namespace (an emulator's `localhost`);
        `connection_verify` when its administration endpoint's certificate is not signed by a CA
        the system trusts (an emulator's)."""
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{source}: expected a Service Bus connection string, got nothing")
        try:
            parsed = parse_connection_string(value.strip())
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{source}: not a Service Bus connection string ({_redacted(str(exc))})") from None
        fqdn = parsed.fully_qualified_namespace
        if name is None:
            host = fqdn.split(":", 1)[0]
            name = contract.namespace_from_fqdn(host)
            if "." not in host or not contract.is_namespace_name(name):
                raise ValueError(
                    f"{source}: the host {host!r} does not name the namespace; give its name "
                    "(the primary's name prefixes the backlog queues)"
                )
        if not contract.is_namespace_name(name):
            raise ValueError(f"{source}: namespace name {name!r} is not one ({contract.NAMESPACE_NAME_RULE})")
        return cls(fqdn, name, value.strip(), connection_verify)

    def client(self, credential: Any, **kwargs: Any) -> Any:
        """A new aio `ServiceBusClient` for this namespace."""
        if self.connection_string is not None:
            return servicebus_aio.ServiceBusClient.from_connection_string(self.connection_string, **kwargs)
        return servicebus_aio.ServiceBusClient(self.fqdn, credential, **kwargs)

    def admin_client(self, credential: Any) -> Any:
        """A new aio `ServiceBusAdministrationClient` for this namespace."""
        kwargs = {} if self.connection_verify is None else {"connection_verify": self.connection_verify}
        if self.connection_string is not None:
            return servicebus_management.ServiceBusAdministrationClient.from_connection_string(
                self.connection_string, **kwargs
            )
        return servicebus_management.ServiceBusAdministrationClient(self.fqdn, credential, **kwargs)

    def __str__(self) -> str:
        return self.fqdn


def endpoint_of(value: str | NamespaceEndpoint) -> NamespaceEndpoint:
    return value if isinstance(value, NamespaceEndpoint) else NamespaceEndpoint.from_fqdn(value)


def _redacted(text: str) -> str:
    """An error of the SDK's parser, with anything after `SharedAccessKey=` cut off."""
    head, _, _ = text.partition("SharedAccessKey=")
    return head.strip() or "unreadable"
