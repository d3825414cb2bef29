"""pytest plugin registered by the pairedbus package (fixtures for the Service Bus fake).

`servicebus_world` patches the SDK's clients through pytest-mock's `mocker` (undone at teardown)
and yields the `ServiceBusWorld` to arrange and inspect.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_mock import MockerFixture

    from pairedbus.servicebus.world import ServiceBusWorld


@pytest.fixture
def servicebus_world(mocker: MockerFixture) -> Iterator[ServiceBusWorld]:
    from pairedbus.testing.patching import ServiceBusPatch

    patch = ServiceBusPatch()
    world = patch.start(setter=lambda module, attr, fake: mocker.patch.object(module, attr, fake))
    try:
        yield world
    finally:
        patch.stop()
