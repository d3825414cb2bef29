"""`mock_servicebus()`: swap the SDK's clients for the fake, everywhere they are bound.

Code under test often ran `from azure.servicebus.aio import ServiceBusClient` before the patch
started, so patching the SDK modules is not enough: like freezegun, every loaded module attribute
that *is* a real client class is rebound to its fake, and restored on exit.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from pairedbus.servicebus.world import ServiceBusWorld
from pairedbus.testing import active
from pairedbus.testing.active import active_world
from pairedbus.testing.messages import peeked

__all__ = ["ServiceBusPatch", "active_world", "bindings", "mock_servicebus", "replacements"]

#: Modules whose names start with these are never rebound (the fake itself keeps real classes).
_SKIP_PREFIXES = ("pairedbus.testing",)


def replacements() -> dict[int, tuple[Any, Any]]:
    """id(real class) -> (real class, fake class)."""
    import azure.servicebus
    import azure.servicebus.aio
    import azure.servicebus.aio.management
    import azure.servicebus.management

    from pairedbus.testing import admin, arm, client

    pairs = [
        *arm.replacements(),
        (azure.servicebus.aio.ServiceBusClient, client.ServiceBusClient),
        (azure.servicebus.ServiceBusClient, client.SyncServiceBusClient),
        (azure.servicebus.management.ServiceBusAdministrationClient, admin.ServiceBusAdministrationClient),
        (azure.servicebus.aio.management.ServiceBusAdministrationClient, admin.AsyncServiceBusAdministrationClient),
    ]
    return {id(real): (real, fake) for real, fake in pairs}


def bindings() -> list[tuple[ModuleType, str, Any]]:
    """Every (module, attribute, fake) where a loaded module holds a real client class."""
    table = replacements()
    real_ids = set(table)
    found = []
    for module_name, module in list(sys.modules.items()):
        if module is None or module_name.startswith(_SKIP_PREFIXES):
            continue
        try:
            namespace = vars(module)
        except TypeError:
            continue
        # A C-level set intersection first: almost no module holds a client class.
        if real_ids.isdisjoint(map(id, namespace.values())):
            continue
        for attr, value in list(namespace.items()):
            entry = table.get(id(value))
            if entry is not None and entry[0] is value:
                found.append((module, attr, entry[1]))
    return found


class ServiceBusPatch:
    """Starts and stops the fake; `setter(module, attr, fake)` may be pytest-mock's."""

    def __init__(self, world: ServiceBusWorld | None = None) -> None:
        self.world = world or ServiceBusWorld()
        self._saved: list[tuple[ModuleType, str, Any]] = []
        self._started = False

    def start(self, setter: Callable[[ModuleType, str, Any], object] | None = None) -> ServiceBusWorld:
        if self._started:
            raise RuntimeError("already started")
        for module, attr, fake in bindings():
            if setter is None:
                self._saved.append((module, attr, getattr(module, attr)))
                setattr(module, attr, fake)
            else:
                setter(module, attr, fake)
        active.push(self.world)
        self.world.present = peeked  # the inspection helpers show messages as the SDK's (kept after stop)
        self._started = True
        return self.world

    def stop(self) -> None:
        if not self._started:
            return
        for module, attr, real in reversed(self._saved):
            setattr(module, attr, real)
        self._saved.clear()
        active.pop(self.world)
        self._started = False


@contextmanager
def mock_servicebus(world: ServiceBusWorld | None = None) -> Iterator[ServiceBusWorld]:
    """`with mock_servicebus() as world:` — the real SDK clients become the fake until exit."""
    patch = ServiceBusPatch(world)
    patch.start()
    try:
        yield patch.world
    finally:
        patch.stop()
