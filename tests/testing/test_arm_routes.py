"""The ARM plane's routing (`testing/arm_routes.py`): which URL reaches which resource, and every
refusal answered as an ARM error body (`{"error": {"code", "message"}}`), never an exception."""

from __future__ import annotations

import json
from datetime import timedelta

from pairedbus.testing import ServiceBusWorld
from pairedbus.testing.arm_responses import DEFAULT_RESOURCE_GROUP, DEFAULT_SUBSCRIPTION_ID
from pairedbus.testing.arm_routes import ArmRoutes, settings_from
from tests.testing.conftest import FQDN

NAMESPACE = "primary-ns"
BASE = (
    f"https://management.azure.com/subscriptions/{DEFAULT_SUBSCRIPTION_ID}/resourceGroups/{DEFAULT_RESOURCE_GROUP}"
    f"/providers/Microsoft.ServiceBus/namespaces/{NAMESPACE}"
)


def test_a_queue_is_routed_by_its_path_case_insensitively(world: ServiceBusWorld) -> None:
    world.namespace(FQDN).create_queue("orders")
    status, body = ArmRoutes(world).handle("get", BASE.replace("/queues", "") + "/Queues/orders?api-version=1", None)
    assert status == 200 and body["name"] == "orders"
    assert body["type"] == "Microsoft.ServiceBus/Namespaces/Queues"


def test_a_put_queue_reaches_the_world_with_its_durations_parsed(world: ServiceBusWorld) -> None:
    ns = world.namespace(FQDN)
    payload = {"properties": {"lockDuration": "PT45S", "maxDeliveryCount": 7}}
    status, _ = ArmRoutes(world).handle("PUT", f"{BASE}/queues/invoices", json.dumps(payload))
    assert status in (200, 201)
    queue = ns.queue("invoices")
    assert queue.settings.lock_seconds == 45 and queue.settings.max_delivery_count == 7


def test_a_path_the_fake_does_not_serve_is_an_arm_error_body(world: ServiceBusWorld) -> None:
    world.namespace(FQDN)
    routes = ArmRoutes(world)
    status, body = routes.handle(
        "GET", "https://management.azure.com/subscriptions/x/providers/Microsoft.Web/sites", None
    )
    assert status == 404 and body["error"]["code"] == "InvalidResourceType"
    status, body = routes.handle("GET", f"{BASE}/eventhubs/e1", None)
    assert status == 404 and body["error"]["code"] == "InvalidResourceType"
    status, body = routes.handle("GET", f"{BASE}/queues/missing", None)
    assert status == 404 and body["error"]["code"] == "NotFound"


def test_settings_from_maps_rest_names_to_sdk_names_and_skips_unknown_and_null() -> None:
    payload = {"properties": {"lockDuration": "PT1M", "maxDeliveryCount": 3, "noSuchField": 1, "status": None}}
    assert settings_from("queue", payload) == {"lock_duration": timedelta(minutes=1), "max_delivery_count": 3}
    assert settings_from("queue", {}) == {}
