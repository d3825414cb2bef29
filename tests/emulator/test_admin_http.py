"""The admin plane over the wire: the unmodified azure-servicebus `ServiceBusAdministrationClient`
(sync and aio, its own pipeline, serializer and requests/aiohttp transports) against
`pairedbus.emulator.admin_http` on loopback, over HTTPS with the emulator's own CA
(`connection_verify`) and over plain HTTP. Nothing of the client is swapped; only the connection
string (and, for plain HTTP, azure-core's public `transport=` keyword) points it at the emulator.
"""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import requests
from azure.core.exceptions import (
    ClientAuthenticationError,
    HttpResponseError,
    ResourceExistsError,
    ResourceNotFoundError,
    ServiceRequestError,
)
from azure.servicebus import ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient as AsyncServiceBusClient
from azure.servicebus.aio.management import ServiceBusAdministrationClient as AsyncAdminClient
from azure.servicebus.exceptions import ServiceBusServerBusyError
from azure.servicebus.management import (
    CorrelationRuleFilter,
    ServiceBusAdministrationClient,
    SqlRuleAction,
    SqlRuleFilter,
)

from pairedbus import durations
from pairedbus.emulator import Emulator
from pairedbus.emulator.admin_http import (
    AdminNamespace,
    AdminPlane,
    AsyncPlainHttpTransport,
    PlainHttpTransport,
    serve_in_thread,
)
from pairedbus.emulator.cbs import sas_token
from pairedbus.emulator.certificates import TlsFiles, generate_certificates
from pairedbus.servicebus.entities import Topic
from pairedbus.servicebus.world import ServiceBusWorld
from pairedbus.testing.sync_client import ServiceBusClient as FakeServiceBusClient
from tests.load import guard

NAMESPACE = "contoso-sec.servicebus.windows.net"
KEY_NAME, KEY = "RootManageSharedAccessKey", "emulator-key"
KEYS = {KEY_NAME: KEY}
BACKLOG = "contoso/x-servicebus-transfer/0"
ATOM = "{http://www.w3.org/2005/Atom}"
SB = "{http://schemas.microsoft.com/netservices/2010/10/servicebus/connect}"
#: azure-core reads no status at all once a test is over this (every wait is bounded).
TIMEOUT = 10


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsFiles]:
    directory = tmp_path_factory.mktemp("emulator-tls")
    yield generate_certificates(directory)
    shutil.rmtree(directory)


@pytest.fixture
def world() -> ServiceBusWorld:
    return ServiceBusWorld()


@pytest.fixture
def plane(world: ServiceBusWorld, tls: TlsFiles) -> Iterator[AdminPlane]:
    """The HTTPS admin plane of one namespace, on its own thread (sync clients block theirs)."""
    with serve_in_thread(AdminPlane(world, [AdminNamespace(NAMESPACE, KEYS)], tls=tls)) as running:
        yield running


@pytest.fixture
def admin(plane: AdminPlane, tls: TlsFiles) -> Iterator[ServiceBusAdministrationClient]:
    client = ServiceBusAdministrationClient.from_connection_string(
        plane.connection_string(NAMESPACE),
        connection_verify=str(tls.ca_path),
        retry_total=0,
        connection_timeout=guard(TIMEOUT),
        read_timeout=guard(TIMEOUT),
    )
    with client:
        yield client


def raw(
    plane: AdminPlane, tls: TlsFiles, method: str, path: str, *, key_name: str = KEY_NAME, **kwargs: Any
) -> requests.Response:
    """One request as any HTTP client would send it, signed with the key; `path` is sent as written."""
    base = f"https://{plane.address(NAMESPACE)}"
    headers = {"Authorization": sas_token(base, key_name, KEY), **kwargs.pop("headers", {})}
    return requests.request(
        method, base + path, headers=headers, verify=str(tls.ca_path), timeout=guard(TIMEOUT), **kwargs
    )


def description(body: bytes, kind: str = "QueueDescription") -> dict[str, str]:
    root = ET.fromstring(body)
    element = root.find(f"{ATOM}content/{SB}{kind}")
    assert element is not None, body
    return {child.tag.split("}", 1)[1]: child.text or "" for child in element}


def send(world: ServiceBusWorld, entity: str, count: int) -> None:
    """Put messages in through the in-process front-end on the same world."""
    with FakeServiceBusClient(NAMESPACE, "unused", _world=world) as client:
        is_topic = isinstance(world.namespace(NAMESPACE).entities[entity], Topic)
        with client.get_topic_sender(entity) if is_topic else client.get_queue_sender(entity) as sender:
            sender.send_messages([ServiceBusMessage(f"m{i}") for i in range(count)])


# --- queues ---------------------------------------------------------------------------------------


def test_backlog_queue_is_created_with_the_spec_table_and_read_back_as_its_literals(admin, plane, tls, world) -> None:
    table_ttl = durations.wire_duration("P10675199DT2H48M5.4775807S")  # how the provider hands it to the SDK
    created = admin.create_queue(
        BACKLOG,
        max_size_in_megabytes=5120,
        max_delivery_count=2147483647,
        default_message_time_to_live=table_ttl,
        auto_delete_on_idle=table_ttl,
        lock_duration=timedelta(minutes=1),
        dead_lettering_on_message_expiration=True,
        enable_batched_operations=True,
    )
    assert created.name == BACKLOG
    assert world.namespace(NAMESPACE).queue(BACKLOG).settings.values["max_delivery_count"] == 2147483647

    # What the service writes: the spec's literals, to the tick.
    answer = raw(plane, tls, "GET", "/contoso%2Fx-servicebus-transfer%2F0?api-version=2024-05")
    assert answer.status_code == 200
    sent = description(answer.content)
    assert sent["MaxSizeInMegabytes"] == "5120"
    assert sent["MaxDeliveryCount"] == "2147483647"
    assert sent["DefaultMessageTimeToLive"] == "P10675199DT2H48M5.4775807S"
    assert sent["AutoDeleteOnIdle"] == "P10675199DT2H48M5.4775807S"
    assert sent["LockDuration"] == "PT1M"
    assert sent["DeadLetteringOnMessageExpiration"] == "true"
    assert sent["EnableBatchedOperations"] == "true"
    # The .NET client's literal slashes name the same queue.
    literal = raw(plane, tls, "GET", "/contoso/x-servicebus-transfer/0?api-version=2024-05")
    assert description(literal.content) == sent

    # What the client reads back from it.
    read = admin.get_queue(BACKLOG)
    assert read.max_size_in_megabytes == 5120
    assert read.max_delivery_count == 2147483647
    assert read.lock_duration == timedelta(minutes=1)
    assert durations.iso_duration(read.lock_duration) == "PT1M"
    for value in (read.default_message_time_to_live, read.auto_delete_on_idle):
        # isodate reads the seventh digit into the nearest microsecond: within one tick-rounding of the literal
        assert durations.durations_equal(value, "P10675199DT2H48M5.4775807S")
    assert read.dead_lettering_on_message_expiration is True
    assert read.enable_batched_operations is True


def test_queue_get_update_delete_and_runtime_counts(admin, world) -> None:
    admin.create_queue("orders", max_delivery_count=5)
    send(world, "orders", 3)

    queue = admin.get_queue("orders")
    queue.max_delivery_count = 7
    queue.lock_duration = timedelta(seconds=30)
    admin.update_queue(queue)

    updated = admin.get_queue("orders")
    assert (updated.max_delivery_count, updated.lock_duration) == (7, timedelta(seconds=30))
    assert world.namespace(NAMESPACE).queue("orders").settings.lock_seconds == 30
    runtime = admin.get_queue_runtime_properties("orders")
    assert (runtime.total_message_count, runtime.active_message_count) == (3, 3)
    assert runtime.size_in_bytes > 0

    admin.delete_queue("orders")
    assert "orders" not in world.namespace(NAMESPACE).entities
    with pytest.raises(ResourceNotFoundError):
        admin.get_queue("orders")  # the service answers an empty feed; the SDK raises
    with pytest.raises(ResourceNotFoundError) as deleted_twice:
        admin.delete_queue("orders")
    assert deleted_twice.value.status_code == 404


def test_creating_an_existing_queue_is_409_resource_exists(admin, world) -> None:
    admin.create_queue(BACKLOG)
    with pytest.raises(ResourceExistsError) as exists:
        admin.create_queue(BACKLOG)
    assert exists.value.status_code == 409
    with pytest.raises(ResourceExistsError):
        admin.create_topic(BACKLOG)  # queues and topics share one name space


def test_updating_a_missing_queue_is_404(admin, world) -> None:
    admin.create_queue("orders")
    queue = admin.get_queue("orders")
    world.namespace(NAMESPACE).delete("orders")
    with pytest.raises(ResourceNotFoundError) as missing:
        admin.update_queue(queue)  # PUT with If-Match: *
    assert missing.value.status_code == 404
    assert "orders" not in world.namespace(NAMESPACE).entities


def test_values_the_service_refuses_are_400(admin) -> None:
    with pytest.raises(HttpResponseError) as size:
        admin.create_queue("q", max_size_in_megabytes=3000)  # not a size the Standard tier offers
    assert size.value.status_code == 400
    with pytest.raises(HttpResponseError) as above_max:
        # Given the spec's string the SDK's isodate rounds it up, 3 ticks above TimeSpan.MaxValue
        admin.create_queue("q", default_message_time_to_live="P10675199DT2H48M5.4775807S")
    assert above_max.value.status_code == 400
    assert "TimeSpan.MaxValue" in str(above_max.value)
    admin.create_queue("q", requires_session=True)
    queue = admin.get_queue("q")
    queue.requires_session = False
    with pytest.raises(HttpResponseError) as immutable:
        admin.update_queue(queue)
    assert immutable.value.status_code == 400


def test_list_queues_pages_past_100_with_skip_and_top(admin, plane, tls, world) -> None:
    ns = world.namespace(NAMESPACE)
    names = [f"q{i:03d}" for i in range(105)]
    for name in names:
        ns.create_queue(name)

    assert [q.name for q in admin.list_queues()] == names
    assert [q.name for q in admin.list_queues_runtime_properties()] == names

    first = ET.fromstring(raw(plane, tls, "GET", "/$Resources/queues?$skip=0&$top=100&api-version=2024-05").content)
    assert len(first.findall(f"{ATOM}entry")) == 100
    links = {link.get("rel"): link.get("href") for link in first.findall(f"{ATOM}link")}
    assert "%24skip=100&%24top=100" in links["next"]
    last = ET.fromstring(raw(plane, tls, "GET", "/$Resources/queues?$skip=100&$top=100&api-version=2024-05").content)
    assert [e.findtext(f"{ATOM}title") for e in last.findall(f"{ATOM}entry")] == names[100:]
    assert [link.get("rel") for link in last.findall(f"{ATOM}link")] == ["self"]


# --- topics, subscriptions, rules ------------------------------------------------------------------


def test_topic_create_get_update_list_delete(admin, world) -> None:
    admin.create_topic("events", default_message_time_to_live=timedelta(days=2))
    admin.create_topic("audit")
    topic = admin.get_topic("events")
    assert topic.default_message_time_to_live == timedelta(days=2)
    topic.default_message_time_to_live = timedelta(hours=5)
    admin.update_topic(topic)
    assert admin.get_topic("events").default_message_time_to_live == timedelta(hours=5)
    admin.create_subscription("events", "billing")
    assert admin.get_topic_runtime_properties("events").subscription_count == 1
    assert [t.name for t in admin.list_topics()] == ["events", "audit"]
    assert [t.name for t in admin.list_topics_runtime_properties()] == ["events", "audit"]
    admin.delete_topic("events")
    assert "events" not in world.namespace(NAMESPACE).entities
    with pytest.raises(ResourceNotFoundError):
        admin.get_topic("events")


def test_subscription_create_get_update_list_delete_and_counts(admin, world) -> None:
    admin.create_topic("events")
    admin.create_subscription("events", "billing", max_delivery_count=4, requires_session=False)
    admin.create_subscription("events", "audit")
    send(world, "events", 2)

    sub = admin.get_subscription("events", "billing")
    assert sub.max_delivery_count == 4
    sub.max_delivery_count = 9
    sub.lock_duration = timedelta(seconds=45)
    admin.update_subscription("events", sub)
    assert admin.get_subscription("events", "billing").max_delivery_count == 9
    assert world.namespace(NAMESPACE).subscription("events", "billing").settings.max_delivery_count == 9

    runtime = admin.get_subscription_runtime_properties("events", "billing")
    assert (runtime.total_message_count, runtime.active_message_count) == (2, 2)
    assert [s.name for s in admin.list_subscriptions("events")] == ["billing", "audit"]
    assert [s.total_message_count for s in admin.list_subscriptions_runtime_properties("events")] == [2, 2]

    with pytest.raises(ResourceExistsError):
        admin.create_subscription("events", "billing")
    admin.delete_subscription("events", "billing")
    with pytest.raises(ResourceNotFoundError) as missing:
        admin.get_subscription("events", "billing")
    assert missing.value.status_code == 404
    with pytest.raises(ResourceNotFoundError):
        admin.create_subscription("no-such-topic", "s")


def test_rules_create_get_update_list_delete(admin, world) -> None:
    admin.create_topic("events")
    admin.create_subscription("events", "billing")
    sql = admin.create_rule(
        "events",
        "billing",
        "big",
        filter=SqlRuleFilter("amount > @min", {"@min": 100}),
        action=SqlRuleAction("SET tier = 'gold'"),
    )
    assert sql.filter.sql_expression == "amount > @min"
    assert dict(sql.filter.parameters) == {"@min": 100}
    correlation = admin.create_rule(
        "events", "billing", "eu", filter=CorrelationRuleFilter(label="eu", properties={"region": "west", "vip": True})
    )
    assert correlation.filter.label == "eu"
    assert dict(correlation.filter.properties) == {"region": "west", "vip": True}

    got = admin.get_rule("events", "billing", "big")
    assert got.action.sql_expression == "SET tier = 'gold'"
    assert [r.name for r in admin.list_rules("events", "billing")] == ["$Default", "big", "eu"]
    model_rules = world.namespace(NAMESPACE).subscription("events", "billing").rules.rules
    assert set(model_rules) == {"$Default", "big", "eu"}

    got.filter = SqlRuleFilter("amount > 500")
    admin.update_rule("events", "billing", got)
    assert admin.get_rule("events", "billing", "big").filter.sql_expression == "amount > 500"

    with pytest.raises(HttpResponseError) as invalid:
        admin.create_rule("events", "billing", "broken", filter=SqlRuleFilter("amount >"))
    assert invalid.value.status_code == 400
    with pytest.raises(ResourceExistsError):
        admin.create_rule("events", "billing", "eu")
    admin.delete_rule("events", "billing", "eu")
    with pytest.raises(ResourceNotFoundError) as missing:
        admin.get_rule("events", "billing", "eu")
    assert missing.value.status_code == 404


def test_namespace_properties(admin) -> None:
    properties = admin.get_namespace_properties()
    assert properties.name == "contoso-sec"
    assert properties.messaging_sku == "Standard"
    assert properties.namespace_type == "Messaging"


# --- refusals --------------------------------------------------------------------------------------


def test_a_wrong_key_is_refused_with_401_client_authentication_error(plane, tls, world) -> None:
    connection_string = plane.connection_string(NAMESPACE).replace(
        "SharedAccessKey=emulator-key", "SharedAccessKey=wrong"
    )
    client = ServiceBusAdministrationClient.from_connection_string(
        connection_string, connection_verify=str(tls.ca_path), retry_total=0
    )
    with client, pytest.raises(ClientAuthenticationError) as refused:
        client.create_queue("orders")
    assert refused.value.status_code == 401
    assert "InvalidSignature" in str(refused.value)
    assert "orders" not in world.namespace(NAMESPACE).entities


def test_missing_expired_and_foreign_tokens_are_401(plane, tls) -> None:
    base = f"https://{plane.address(NAMESPACE)}"
    path = "/$Resources/queues?api-version=2024-05"
    missing = requests.get(base + path, verify=str(tls.ca_path), timeout=guard(TIMEOUT))
    assert missing.status_code == 401 and b"MissingToken" in missing.content
    expired = sas_token(base, KEY_NAME, KEY, expiry=1)
    answer = requests.get(
        base + path, headers={"Authorization": expired}, verify=str(tls.ca_path), timeout=guard(TIMEOUT)
    )
    assert answer.status_code == 401 and b"ExpiredToken" in answer.content
    elsewhere = sas_token(f"{base}/other", KEY_NAME, KEY)
    answer = requests.get(
        base + path, headers={"Authorization": elsewhere}, verify=str(tls.ca_path), timeout=guard(TIMEOUT)
    )
    assert answer.status_code == 401 and b"InvalidAudience" in answer.content
    assert raw(plane, tls, "GET", path, key_name="OtherRule").status_code == 401


def test_a_malformed_body_is_400_and_an_injected_fault_is_503(plane, tls, world, admin) -> None:
    answer = raw(plane, tls, "PUT", "/orders?api-version=2024-05", data=b"<entry><not-closed>")
    assert answer.status_code == 400
    assert ET.fromstring(answer.content).findtext("Code") == "400"
    admin.create_queue("orders")
    world.fail(NAMESPACE, error=ServiceBusServerBusyError)
    with pytest.raises(HttpResponseError) as busy:
        admin.get_queue_runtime_properties("orders")
    assert busy.value.status_code == 503


def test_health_needs_no_token(plane, tls) -> None:
    answer = requests.get(f"https://{plane.address(NAMESPACE)}/health", verify=str(tls.ca_path), timeout=guard(TIMEOUT))
    assert answer.status_code == 200
    assert answer.json() == {"status": "Healthy"}


def test_only_loopback_addresses_are_served(world) -> None:
    with pytest.raises(ValueError, match="loopback"):
        AdminPlane(world, [NAMESPACE], host="0.0.0.0")


def test_the_client_without_the_ca_refuses_the_emulator_certificate(plane) -> None:
    client = ServiceBusAdministrationClient.from_connection_string(
        plane.connection_string(NAMESPACE),
        retry_total=0,
        connection_timeout=guard(TIMEOUT),
        read_timeout=guard(TIMEOUT),
    )
    with client, pytest.raises(ServiceRequestError, match=r"(?i)certificate"):
        client.get_namespace_properties()


# --- aio and plain HTTP ----------------------------------------------------------------------------


async def test_the_aio_client_over_https(world, tls) -> None:
    async with AdminPlane(world, [AdminNamespace(NAMESPACE, KEYS)], tls=tls) as plane:
        client = AsyncAdminClient.from_connection_string(
            plane.connection_string(NAMESPACE), connection_verify=str(tls.ca_path), retry_total=0
        )
        async with client:
            await client.create_queue(BACKLOG, max_delivery_count=2147483647)
            await client.create_topic("events")
            await client.create_subscription("events", "billing")
            await client.create_rule("events", "billing", "eu", filter=CorrelationRuleFilter(label="eu"))
            assert (await client.get_queue(BACKLOG)).max_delivery_count == 2147483647
            assert [q.name async for q in client.list_queues()] == [BACKLOG]
            assert [r.name async for r in client.list_rules("events", "billing")] == ["$Default", "eu"]
            await client.delete_queue(BACKLOG)
            with pytest.raises(ResourceNotFoundError):
                await client.get_queue(BACKLOG)
            with pytest.raises(ResourceExistsError):
                await client.create_topic("events")


def test_the_sync_client_over_plain_http_with_a_public_transport(world) -> None:
    """The client always builds `https://`: with azure-core's `transport=` keyword (a requests
    transport that sends the same URL as http) it reaches the plain-HTTP endpoint unmodified."""
    with serve_in_thread(AdminPlane(world, [AdminNamespace(NAMESPACE, KEYS)])) as plane:
        assert plane.scheme == "http"
        client = ServiceBusAdministrationClient.from_connection_string(
            plane.connection_string(NAMESPACE), transport=PlainHttpTransport(), retry_total=0
        )
        with client:
            client.create_queue(BACKLOG, lock_duration=timedelta(minutes=1))
            assert client.get_queue(BACKLOG).lock_duration == timedelta(minutes=1)
            assert [q.name for q in client.list_queues()] == [BACKLOG]
        health = requests.get(f"http://{plane.address(NAMESPACE)}/health", timeout=guard(TIMEOUT))
        assert health.status_code == 200


async def test_the_aio_client_and_aiohttp_over_plain_http(world) -> None:
    async with AdminPlane(world, [AdminNamespace(NAMESPACE, KEYS)]) as plane:
        client = AsyncAdminClient.from_connection_string(
            plane.connection_string(NAMESPACE), transport=AsyncPlainHttpTransport(), retry_total=0
        )
        async with client:
            await client.create_topic("events")
            assert [t.name async for t in client.list_topics()] == ["events"]
        base = f"http://{plane.address(NAMESPACE)}"
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=guard(TIMEOUT))) as session:
            headers = {"Authorization": sas_token(base, KEY_NAME, KEY)}
            async with session.get(f"{base}/events?api-version=2024-05", headers=headers) as answer:
                assert answer.status == 200
                assert description(await answer.read(), "TopicDescription")["SubscriptionCount"] == "0"


async def test_each_namespace_has_its_own_port_and_keys(world, tls) -> None:
    other = AdminNamespace("contoso-pri.servicebus.windows.net", {KEY_NAME: "other-key"})
    async with AdminPlane(world, [AdminNamespace(NAMESPACE, KEYS), other], tls=tls) as plane:
        assert plane.port_of(NAMESPACE) != plane.port_of("contoso-pri")
        async with AsyncAdminClient.from_connection_string(
            plane.connection_string("contoso-pri"), connection_verify=str(tls.ca_path), retry_total=0
        ) as client:
            await client.create_queue("orders")
    assert "orders" in world.namespace("contoso-pri").entities
    assert "orders" not in world.namespace(NAMESPACE).entities


async def test_stop_releases_the_port(world) -> None:
    plane = AdminPlane(world, [NAMESPACE])
    await plane.start()
    port = plane.port_of(NAMESPACE)
    await plane.stop()
    with pytest.raises(KeyError):
        plane.port_of(NAMESPACE)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=guard(TIMEOUT))) as session:
        with pytest.raises(aiohttp.ClientConnectionError):
            await session.get(f"http://127.0.0.1:{port}/health")


def test_tls_files_are_written_where_asked(tmp_path: Path) -> None:
    files = generate_certificates(tmp_path / "certs")
    assert {p.name for p in (tmp_path / "certs").iterdir()} == {"ca.pem", "server.pem", "server.key"}
    assert files.ca_path.read_bytes().startswith(b"-----BEGIN CERTIFICATE-----")


# --- the documents, as the service writes them ------------------------------------------------------

#: A new queue's description as the service wrote it (a GET recorded from the live service in
#: azure-sdk-for-js's tests, api-version 2017-04), element by element, timestamps left out; its
#: TTL there was P14D, here the default TimeSpan.MaxValue.
SERVICE_QUEUE = [
    ("LockDuration", "PT1M"),
    ("MaxSizeInMegabytes", "1024"),
    ("RequiresDuplicateDetection", "false"),
    ("RequiresSession", "false"),
    ("DefaultMessageTimeToLive", "P10675199DT2H48M5.4775807S"),
    ("DeadLetteringOnMessageExpiration", "false"),
    ("DuplicateDetectionHistoryTimeWindow", "PT10M"),
    ("MaxDeliveryCount", "10"),
    ("EnableBatchedOperations", "true"),
    ("SizeInBytes", "0"),
    ("MessageCount", "0"),
    ("IsAnonymousAccessible", "false"),
    ("AuthorizationRules", ""),
    ("Status", "Active"),
    ("SupportOrdering", "true"),
    ("CountDetails", ""),
    ("AutoDeleteOnIdle", "P10675199DT2H48M5.4775807S"),
    ("EnablePartitioning", "false"),
    ("EntityAvailabilityStatus", "Available"),
    ("EnableExpress", "false"),
]
#: `CountDetails` children, in the service's order.
SERVICE_COUNTS = [
    "ActiveMessageCount",
    "DeadLetterMessageCount",
    "ScheduledMessageCount",
    "TransferMessageCount",
    "TransferDeadLetterMessageCount",
]
TIMESTAMPS = ("CreatedAt", "UpdatedAt", "AccessedAt")


def elements(body: bytes, kind: str) -> list[tuple[str, str]]:
    element = ET.fromstring(body).find(f"{ATOM}content/{SB}{kind}")
    assert element is not None, body
    return [(child.tag.split("}", 1)[1], (child.text or "").strip()) for child in element]


def test_a_new_queue_is_written_in_the_services_elements_order_and_defaults(admin, plane, tls) -> None:
    admin.create_queue("orders")
    body = raw(plane, tls, "GET", "/orders?api-version=2024-05").content
    written = elements(body, "QueueDescription")
    assert [(name, text) for name, text in written if name not in TIMESTAMPS] == SERVICE_QUEUE
    assert [name for name, _ in written].index("CreatedAt") == [name for name, _ in written].index("Status") + 1
    counts = ET.fromstring(body).find(f"{ATOM}content/{SB}QueueDescription/{SB}CountDetails")
    assert [child.tag.split("}", 1)[1] for child in counts] == SERVICE_COUNTS
    entry = ET.fromstring(body)
    assert entry.findtext(f"{ATOM}title") == "orders"
    assert entry.findtext(f"{ATOM}author/{ATOM}name") == "contoso-sec"


def test_a_topic_ends_with_its_filter_counts_as_api_version_2024_05_writes_it(admin, plane, tls) -> None:
    admin.create_topic("events")
    admin.create_subscription("events", "billing")
    admin.create_rule("events", "billing", "eu", filter=CorrelationRuleFilter(label="eu"))
    written = elements(raw(plane, tls, "GET", "/events?api-version=2024-05").content, "TopicDescription")
    # the $Default rule is a SQL (true) filter and is counted, as the service counts it
    assert written[-2:] == [("SqlFilterCount", "1"), ("CorrelationFilterCount", "1")]
    assert ("SubscriptionCount", "1") in written


# --- beside the AMQP front-end ----------------------------------------------------------------------


async def test_a_queue_made_over_the_admin_plane_carries_messages_over_amqp(tls) -> None:
    """One model, two wire front-ends: the admin client makes the queue over HTTPS, the data-plane
    client sends and receives over AMQP, and the admin client reads the count the broker left."""
    async with (
        Emulator(["contoso-sec"]) as emulator,
        AdminPlane.beside(emulator.world, emulator.brokers.values(), tls=tls) as plane,
    ):
        admin = AsyncAdminClient.from_connection_string(
            plane.connection_string("contoso-sec"), connection_verify=str(tls.ca_path), retry_total=0
        )
        async with (
            admin,
            AsyncServiceBusClient.from_connection_string(
                emulator.connection_string("contoso-sec"), retry_total=0
            ) as client,
        ):
            await admin.create_queue(BACKLOG, max_delivery_count=2147483647)
            async with client.get_queue_sender(BACKLOG) as sender:
                await sender.send_messages([ServiceBusMessage("one"), ServiceBusMessage("two")])
            assert (await admin.get_queue_runtime_properties(BACKLOG)).active_message_count == 2
            async with client.get_queue_receiver(BACKLOG, max_wait_time=5) as receiver:
                received = await receiver.receive_messages(max_message_count=1, max_wait_time=5)
                assert [str(m) for m in received] == ["one"]
                await receiver.complete_message(received[0])
            assert (await admin.get_queue_runtime_properties(BACKLOG)).active_message_count == 1


def test_forwarding_targets_and_metadata_round_trip(admin, plane, world) -> None:
    admin.create_queue("archive")
    admin.create_queue("orders", forward_to="archive", user_metadata="owned by billing")
    queue = admin.get_queue("orders")
    assert queue.forward_to == f"sb://{plane.address(NAMESPACE)}/archive"  # the service answers an address
    assert queue.user_metadata == "owned by billing"
    assert world.namespace(NAMESPACE).queue("orders").settings.forward_to == "archive"  # the model holds the name
    queue.forward_to = None
    admin.update_queue(queue)
    assert admin.get_queue("orders").forward_to is None
