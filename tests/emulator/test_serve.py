"""`pairedbus emulator serve`: Microsoft's Config.json as is, the broker in another process, the
unmodified SDK on the printed connection strings, a clean stop on SIGTERM, bad files refused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient
from azure.servicebus.aio.management import ServiceBusAdministrationClient

from pairedbus import contract
from tests.load import guard

FIXTURE = Path(__file__).parent / "fixtures" / "Config.json"
DEV_STACK = Path(__file__).parents[2] / "stacks" / "Pulumi.dev.yaml"
pytestmark = pytest.mark.timeout(120)


def _serve(config: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "pairedbus", "emulator", "serve", "--config", str(config), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def _refused(config: Path) -> subprocess.CompletedProcess[str]:
    """The command run on a file it must refuse: exit 2."""
    result = subprocess.run(
        [sys.executable, "-m", "pairedbus", "emulator", "serve", "--config", str(config), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=guard(60),
    )
    assert result.returncode == 2, result.stderr
    return result


def _connection_strings(process: subprocess.Popen[str], count: int) -> dict[str, str]:
    assert process.stdout is not None
    found = {}
    while len(found) < count:
        line = process.stdout.readline()
        assert line, f"the emulator ended early: {process.stderr.read() if process.stderr else ''}"
        name, _, value = line.rstrip("\n").partition("\t")
        found[name] = value
    return found


async def test_the_sdk_sends_and_receives_through_a_broker_in_another_process() -> None:
    process = _serve(FIXTURE)
    try:
        strings = _connection_strings(process, 2)
        assert set(strings) == {"sbemulatorns", "secondns"}
        assert strings["sbemulatorns"].startswith("Endpoint=sb://localhost:")
        assert strings["sbemulatorns"].endswith(";UseDevelopmentEmulator=true")
        async with ServiceBusClient.from_connection_string(strings["sbemulatorns"], retry_total=0) as sb:
            async with sb.get_queue_sender("queue.1") as sender:
                await sender.send_messages(ServiceBusMessage("through the socket"))
            async with sb.get_queue_receiver("queue.1") as receiver:
                (message,) = await receiver.receive_messages(max_wait_time=10)
                assert str(message) == "through the socket"
                await receiver.complete_message(message)
            # the correlation rule of subscription.1 lets only its match through
            async with sb.get_topic_sender("topic.1") as sender:
                await sender.send_messages(ServiceBusMessage("no match"))
                await sender.send_messages(
                    ServiceBusMessage(
                        "match",
                        content_type="application/text",
                        correlation_id="id1",
                        subject="subject1",
                        message_id="msgid1",
                        reply_to="someQueue",
                        reply_to_session_id="sessionId",
                        session_id="session1",
                        to="xyz",
                    )
                )
            async with sb.get_subscription_receiver("topic.1", "subscription.1") as receiver:
                messages = await receiver.receive_messages(max_message_count=10, max_wait_time=5)
                assert [str(m) for m in messages] == ["match"]
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=guard(30))
    assert process.returncode == 0, err
    assert "stopped" in err


async def test_a_stack_file_serves_the_pair_as_the_iac_creates_it() -> None:
    """stacks/Pulumi.dev.yaml: the primary with its 2 queues and a topic of 2 subscriptions, the secondary with
    its 10 backlog queues and their property table, seen through the unmodified admin client and SDK."""
    process = _serve(DEV_STACK)
    try:
        lines = _connection_strings(process, 3)
        primary, secondary, ca = lines["contoso-dev-weu"], lines["contoso-dev-neu"], lines["@ca"]
        async with ServiceBusAdministrationClient.from_connection_string(primary, connection_verify=ca) as admin:
            queues = {q.name: q async for q in admin.list_queues()}
            assert set(queues) == {"orders", "invoices"}
            orders = queues["orders"]
            assert orders.requires_session and orders.requires_duplicate_detection and orders.enable_partitioning
            assert orders.max_delivery_count == 10
            assert orders.lock_duration.total_seconds() == 60
            # a partitioned Standard queue reports its size summed over its 16 fragments, as the service does
            assert queues["invoices"].max_size_in_megabytes == 2048 * contract.PARTITIONS_PER_ENTITY["Standard"]
            assert [s.name async for s in admin.list_subscriptions("events")] == ["audit", "billing"]
            billing = await admin.get_subscription("events", "billing")
            assert billing.lock_duration.total_seconds() == 120
        async with ServiceBusAdministrationClient.from_connection_string(secondary, connection_verify=ca) as admin:
            backlog = {q.name: q async for q in admin.list_queues()}
        assert sorted(backlog) == sorted(contract.backlog_queue_names("contoso-dev-weu", 10))
        for queue in backlog.values():
            assert queue.max_delivery_count == contract.INT32_MAX
            assert queue.dead_lettering_on_message_expiration and queue.max_size_in_megabytes == 5120
        parked = contract.backlog_queue_name("contoso-dev-weu", 3)
        async with ServiceBusClient.from_connection_string(secondary, retry_total=0) as sb:
            async with sb.get_queue_sender(parked) as sender:
                await sender.send_messages(ServiceBusMessage("parked"))
            async with sb.get_queue_receiver(parked) as receiver:
                (message,) = await receiver.receive_messages(max_wait_time=10)
                assert str(message) == "parked"
                await receiver.complete_message(message)
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=guard(30))
    assert process.returncode == 0, err


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (
            DEV_STACK.read_text().replace("backlogQueueCount: 10", "backlogQueueCount: -1"),
            "pairedbus:backlogQueueCount",
        ),
        (DEV_STACK.read_text().replace("lockDuration: PT2M", "lockDuration: soon"), "pairedbus:topics[0]"),
        ("config: {}\n", "neither Microsoft's Config.json (UserConfig) nor a stack file"),
        ("colour: red\n", "'colour': not a stack file key"),
    ],
    ids=["count", "duration", "empty", "not-a-stack"],
)
def test_a_bad_stack_file_is_one_line_naming_the_field_exit_2(tmp_path: Path, content: str, says: str) -> None:
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(content)
    result = _refused(path)
    assert says in result.stderr and "--config: Pulumi.dev.yaml: " in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{", "not a JSON file"),
        ("{}", "UserConfig"),
        ('{"UserConfig": {"Namespaces": []}}', "UserConfig.Namespaces"),
        ('{"UserConfig": {"Namespaces": [{"Name": "a", "Queus": []}]}}', "Queus"),
        (
            '{"UserConfig": {"Namespaces": [{"Name": "a", "Queues": [{"Name": "q", "Properties": {"MaxDeliveryCnt": 3}}]}]}}',
            "UserConfig.Namespaces[0].Queues[0].Properties.MaxDeliveryCnt",
        ),
        ('{"UserConfig": {"Namespaces": [{"Name": "a"}, {"Name": "a"}]}}', "declared twice"),
        (
            '{"UserConfig": {"Namespaces": [{"Name": "a", "Queues": [{"Name": "q", "Properties": {"LockDuration": "soon"}}]}]}}',
            "UserConfig.Namespaces[0]",
        ),
    ],
)
def test_a_bad_config_is_one_line_naming_the_field_exit_2(tmp_path: Path, content: str, says: str) -> None:
    path = tmp_path / "Config.json"
    path.write_text(content)
    result = _refused(path)
    assert says in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""


def test_non_utf8_and_a_directory_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "Config.json"
    path.write_bytes(b"\xff\xfe{")
    for target in (path, tmp_path):
        result = subprocess.run(
            [sys.executable, "-m", "pairedbus", "emulator", "serve", "--config", str(target)],
            capture_output=True,
            text=True,
            timeout=guard(60),
        )
        assert result.returncode == 2
        assert result.stderr.startswith("pairedbus: ") and "--config" in result.stderr


def test_the_fixture_is_microsofts_shape() -> None:
    data = json.loads(FIXTURE.read_text())
    assert data["UserConfig"]["Namespaces"][0]["Name"] == "sbemulatorns"
