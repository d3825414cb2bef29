"""Fixtures for the syphon tests: a Service Bus fake world per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pairedbus.testing.patching import mock_servicebus
from pairedbus.testing.world import ServiceBusWorld


@pytest.fixture
def world() -> Iterator[ServiceBusWorld]:
    with mock_servicebus() as world:
        yield world
