"""Fixtures for the syphon tests: the package's Service Bus fake world per test."""

from __future__ import annotations

import pytest

from pairedbus.testing import ServiceBusWorld


@pytest.fixture
def world(servicebus_world: ServiceBusWorld) -> ServiceBusWorld:
    """The package's `servicebus_world` (pytest plugin `pairedbus.testing.pytest_plugin`), under the
    name the syphon's tests use."""
    return servicebus_world
