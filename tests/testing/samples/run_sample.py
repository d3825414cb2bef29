"""Run one azure-servicebus sample, unchanged, inside `mock_servicebus()`.

Usage: python run_sample.py SAMPLE.py. The world holds the entities the samples expect (named by
the environment variables in `SAMPLE_ENV`); `DefaultAzureCredential` is replaced by a credential
that refuses to authenticate (the fake never asks for a token, and nothing may probe the network).
"""

from __future__ import annotations

import faulthandler
import os
import runpy
import sys
from datetime import timedelta

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


def main(path: str) -> None:
    # A sample that hangs shows where: the test's wall-clock limit minus a margin.
    hang_after = float(os.environ.get("PAIREDBUS_SAMPLE_DUMP_AFTER", "0"))
    if hang_after > 0:
        faulthandler.dump_traceback_later(hang_after, exit=True)
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


def _content(body: str) -> object:
    from azure.servicebus import ServiceBusMessage

    from pairedbus.testing.content import content_from_message

    return content_from_message(ServiceBusMessage(body))


if __name__ == "__main__":
    main(sys.argv[1])
