"""The ARM plane's answers (`testing/arm_responses.py`): resource bodies shaped as ARM returns them,
paging by `$skip`/`$top`, and errors with ARM's codes."""

from __future__ import annotations

from azure.servicebus import ServiceBusClient, ServiceBusMessage

from pairedbus.testing import ServiceBusWorld
from pairedbus.testing.arm_responses import (
    conflict,
    entity_not_found,
    keys_body,
    namespace_body,
    namespace_not_found,
    page,
    queue_body,
    subscription_body,
)
from tests.testing.conftest import FQDN, Credential


def test_page_honours_skip_and_top() -> None:
    items = [{"n": i} for i in range(5)]
    assert page(items, {}) == {"value": items}
    assert page(items, {"$skip": "2"}) == {"value": items[2:]}
    assert page(items, {"$skip": "1", "$top": "2"}) == {"value": [{"n": 1}, {"n": 2}]}


def test_errors_carry_arms_status_and_code() -> None:
    assert (entity_not_found("orders").status, entity_not_found("orders").code) == (404, "NotFound")
    missing = namespace_not_found("ns1", "rg1")
    assert (missing.status, missing.code) == (404, "ResourceNotFound")
    assert "'Microsoft.ServiceBus/namespaces/ns1' under resource group 'rg1'" in missing.message
    assert (conflict("orders").status, conflict("orders").code) == (409, "Conflict")


def test_a_queue_body_counts_active_and_dead_lettered_messages(world: ServiceBusWorld) -> None:
    ns = world.namespace(FQDN)
    queue = ns.create_queue("orders")
    with ServiceBusClient(FQDN, Credential()) as sb, sb.get_queue_sender("orders") as sender:
        sender.send_messages([ServiceBusMessage(b"a"), ServiceBusMessage(b"b"), ServiceBusMessage(b"c")])
    with ServiceBusClient(FQDN, Credential()) as sb, sb.get_queue_receiver("orders") as receiver:
        [first] = receiver.receive_messages(max_message_count=1)
        receiver.dead_letter_message(first, reason="test")
    body = queue_body(ns, queue)
    assert body["properties"]["countDetails"]["activeMessageCount"] == 2
    assert body["properties"]["countDetails"]["deadLetterMessageCount"] == 1
    assert body["properties"]["messageCount"] == 3
    assert body["id"].endswith("/providers/Microsoft.ServiceBus/namespaces/primary-ns/queues/orders")


def test_a_subscription_body_lives_under_its_topic(world: ServiceBusWorld) -> None:
    ns = world.namespace(FQDN)
    ns.create_topic("events")
    sub = ns.create_subscription("events", "audit")
    body = subscription_body(ns, sub)
    assert body["id"].endswith("/namespaces/primary-ns/topics/events/subscriptions/audit")
    assert body["name"] == "audit" and body["type"] == "Microsoft.ServiceBus/Namespaces/Topics/Subscriptions"


def test_namespace_and_keys_bodies_name_the_namespace(world: ServiceBusWorld) -> None:
    ns = world.namespace(FQDN)
    body = namespace_body(ns)
    assert body["name"] == "primary-ns"
    assert body["properties"]["serviceBusEndpoint"] == f"https://{FQDN}:443/"
    keys = keys_body(ns, "RootManageSharedAccessKey")
    assert keys["primaryConnectionString"].startswith(
        f"Endpoint=sb://{FQDN}/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey="
    )
    assert keys["secondaryKey"] != keys["primaryKey"]
