"""Run one azure-servicebus sample, unchanged, inside `mock_servicebus()` or over the wire.

Usage: python run_sample.py SAMPLE.py. The world holds the entities the samples expect (named by
the environment variables in `SAMPLE_ENV`); `DefaultAzureCredential` is replaced by a credential
that refuses to authenticate (the fake never asks for a token, and nothing may probe the network).

Over the wire (`PAIREDBUS_SAMPLE_WIRE_CONN`, `PAIREDBUS_SAMPLE_WIRE_CA`: an emulator the caller runs
in another process) the SDK is the real one and only the environment differs: the emulator's
connection string, `SERVICEBUS_FULLY_QUALIFIED_NAMESPACE=localhost:PORT`, its key as the SAS
policy; `DefaultAzureCredential` (and `EnvironmentCredential`) returns a bearer token the emulator's `$cbs` accepts (as
Microsoft's emulator accepts one; never the default chain); `certifi.where()` names the
emulator's CA (the samples pass no `connection_verify`, and the SDK then trusts certifi's
bundle); `localhost:5671` resolves to the emulator's port (the SDK drops a fully qualified
namespace's port under TLS: `pairedbus.emulator.redirect`). The entities are created through
the unmodified administration client, over the same port.
"""

from __future__ import annotations

import faulthandler
import os
import runpy
import sys
import time
from datetime import timedelta
from typing import Any

FQDN = "samples.servicebus.windows.net"
SAMPLE_ENV = {
    "SERVICEBUS_FULLY_QUALIFIED_NAMESPACE": FQDN,
    "SERVICEBUS_CONNECTION_STR": (
        f"Endpoint=sb://{FQDN}/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=c2FtcGxlLWtleQ=="
    ),
    "SERVICEBUS_SAS_POLICY": "RootManageSharedAccessKey",
    "SERVICEBUS_SAS_KEY": "c2FtcGxlLWtleQ==",
    "SERVICEBUS_QUEUE_NAME": "samples-queue",
    "SERVICEBUS_SESSION_QUEUE_NAME": "samples-session-queue",
    "SERVICEBUS_SESSION_ID": "session-1",
    "SERVICEBUS_TOPIC_NAME": "samples-topic",
    "SERVICEBUS_SUBSCRIPTION_NAME": "samples-subscription",
}


class _NoNetworkCredential:
    """Stands in for DefaultAzureCredential (sync and aio): constructing it is free, using it fails."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def get_token(self, *scopes: str, **kwargs: object) -> None:
        raise AssertionError("the fake does not authenticate")

    def close(self) -> None:
        pass

    def __enter__(self) -> _NoNetworkCredential:
        return self

    def __exit__(self, *args: object) -> None:
        pass

    async def __aenter__(self) -> _NoNetworkCredential:
        return self

    async def __aexit__(self, *args: object) -> None:
        pass


#: The bearer token the wire run's credentials hand the SDK (an Entra ID token the emulator cannot
#: verify offline, and accepts).
WIRE_TOKEN = "pairedbus-samples-bearer-token"


class _BearerCredential:
    """Stands in for DefaultAzureCredential over the wire (sync): a token, never the default chain."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def get_token(self, *scopes: str, **kwargs: object) -> Any:
        from azure.core.credentials import AccessToken

        return AccessToken(WIRE_TOKEN, int(time.time()) + 3600)

    def close(self) -> None:
        pass

    def __enter__(self) -> _BearerCredential:
        return self

    def __exit__(self, *args: object) -> None:
        pass


class _AsyncBearerCredential(_BearerCredential):
    """The aio stand-in: the same token, awaited."""

    async def get_token(self, *scopes: str, **kwargs: object) -> Any:  # type: ignore[override]
        return _BearerCredential.get_token(self, *scopes)

    async def close(self) -> None:  # type: ignore[override]
        pass

    async def __aenter__(self) -> _AsyncBearerCredential:
        return self

    async def __aexit__(self, *args: object) -> None:
        pass


def main(path: str) -> None:
    # A sample that hangs shows where: the test's wall-clock limit minus a margin.
    hang_after = float(os.environ.get("PAIREDBUS_SAMPLE_DUMP_AFTER", "0"))
    if hang_after > 0:
        faulthandler.dump_traceback_later(hang_after, exit=True)
    conn_str = os.environ.get("PAIREDBUS_SAMPLE_WIRE_CONN")
    if conn_str:
        main_over_the_wire(path, conn_str, os.environ["PAIREDBUS_SAMPLE_WIRE_CA"])
        return
    import azure.identity
    import azure.identity.aio

    from pairedbus.testing import mock_servicebus

    os.environ.update(SAMPLE_ENV)
    azure.identity.DefaultAzureCredential = _NoNetworkCredential  # type: ignore[misc,assignment]
    azure.identity.aio.DefaultAzureCredential = _NoNetworkCredential  # type: ignore[misc,assignment]
    with mock_servicebus() as world:
        ns = world.namespace(FQDN)
        # Entities as a sample's README asks for them; a few samples need a variation (see
        # test_samples.py): a session-enabled subscription, a shorter lock than the default minute.
        lock = os.environ.get("PAIREDBUS_SAMPLE_LOCK_DURATION")
        queue_settings = {"lock_duration": timedelta(seconds=float(lock))} if lock else {}
        ns.create_queue(SAMPLE_ENV["SERVICEBUS_QUEUE_NAME"], **queue_settings)
        ns.create_queue(SAMPLE_ENV["SERVICEBUS_SESSION_QUEUE_NAME"], requires_session=True, **queue_settings)
        ns.create_topic(SAMPLE_ENV["SERVICEBUS_TOPIC_NAME"])
        ns.create_subscription(
            SAMPLE_ENV["SERVICEBUS_TOPIC_NAME"],
            SAMPLE_ENV["SERVICEBUS_SUBSCRIPTION_NAME"],
            requires_session=os.environ.get("PAIREDBUS_SAMPLE_SESSION_SUBSCRIPTION") == "1",
        )
        # Messages waiting for a sample that only receives, so that its output shows it got going.
        for i in range(int(os.environ.get("PAIREDBUS_SAMPLE_PRESEND", "0"))):
            ns.queue(SAMPLE_ENV["SERVICEBUS_QUEUE_NAME"]).accept([_content(f"waiting-{i}")], world.clock.time())
        sys.argv = [path]
        runpy.run_path(path, run_name="__main__")


def main_over_the_wire(path: str, conn_str: str, ca_file: str) -> None:
    # The emulator's CA is trusted where each client looks: pyamqp asks certifi.where() at connect
    # time; requests (the sync admin client) reads REQUESTS_CA_BUNDLE and aiohttp (the aio one)
    # OpenSSL's SSL_CERT_FILE. Set before anything imports the SDK.
    import certifi

    certifi.where = lambda: ca_file
    os.environ["REQUESTS_CA_BUNDLE"] = os.environ["SSL_CERT_FILE"] = ca_file
    import azure.identity
    import azure.identity.aio

    from pairedbus.emulator.redirect import amqps_to

    _log_the_sdk(os.environ.get("PAIREDBUS_SAMPLE_SDK_LOG"))
    fields = dict(part.partition("=")[::2] for part in conn_str.split(";") if part)
    port = int(fields["Endpoint"].rsplit(":", 1)[1].strip("/"))
    os.environ.update(SAMPLE_ENV)
    os.environ.update(
        {
            "SERVICEBUS_FULLY_QUALIFIED_NAMESPACE": f"localhost:{port}",
            "SERVICEBUS_CONNECTION_STR": conn_str,
            "SERVICEBUS_SAS_POLICY": fields["SharedAccessKeyName"],
            "SERVICEBUS_SAS_KEY": fields["SharedAccessKey"],
        }
    )
    _create_entities(conn_str, ca_file)
    # client_identity_authentication uses EnvironmentCredential (a service principal from the
    # environment): the same stand-in, as no Entra ID is reachable offline.
    for name in ("DefaultAzureCredential", "EnvironmentCredential"):
        setattr(azure.identity, name, _BearerCredential)
        setattr(azure.identity.aio, name, _AsyncBearerCredential)
    with amqps_to(port):
        sys.argv = [path]
        runpy.run_path(path, run_name="__main__")


def _log_the_sdk(path: str | None) -> None:
    """The SDK's own log at INFO into `path` (the caller shows it when the sample fails): it logs an AMQP
    error, a connection's close and a handler's shutdown there, below what reaches the sample's output, so a
    failure that shows only its consequences (a closed socket under another thread) names its first cause."""
    if not path:
        return
    import logging

    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(threadName)s %(name)s %(levelname)s %(message)s"))
    sdk = logging.getLogger("azure.servicebus")
    sdk.setLevel(logging.INFO)
    sdk.addHandler(handler)


def _create_entities(conn_str: str, ca_file: str) -> None:
    """The fake run's entities, made by the unmodified administration client over HTTPS (and the
    waiting messages sent by the unmodified client over AMQP)."""
    from azure.servicebus import ServiceBusClient, ServiceBusMessage
    from azure.servicebus.management import ServiceBusAdministrationClient

    lock = os.environ.get("PAIREDBUS_SAMPLE_LOCK_DURATION")
    queue_settings: dict[str, Any] = {"lock_duration": timedelta(seconds=float(lock))} if lock else {}
    topic = SAMPLE_ENV["SERVICEBUS_TOPIC_NAME"]
    with ServiceBusAdministrationClient.from_connection_string(conn_str, connection_verify=ca_file) as admin:
        admin.create_queue(SAMPLE_ENV["SERVICEBUS_QUEUE_NAME"], **queue_settings)
        admin.create_queue(SAMPLE_ENV["SERVICEBUS_SESSION_QUEUE_NAME"], requires_session=True, **queue_settings)
        admin.create_topic(topic)
        admin.create_subscription(
            topic,
            SAMPLE_ENV["SERVICEBUS_SUBSCRIPTION_NAME"],
            requires_session=os.environ.get("PAIREDBUS_SAMPLE_SESSION_SUBSCRIPTION") == "1",
        )
    waiting = int(os.environ.get("PAIREDBUS_SAMPLE_PRESEND", "0"))
    if waiting:
        with ServiceBusClient.from_connection_string(conn_str) as client:
            with client.get_queue_sender(SAMPLE_ENV["SERVICEBUS_QUEUE_NAME"]) as sender:
                sender.send_messages([ServiceBusMessage(f"waiting-{i}") for i in range(waiting)])


def _content(body: str) -> object:
    from azure.servicebus import ServiceBusMessage

    from pairedbus.testing.content import content_from_message

    return content_from_message(ServiceBusMessage(body))


if __name__ == "__main__":
    main(sys.argv[1])
