"""Backlog-queue discovery through ARM: Reader on the namespace is enough, names come with '~'."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from azure.servicebus import ServiceBusMessage

from pairedbus import contract
from pairedbus.syphon import Syphon, backlog_directory
from pairedbus.syphon.backlog_directory import ArmDirectory
from pairedbus.testing.world import ServiceBusWorld

from .helpers import PRIMARY, SECONDARY, bodies, create_backlog_queues, make_syphon, park

SECONDARY_ID = "/subscriptions/sub-1/resourceGroups/rg-dr/providers/Microsoft.ServiceBus/namespaces/contoso-secondary"


class _Pages:
    def __init__(self, items: list[object]) -> None:
        self._items = iter(items)

    def __aiter__(self) -> _Pages:
        return self

    async def __anext__(self) -> object:
        try:
            return next(self._items)
        except StopIteration:
            raise StopAsyncIteration from None


def _arm_queue(name: str, active: int) -> SimpleNamespace:
    return SimpleNamespace(
        name=contract.arm_entity_name(name), count_details=SimpleNamespace(active_message_count=active)
    )


@pytest.fixture
def arm(mocker):
    client = mocker.MagicMock(name="ServiceBusManagementClient()")
    client.close = mocker.AsyncMock()
    factory = mocker.patch("azure.mgmt.servicebus.aio.ServiceBusManagementClient", return_value=client)
    return SimpleNamespace(client=client, factory=factory)


async def test_arm_listing_maps_tildes_back_to_slashes(arm) -> None:
    arm.client.queues.list_by_namespace.return_value = _Pages([_arm_queue("contoso/x-servicebus-transfer/0", 3)])
    directory = ArmDirectory(object(), SECONDARY_ID)
    listed = await directory.list_queues()
    assert [(q.name, q.active_messages) for q in listed] == [("contoso/x-servicebus-transfer/0", 3)]
    assert arm.factory.call_args.args[1] == "sub-1"
    arm.client.queues.list_by_namespace.assert_called_once_with("rg-dr", "contoso-secondary")


def test_a_malformed_namespace_id_is_rejected_with_the_expected_shape() -> None:
    with pytest.raises(ValueError, match="expected /subscriptions/"):
        Syphon(
            primary=PRIMARY, secondary=SECONDARY, credential=None, secondary_resource_id="/subscriptions/x/namespaces/y"
        )


async def test_syphon_discovers_through_arm_and_moves_on_the_data_plane(world: ServiceBusWorld, arm, mocker) -> None:
    names = create_backlog_queues(world, 2)
    orders = world.namespace(PRIMARY).create_queue("orders")
    await park("orders", ServiceBusMessage(b"parked"), backlog=1)
    arm.client.queues.list_by_namespace.side_effect = lambda *_: _Pages(
        [_arm_queue(n, 0) for n in names] + [_arm_queue("orders", 0)]
    )
    data_plane_listing = mocker.spy(backlog_directory.DataPlaneDirectory, "list_queues")

    async with make_syphon(world, secondary_resource_id=SECONDARY_ID) as syphon:
        assert await syphon.list_backlog_queues() == names
        stats = await syphon.drain()

    assert bodies(orders) == [b"parked"] and stats.moved == 1
    data_plane_listing.assert_not_called()
    arm.client.close.assert_awaited()
