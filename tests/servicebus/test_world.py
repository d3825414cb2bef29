"""The world: namespaces by FQDN, fault injection forms, and strict name resolution."""

from __future__ import annotations

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient
from azure.servicebus.exceptions import ServiceBusCommunicationError, ServiceBusConnectionError

from pairedbus import contract
from pairedbus.servicebus import normalize_fqdn
from pairedbus.testing import ServiceBusWorld, mock_servicebus

from .conftest import FQDN, Credential


def test_fqdn_is_normalized_from_endpoints_and_bare_names() -> None:
    assert normalize_fqdn("sb://Contoso.servicebus.windows.net:443/") == "contoso.servicebus.windows.net"
    world = ServiceBusWorld()
    assert world.namespace("contoso") is world.namespace(contract.service_bus_fqdn("contoso"))
    assert world.namespace("contoso").name == "contoso"


async def test_strict_world_refuses_unknown_namespaces() -> None:
    with mock_servicebus(ServiceBusWorld(strict_namespaces=True)) as world:
        async with ServiceBusClient("nowhere.servicebus.windows.net", Credential()) as client:
            with pytest.raises(ServiceBusConnectionError):
                await client.get_queue_sender("q").send_messages(ServiceBusMessage(b"x"))
        world.namespace(FQDN).create_queue("q")
        async with ServiceBusClient(FQDN, Credential()) as client:
            await client.get_queue_sender("q").send_messages(ServiceBusMessage(b"x"))


@pytest.mark.parametrize(
    "error",
    [
        ServiceBusCommunicationError,
        ServiceBusCommunicationError(message="given instance"),
        lambda: ServiceBusCommunicationError(message="from a factory"),
    ],
)
async def test_fail_accepts_a_class_an_instance_or_a_factory(error: object, servicebus_world: ServiceBusWorld) -> None:
    servicebus_world.namespace(FQDN).create_queue("q")
    servicebus_world.fail(FQDN, error=error)  # type: ignore[arg-type]
    async with ServiceBusClient(FQDN, Credential()) as client:
        with pytest.raises(ServiceBusCommunicationError):
            await client.get_queue_sender("q").send_messages(ServiceBusMessage(b"x"))


def test_entity_fault_outlives_a_namespace_heal(servicebus_world: ServiceBusWorld) -> None:
    servicebus_world.fail(FQDN, "q")
    servicebus_world.fail(FQDN)
    servicebus_world.heal(FQDN)
    with pytest.raises(Exception, match="Injected fault"):
        servicebus_world.check(FQDN, "q", "send")
    servicebus_world.check(FQDN, "other", "send")
    servicebus_world.heal_all()
    servicebus_world.check(FQDN, "q", "send")
