"""pytest plugin registered by the pairedbus package (fixtures for the Service Bus fake).

`servicebus_world` patches the SDK's clients through pytest-mock's `mocker` (undone at teardown)
and yields the `ServiceBusWorld` to arrange and inspect.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_mock import MockerFixture

    from pairedbus.emulator import Emulator
    from pairedbus.testing.world import ServiceBusWorld


@pytest.fixture
def servicebus_world(mocker: MockerFixture) -> Iterator[ServiceBusWorld]:
    from pairedbus.testing.patching import ServiceBusPatch

    patch = ServiceBusPatch()
    world = patch.start(setter=lambda module, attr, fake: mocker.patch.object(module, attr, fake))
    try:
        yield world
    finally:
        patch.stop()


@pytest.fixture
async def servicebus_emulator() -> AsyncIterator[Emulator]:
    """Two namespaces, `primary` and `secondary`, served over AMQP on loopback ports for the
    unmodified SDK (`emulator.connection_string("primary")`); arrange them through
    `emulator.namespace(name)` and inject faults through `emulator.broker(name).faults`."""
    from pairedbus.emulator import Emulator

    async with Emulator(["primary", "secondary"]) as emulator:
        yield emulator
