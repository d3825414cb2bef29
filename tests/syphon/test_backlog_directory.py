"""Backlog-queue discovery through ARM: Reader on the namespace is enough, names come with '~'."""

from __future__ import annotations

import pytest
from azure.servicebus import ServiceBusMessage

from pairedbus import contract
from pairedbus.servicebus.world import ServiceBusWorld
from pairedbus.syphon import Syphon, backlog_directory
from pairedbus.syphon.backlog_directory import ArmDirectory

from .helpers import PRIMARY, SECONDARY, bodies, create_backlog_queues, make_syphon, park

SECONDARY_ID = "/subscriptions/sub-1/resourceGroups/rg-dr/providers/Microsoft.ServiceBus/namespaces/contoso-secondary"


def _in_resource_group(world: ServiceBusWorld, fqdn: str) -> None:
    """Where ARM finds the namespace: the subscription and group SECONDARY_ID names."""
    namespace = world.namespace(fqdn)
    namespace.subscription_id, namespace.resource_group, namespace.location = "sub-1", "rg-dr", "northeurope"


class _NoToken:
    """The world's ARM plane does not authenticate; nothing here may ask for a token."""

    async def get_token(self, *scopes: str, **kwargs: object) -> None:  # pragma: no cover - never called
        raise AssertionError("asked for a token")


async def test_arm_listing_maps_tildes_back_to_slashes_and_reads_depths(world: ServiceBusWorld) -> None:
    """The real azure-mgmt-servicebus aio client, answered by the world's ARM plane: names come back
    with ARM's `~` for `/`, depths from countDetails."""
    _in_resource_group(world, SECONDARY)
    names = create_backlog_queues(world, 2)
    await park("orders", ServiceBusMessage(b"a"), backlog=1)
    await park("orders", ServiceBusMessage(b"b"), backlog=1)
    directory = ArmDirectory(_NoToken(), SECONDARY_ID)
    try:
        listed = await directory.list_queues()
    finally:
        await directory.close()
    assert sorted((q.name, q.active_messages) for q in listed) == [(names[0], 0), (names[1], 2)]
    assert names[1] == contract.backlog_queue_name("contoso-primary", 1)  # '/' restored


def test_a_malformed_namespace_id_is_rejected_with_the_expected_shape() -> None:
    with pytest.raises(ValueError, match="expected /subscriptions/"):
        Syphon(
            primary=PRIMARY, secondary=SECONDARY, credential=None, secondary_resource_id="/subscriptions/x/namespaces/y"
        )


async def test_syphon_discovers_through_arm_and_moves_on_the_data_plane(world: ServiceBusWorld, mocker) -> None:
    _in_resource_group(world, SECONDARY)
    names = create_backlog_queues(world, 2)
    orders = world.namespace(PRIMARY).create_queue("orders")
    world.namespace(SECONDARY).create_queue("orders")  # not a backlog queue: never listed as one
    await park("orders", ServiceBusMessage(b"parked"), backlog=1)
    data_plane_listing = mocker.spy(backlog_directory.DataPlaneDirectory, "list_queues")

    async with make_syphon(world, secondary_resource_id=SECONDARY_ID) as syphon:
        assert await syphon.list_backlog_queues() == names
        stats = await syphon.drain()

    assert bodies(orders) == [b"parked"] and stats.moved == 1
    data_plane_listing.assert_not_called()


async def test_both_listings_report_each_queues_bytes_beside_its_depth(world: ServiceBusWorld) -> None:
    """What a pump sizes its first receives by: the data-plane client's `size_in_bytes` and ARM's
    `sizeInBytes`, the same figure."""
    from azure.servicebus.aio.management import ServiceBusAdministrationClient

    _in_resource_group(world, SECONDARY)
    names = create_backlog_queues(world, 2)
    await park("orders", ServiceBusMessage(b"x" * 10_000), ServiceBusMessage(b"y" * 10_000), backlog=1)
    arm = ArmDirectory(_NoToken(), SECONDARY_ID)
    data_plane = backlog_directory.DataPlaneDirectory(ServiceBusAdministrationClient(SECONDARY, _NoToken()))
    try:
        through_arm = {q.name: q for q in await arm.list_queues()}
        through_data_plane = {q.name: q for q in await data_plane.list_queues()}
    finally:
        await arm.close()
        await data_plane.close()

    assert through_arm == through_data_plane
    assert through_arm[names[0]].size_in_bytes == 0
    assert through_arm[names[1]].active_messages == 2
    assert 20_000 < through_arm[names[1]].size_in_bytes < 22_000  # two bodies of 10,000 bytes and their headers
