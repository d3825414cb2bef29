"""The pytest plugin the package registers (`testing/pytest_plugin.py`): `servicebus_world` patches the SDK's
clients through pytest-mock's `mocker` and yields the active world."""

from __future__ import annotations

from pairedbus.testing import ServiceBusWorld, active_world, aio_client

from . import early_import


def test_fixture_patches_through_mocker_and_yields_the_active_world(servicebus_world: ServiceBusWorld) -> None:
    assert active_world() is servicebus_world
    assert early_import.ServiceBusClient is aio_client.ServiceBusClient
