"""Which world the fake's clients talk to: the innermost active `mock_servicebus()`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pairedbus.servicebus.world import ServiceBusWorld

_worlds: list[ServiceBusWorld] = []


def active_world() -> ServiceBusWorld:
    if not _worlds:
        raise RuntimeError(
            "no Service Bus fake is active: use `with mock_servicebus():` or the servicebus_world fixture"
        )
    return _worlds[-1]


def push(world: ServiceBusWorld) -> None:
    _worlds.append(world)


def pop(world: ServiceBusWorld) -> None:
    if world in _worlds:
        _worlds.remove(world)
