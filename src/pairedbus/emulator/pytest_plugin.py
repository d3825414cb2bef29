"""pytest plugin registered by the pairedbus package: the emulator as a fixture."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from pairedbus.emulator.emulator import Emulator


@pytest.fixture
async def servicebus_emulator() -> AsyncIterator[Emulator]:
    """Two namespaces, `primary` and `secondary`, served over AMQP on loopback ports for the
    unmodified SDK (`emulator.connection_string("primary")`); arrange them through
    `emulator.namespace(name)` and inject faults through `emulator.broker(name).faults`."""
    async with Emulator(["primary", "secondary"]) as emulator:
        yield emulator
