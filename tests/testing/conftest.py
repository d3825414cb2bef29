from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from azure.servicebus import ServiceBusReceivedMessage
from azure.servicebus.aio import ServiceBusClient

from pairedbus.testing import Namespace, ServiceBusWorld

FQDN = "primary-ns.servicebus.windows.net"


def body(message: ServiceBusReceivedMessage) -> bytes:
    return b"".join(message.body)


class Credential:
    """Any TokenCredential-shaped object will do for the fake."""

    async def get_token(self, *scopes: str, **kwargs: object) -> None:  # pragma: no cover - never called
        raise AssertionError("the fake does not authenticate")


@pytest.fixture
def world(servicebus_world: ServiceBusWorld) -> ServiceBusWorld:
    servicebus_world.clock.freeze()
    return servicebus_world


@pytest.fixture
def ns(world: ServiceBusWorld) -> Namespace:
    return world.namespace(FQDN)


@pytest.fixture
async def client(world: ServiceBusWorld) -> AsyncIterator[ServiceBusClient]:
    async with ServiceBusClient(FQDN, Credential()) as sb:
        yield sb
