"""The control endpoint's additions for the wire drill: the model's random faults (`/world`) and
every entity of a namespace in one answer (`/namespaces/{ns}/entities`), served on the test's loop."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from pairedbus import contract
from pairedbus.emulator.control import ControlEndpoint
from pairedbus.emulator.emulator import Emulator


@pytest.fixture
async def control() -> AsyncIterator[tuple[Emulator, TestClient[Any, Any]]]:
    emulator = Emulator(["primary"], admin=False)  # not started: the model alone answers these
    async with TestClient(TestServer(ControlEndpoint(emulator).app())) as client:
        yield emulator, client


async def test_the_world_takes_a_seed_and_rates_and_says_what_fired(control) -> None:
    emulator, client = control
    answer = await (
        await client.post("/world", json={"seed": 7, "fault_rate": 0.25, "late_lock_loss_rate": 0.5})
    ).json()
    assert answer == {
        "seed": 7,
        "fault_rate": 0.25,
        "ambiguous_send_rate": 0.0,
        "late_lock_loss_rate": 0.5,
        "injected": {},
    }
    world = emulator.world
    assert (world.fault_rate, world.late_lock_loss_rate) == (0.25, 0.5)
    world.late_lock_loss_rate = 0.999999
    assert world.lock_lost_before_complete(contract.service_bus_fqdn("primary"), "orders")
    assert (await (await client.get("/world")).json())["injected"] == {"late_lock_loss": 1}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"fault_rate": 1}, "fault_rate"),
        ({"ambiguous_send_rate": -0.1}, "ambiguous_send_rate"),
        ({"late_lock_loss_rate": True}, "late_lock_loss_rate"),
        ({"seed": "1"}, "seed"),
        ({"latency": 1}, "latency"),
    ],
)
async def test_a_bad_world_setting_is_one_line_naming_it_and_changes_nothing(control, body, field) -> None:
    emulator, client = control
    response = await client.post("/world", json={"fault_rate": 0.1, **body})
    assert response.status == 400
    assert (await response.json())["error"].startswith(f"{field}: ")
    assert emulator.world.fault_rate == 0.0


async def test_entities_lists_every_queue_topic_and_subscription_with_what_each_holds(control) -> None:
    from azure.servicebus import ServiceBusMessage

    from pairedbus.testing.content import content_from_message

    emulator, client = control
    ns = emulator.namespace("primary")
    ns.create_queue("orders", requires_duplicate_detection=True)
    ns.create_topic("events")
    ns.create_subscription("events", "audit")
    now = emulator.world.clock.time()
    parked = ServiceBusMessage(b"x", message_id="m1", application_properties={contract.ALIAS_PATH: "orders"})
    ns.sendable("orders").accept([content_from_message(parked), content_from_message(parked)], now)
    ns.sendable("events").accept([content_from_message(ServiceBusMessage(b"y", message_id="e1"))], now)

    counts = await (await client.get("/namespaces/primary/entities")).json()
    assert counts["queues"]["orders"] == {
        "counts": {"active": 1, "dead_letter": 0, "scheduled": 0, "deferred": 0},
        "duplicates_dropped": 1,
    }
    assert counts["topics"]["events"]["subscriptions"]["audit"]["counts"]["active"] == 1
    assert "waiting" not in counts["queues"]["orders"]  # counts only, unless asked

    held = await (await client.get("/namespaces/primary/entities?messages=true")).json()
    [message] = held["queues"]["orders"]["waiting"]
    assert message["message_id"] == "m1" and message["state"] == "active"
    assert message["sequence_number"] == ns.queue("orders").active_messages()[0].sequence_number
    assert message["application_properties"] == {contract.ALIAS_PATH: "orders"}
    assert held["queues"]["orders"]["dead_letter"] == []
    assert [m["message_id"] for m in held["topics"]["events"]["subscriptions"]["audit"]["waiting"]] == ["e1"]
    bad = await client.get("/namespaces/primary/entities?messages=yes")
    assert bad.status == 400 and (await bad.json())["error"].startswith("messages: ")


async def test_throttle_is_set_by_rate_and_healed(control) -> None:
    emulator, client = control
    faults = emulator.broker("primary").faults
    response = await client.post("/namespaces/primary/faults", json={"throttle": 50})
    assert response.status == 200
    assert (await response.json())["throttle"] == 50.0
    assert faults.throttle_rate == 50.0
    assert (await client.post("/namespaces/primary/heal")).status == 200
    assert faults.throttle_rate is None


@pytest.mark.parametrize("rate", [0, -1, True, "5", 1e9])
async def test_a_bad_throttle_rate_is_one_line_naming_it(control, rate) -> None:
    emulator, client = control
    response = await client.post("/namespaces/primary/faults", json={"throttle": rate})
    assert response.status == 400
    assert (await response.json())["error"].startswith("throttle: ")
    assert emulator.broker("primary").faults.throttle_rate is None


async def test_quota_exceeded_fills_one_entity_until_healed(control) -> None:
    """`{"quota_exceeded": entity}`: the model's entity-full refusal on that entity only (over the wire the SDK
    raises ServiceBusQuotaExceededError for it: test_sdk_over_the_wire), cleared by the namespace's heal."""
    from pairedbus.servicebus.errors import ErrorKind, ServiceError

    emulator, client = control
    fqdn = emulator.broker("primary").fqdn
    for name in ("orders", "invoices"):
        assert (await client.put(f"/namespaces/primary/queues/{name}", json={})).status == 201
    response = await client.post("/namespaces/primary/faults", json={"quota_exceeded": "orders"})
    assert response.status == 200 and (await response.json())["quota_exceeded"] == ["orders"]
    with pytest.raises(ServiceError) as refused:
        emulator.world.check(fqdn, "orders", "send")
    assert refused.value.kind is ErrorKind.QUOTA_EXCEEDED
    emulator.world.check(fqdn, "invoices", "send")  # the other entity is not full
    healed = await client.post("/namespaces/primary/heal")
    assert (await healed.json())["quota_exceeded"] == []
    emulator.world.check(fqdn, "orders", "send")


@pytest.mark.parametrize("entity", ["missing", "", 5, ["orders"]])
async def test_quota_exceeded_names_an_entity_of_the_namespace(control, entity) -> None:
    emulator, client = control
    assert (await client.put("/namespaces/primary/queues/orders", json={})).status == 201
    response = await client.post("/namespaces/primary/faults", json={"quota_exceeded": entity})
    assert response.status == 400
    assert (await response.json())["error"].startswith("quota_exceeded: ")
    emulator.world.check(emulator.broker("primary").fqdn, "orders", "send")


async def test_busy_dispositions_answers_the_next_n_busy_and_is_healed(control) -> None:
    """`{"busy_dispositions": n}`: the next n dispositions on receive links are refused server-busy (over the
    wire, with the lock kept: tests/syphon/test_settlement_over_the_wire.py), then they pass again."""
    from pairedbus.servicebus.errors import ErrorKind, ServiceError

    emulator, client = control
    faults = emulator.broker("primary").faults
    response = await client.post("/namespaces/primary/faults", json={"busy_dispositions": 2})
    assert response.status == 200 and (await response.json())["busy_dispositions"] == 2
    for _ in range(2):
        with pytest.raises(ServiceError) as refused:
            faults.check_disposition()
        assert refused.value.kind is ErrorKind.SERVER_BUSY
    faults.check_disposition()  # the third passes
    await client.post("/namespaces/primary/faults", json={"busy_dispositions": 5})
    assert (await client.post("/namespaces/primary/heal")).status == 200
    assert faults.busy_dispositions == 0


@pytest.mark.parametrize("count", [-1, True, "2", 2.5, 10**7])
async def test_a_bad_busy_dispositions_count_is_one_line_naming_it(control, count) -> None:
    emulator, client = control
    response = await client.post("/namespaces/primary/faults", json={"busy_dispositions": count})
    assert response.status == 400
    assert (await response.json())["error"].startswith("busy_dispositions: ")
    assert emulator.broker("primary").faults.busy_dispositions == 0
