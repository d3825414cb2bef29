"""`pairedbus.sdk`: every private azure-servicebus attribute the runtime reads, checked against the
installed SDK. A failure here means the SDK changed something the runtime relies on: re-check the
module against the new SDK, then update `SDK_VERSION_CHECKED`."""

from __future__ import annotations

import ast
import asyncio
import importlib
import inspect
import textwrap
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import azure.servicebus
import pytest
from azure.servicebus import ServiceBusMessage, ServiceBusMessageBatch, ServiceBusReceivedMessage
from azure.servicebus._pyamqp._encode import encode_payload
from azure.servicebus._transport._pyamqp_transport import PyamqpTransport
from azure.servicebus.amqp import AmqpAnnotatedMessage, AmqpMessageBodyType
from azure.servicebus.exceptions import (
    MessageSizeExceededError,
    MessagingEntityNotFoundError,
    ServiceBusConnectionError,
    ServiceBusServerBusyError,
)
from azure.servicebus.management import QueueRuntimeProperties, SubscriptionRuntimeProperties, TopicRuntimeProperties

from pairedbus import sdk
from tests.parsing import parse_source
from tests.test_layering import private_reads


def _wire(raw: AmqpAnnotatedMessage) -> bytes:
    return bytes(encode_payload(bytearray(), PyamqpTransport.to_outgoing_amqp_message(raw)))


def test_the_installed_sdk_is_the_one_this_module_was_checked_against() -> None:
    assert version("azure-servicebus") == azure.servicebus.__version__ == sdk.SDK_VERSION_CHECKED


def test_the_error_condition_is_where_the_sdk_keeps_it() -> None:
    import logging

    from azure.servicebus._pyamqp.error import AMQPLinkError, ErrorCondition

    log = logging.getLogger("test")
    refused = PyamqpTransport.create_servicebus_exception(log, AMQPLinkError(ErrorCondition.NotAllowed))
    own = PyamqpTransport.create_servicebus_exception(log, AttributeError("'NoneType' object has no attribute 'x'"))
    assert sdk.carries_condition(refused) and not sdk.carries_condition(own)
    assert not sdk.carries_condition(ServiceBusServerBusyError(message="busy"))  # made by hand: no condition
    assert sdk.condition_of(refused) == "amqp:not-allowed"
    assert sdk.condition_of(own) is None


def test_the_retryable_flag_is_where_the_sdk_keeps_it() -> None:
    assert sdk.is_retryable(ServiceBusServerBusyError(message="busy"))
    assert sdk.is_retryable(ServiceBusConnectionError(message="reset"))
    assert not sdk.is_retryable(MessageSizeExceededError(message="big"))
    assert not sdk.is_retryable(MessagingEntityNotFoundError(message="gone"))


def test_error_for_condition_is_the_exception_the_sdks_transport_raises() -> None:
    from azure.servicebus.exceptions import ServiceBusAuthorizationError

    refused = sdk.error_for_condition("amqp:unauthorized-access", "no Send claim")
    assert type(refused) is ServiceBusAuthorizationError and "no Send claim" in str(refused)
    assert sdk.condition_of(refused) == "amqp:unauthorized-access"
    assert not sdk.is_retryable(refused) and sdk.is_retryable(ServiceBusAuthorizationError(message="x"))
    busy = sdk.error_for_condition("com.microsoft:server-busy")
    assert type(busy) is ServiceBusServerBusyError and sdk.is_retryable(busy)
    plain = sdk.error_for_condition("amqp:invalid-field")  # a condition the SDK maps to no class
    assert type(plain) is azure.servicebus.exceptions.ServiceBusError and sdk.carries_condition(plain)
    lost = sdk.error_for_condition("amqp:socket-error", on_connection=True)
    assert type(lost) is ServiceBusConnectionError and sdk.is_retryable(lost)


def test_the_raw_message_and_the_batch_internals_are_where_the_sdk_keeps_them() -> None:
    message = ServiceBusMessage(b"x", message_id="m-1")
    assert sdk.raw_amqp_message(message) is message.raw_amqp_message
    batch = ServiceBusMessageBatch(max_size_in_bytes=1024)
    batch.add_message(message)
    assert sdk.batch_messages(batch) == [message]
    assert set(sdk.batch_transport(batch)) <= {"amqp_transport"}
    ServiceBusMessageBatch(max_size_in_bytes=1024, **sdk.batch_transport(batch)).add_message(message)


def test_the_annotation_keys_are_the_service_bus_wire_names() -> None:
    assert sdk.ANNOTATION_PARTITION_KEY == b"x-opt-partition-key"
    assert sdk.ANNOTATION_SCHEDULED_ENQUEUE_TIME == b"x-opt-scheduled-enqueue-time"
    assert ServiceBusMessage(b"x", partition_key="p").raw_amqp_message.annotations[sdk.ANNOTATION_PARTITION_KEY] == "p"


def test_a_bare_annotated_message_encodes_like_the_public_constructor() -> None:
    for body in (b"payload", b""):
        assert _wire(sdk.bare_annotated_message(body)) == _wire(AmqpAnnotatedMessage(data_body=body))
    assert _wire(sdk.bare_annotated_message(None)) == _wire(AmqpAnnotatedMessage(value_body=None))


def test_encoded_size_is_the_size_of_the_sdk_encoding_and_a_long_encodes() -> None:
    message = ServiceBusMessage(b"x" * 300, application_properties={"big": sdk.amqp_long(2**40)})
    assert sdk.encoded_size(message) == len(_wire(message.raw_amqp_message))


def test_add_to_batch_builds_the_batch_add_message_builds_with_one_encoding() -> None:
    messages = [ServiceBusMessage(b"x" * n, message_id=f"m-{n}", session_id="s") for n in (10, 300, 8000)]
    public = ServiceBusMessageBatch(max_size_in_bytes=6000)
    ours = ServiceBusMessageBatch(max_size_in_bytes=6000)
    for message in messages[:2]:
        public.add_message(message)
        assert sdk.add_to_batch(ours, message)
    assert not sdk.add_to_batch(ours, messages[2])  # over 6000 bytes: refused, batch unchanged
    assert (len(ours), ours.size_in_bytes) == (len(public), public.size_in_bytes)
    assert _wire_batch(ours) == _wire_batch(public)


def _wire_batch(batch: ServiceBusMessageBatch) -> bytes:
    return bytes(encode_payload(bytearray(), batch._message))


# --- what the fake (`pairedbus.testing`) reads -------------------------------------------------------

_EPOCH_MS = 1_700_000_000_000  # 2023-11-14T22:13:20Z


def test_the_broker_annotation_keys_are_the_service_bus_wire_names_the_sdk_reads() -> None:
    assert sdk.ANNOTATION_SEQUENCE_NUMBER == b"x-opt-sequence-number"
    assert sdk.ANNOTATION_ENQUEUED_TIME == b"x-opt-enqueued-time"
    assert sdk.ANNOTATION_LOCKED_UNTIL == b"x-opt-locked-until"
    stamped = AmqpAnnotatedMessage(
        data_body=b"x",
        annotations={
            sdk.ANNOTATION_SEQUENCE_NUMBER: 7,
            sdk.ANNOTATION_ENQUEUED_TIME: _EPOCH_MS,
            sdk.ANNOTATION_LOCKED_UNTIL: _EPOCH_MS + 30_000,
        },
    )
    received = ServiceBusReceivedMessage.from_bytes(sdk.encode_message(stamped))  # the SDK's public decoding
    assert received.sequence_number == 7
    assert received.enqueued_time_utc == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
    assert received.locked_until_utc == datetime(2023, 11, 14, 22, 13, 50, tzinfo=UTC)


def _rich_message() -> AmqpAnnotatedMessage:
    return AmqpAnnotatedMessage(
        sequence_body=[[1, 2]],
        header={"priority": 3},
        properties={"message_id": "m-1", "group_id": "s-1"},
        application_properties={"k": "v"},
        annotations={b"custom": "v"},
        footer={b"f": 1},
        delivery_annotations={b"d": 2},
    )


def test_annotated_message_parts_are_the_public_parts_in_order() -> None:
    raw = _rich_message()
    parts = sdk.annotated_message_parts(raw)
    assert len(parts) == 10
    body_type, data_body, sequence_body, value_body, props, header, annotations, app, footer, delivery = parts
    assert body_type is raw.body_type is AmqpMessageBodyType.SEQUENCE
    assert (data_body, sequence_body, value_body) == (None, [[1, 2]], None)
    assert props is raw.properties and props.message_id == "m-1"
    assert header is raw.header and header.priority == 3
    assert annotations is raw.annotations and annotations == {b"custom": "v"}
    assert app is raw.application_properties and app == {"k": "v"}
    assert footer is raw.footer and footer == {b"f": 1}
    assert delivery is raw.delivery_annotations and delivery == {b"d": 2}
    data = sdk.annotated_message_parts(AmqpAnnotatedMessage(data_body=[b"a", b"b"]))
    assert data[:4] == (AmqpMessageBodyType.DATA, [b"a", b"b"], None, None)
    value = sdk.annotated_message_parts(AmqpAnnotatedMessage(value_body={"v": 1}))
    assert value[:4] == (AmqpMessageBodyType.VALUE, None, None, {"v": 1})


def test_encode_message_is_what_the_sdk_sends_and_what_it_decodes_back() -> None:
    raw = _rich_message()
    wire = sdk.encode_message(raw)
    assert isinstance(wire, bytes)
    assert len(wire) == PyamqpTransport.get_message_encoded_size(PyamqpTransport.to_outgoing_amqp_message(raw))
    received = ServiceBusReceivedMessage.from_bytes(wire)
    assert (list(received.body), received.message_id, received.session_id) == ([[1, 2]], "m-1", "s-1")
    assert received.application_properties == {b"k": b"v"}


def test_decode_message_reads_the_wire_with_the_brokers_delivery_count_and_annotations() -> None:
    wire = sdk.encode_message(_rich_message())
    decoded = sdk.decode_message(
        wire, delivery_count=3, annotations={sdk.ANNOTATION_SEQUENCE_NUMBER: 9, b"custom": "w"}
    )
    assert isinstance(decoded, AmqpAnnotatedMessage)
    assert decoded.body_type is AmqpMessageBodyType.SEQUENCE and list(decoded.body) == [[1, 2]]
    assert (decoded.header.delivery_count, decoded.header.priority) == (3, 3)
    assert decoded.annotations == {b"custom": "w", b"x-opt-sequence-number": 9}  # the broker's win
    assert decoded.properties.message_id == b"m-1"
    headerless = sdk.decode_message(
        sdk.encode_message(AmqpAnnotatedMessage(data_body=b"x")), delivery_count=2, annotations={}
    )
    assert headerless.header.delivery_count == 2 and list(headerless.body) == [b"x"]


def test_legacy_message_is_the_sdks_deprecated_view_of_the_message() -> None:
    raw = _rich_message()
    legacy = sdk.legacy_message(raw)
    assert type(legacy).__name__ == "LegacyMessage"
    assert legacy.encode_message() == sdk.encode_message(raw)
    assert legacy.properties.message_id == b"m-1"
    assert list(legacy.get_data()) == [[1, 2]]


def test_a_fake_batch_names_the_transport_a_real_batch_uses() -> None:
    assert ServiceBusMessageBatch(max_size_in_bytes=1024)._amqp_transport is sdk.PyamqpTransport
    assert sdk.PyamqpTransport.KIND == "pyamqp"


def test_the_connection_string_parser_returns_the_fields_the_fake_reads() -> None:
    key = sdk.parse_connection_string(
        "Endpoint=sb://contoso.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=c2VjcmV0;EntityPath=q1"
    )
    assert (key.fully_qualified_namespace, key.entity_path) == ("contoso.servicebus.windows.net", "q1")
    assert (key.shared_access_key_name, key.shared_access_key, key.shared_access_signature) == (
        "send",
        "c2VjcmV0",
        None,
    )
    sas = sdk.parse_connection_string(
        "Endpoint=sb://contoso.servicebus.windows.net/;SharedAccessSignature=SharedAccessSignature sr=x&sig=y&se=1"
    )
    assert (sas.fully_qualified_namespace, sas.entity_path) == ("contoso.servicebus.windows.net", None)
    assert sas.shared_access_signature == "SharedAccessSignature sr=x&sig=y&se=1"
    assert (sas.shared_access_key_name, sas.shared_access_key) == (None, None)


def test_runtime_properties_are_built_from_the_generated_descriptions() -> None:
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    stamps = {"created_at": when, "updated_at": when, "accessed_at": when}
    queue = sdk.queue_runtime_properties(
        "q1", message_count=6, message_count_details=sdk.message_count_details(2, 1, 3), size_in_bytes=10, **stamps
    )
    assert isinstance(queue, QueueRuntimeProperties)
    assert (queue.name, queue.total_message_count, queue.size_in_bytes) == ("q1", 6, 10)
    assert (queue.active_message_count, queue.dead_letter_message_count, queue.scheduled_message_count) == (2, 1, 3)
    assert (queue.transfer_message_count, queue.transfer_dead_letter_message_count) == (0, 0)
    assert (queue.created_at_utc, queue.updated_at_utc, queue.accessed_at_utc) == (when, when, when)
    topic = sdk.topic_runtime_properties(
        "t1", size_in_bytes=20, subscription_count=2, message_count_details=sdk.message_count_details(0, 0, 4), **stamps
    )
    assert isinstance(topic, TopicRuntimeProperties)
    assert (topic.name, topic.size_in_bytes, topic.subscription_count, topic.scheduled_message_count) == (
        "t1",
        20,
        2,
        4,
    )
    assert topic.created_at_utc == when
    sub = sdk.subscription_runtime_properties(
        "s1", message_count=5, message_count_details=sdk.message_count_details(4, 1, 0), **stamps
    )
    assert isinstance(sub, SubscriptionRuntimeProperties)
    assert (sub.name, sub.total_message_count, sub.active_message_count, sub.dead_letter_message_count) == (
        "s1",
        5,
        4,
        1,
    )
    assert sub.accessed_at_utc == when


def _private_sdk_imports(tree: ast.AST) -> list[str]:
    """`azure.servicebus` modules or names with a private part (`_x`) that `tree` imports (the
    package-wide walker of `tests/test_layering.py`, narrowed to azure-servicebus imports)."""
    return [
        f"line {read.line}: {read.name}"
        for read in private_reads(tree)
        if read.kind == "import" and read.name.startswith("azure.servicebus.")
    ]


def test_only_the_sdk_module_imports_private_azure_servicebus_modules() -> None:
    package = Path(sdk.__file__).parent
    offenders = {
        str(path.relative_to(package.parent)): hits
        for path in sorted(package.rglob("*.py"))
        if path != Path(sdk.__file__)
        for hits in [_private_sdk_imports(parse_source(path.read_text(), str(path)))]
        if hits
    }
    assert not offenders, offenders
    # the walk sees what it must: sdk.py itself, and function-level and TYPE_CHECKING imports
    assert _private_sdk_imports(parse_source(Path(sdk.__file__).read_text()))
    nested = "def f():\n    from azure.servicebus._pyamqp import _decode\nif T:\n    import azure.servicebus.aio._x\n"
    assert len(_private_sdk_imports(ast.parse(nested))) == 2
    assert not _private_sdk_imports(ast.parse("from azure.servicebus.aio import ServiceBusSession\nfrom . import _x"))


def test_rest_names_are_the_arm_json_names_of_the_generated_models() -> None:
    from azure.mgmt.servicebus import models

    assert version("azure-mgmt-servicebus") == sdk.MGMT_SDK_VERSION_CHECKED
    queue = sdk.rest_names(models.SBQueueProperties)
    # ARM's names (azure-rest-api-specs, servicebus Queue resource): camelCase under "properties"
    assert queue["lock_duration"] == "lockDuration"
    assert queue["max_size_in_megabytes"] == "maxSizeInMegabytes"
    assert queue["requires_duplicate_detection"] == "requiresDuplicateDetection"
    assert queue["forward_dead_lettered_messages_to"] == "forwardDeadLetteredMessagesTo"
    assert sdk.rest_names(models.SBTopicProperties)["enable_partitioning"] == "enablePartitioning"
    assert sdk.rest_names(models.SBSubscriptionProperties)["max_delivery_count"] == "maxDeliveryCount"


def _fake_private_names(cls: type) -> set[str]:
    """Single-underscore names a fake class defines, or assigns on `self` in its methods, itself
    or through the fake's own bases (the shared core of a sync/aio twin)."""
    names: set[str] = set()
    for klass in (k for k in cls.__mro__ if k.__module__.startswith("pairedbus.testing")):
        names.update(vars(klass))
        for node in ast.walk(parse_source(textwrap.dedent(inspect.getsource(klass)))):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                if isinstance(node.value, ast.Name) and node.value.id == "self":
                    names.add(node.attr)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def _sdk_names(instance: object) -> set[str]:
    """What an SDK object has: its instance fields and its azure classes' attributes."""
    classes = [k for k in type(instance).__mro__ if k.__module__.startswith("azure.")]
    return set(vars(instance)).union(*(vars(k) for k in classes))


def test_the_private_fields_the_fakes_subclasses_set_are_the_sdks() -> None:
    from azure.servicebus import ServiceBusSession as SyncSession
    from azure.servicebus.aio import ServiceBusSession as AioSession

    from pairedbus.testing.messages import FakeMessageBatch, FakeReceivedMessage
    from pairedbus.testing.servicebus_session import ServiceBusSession, SyncServiceBusSession

    received = ServiceBusReceivedMessage.from_bytes(sdk.encode_message(AmqpAnnotatedMessage(data_body=b"x")))
    batch = ServiceBusMessageBatch(max_size_in_bytes=1024)
    cases = [
        (FakeReceivedMessage, received, sdk.RECEIVED_MESSAGE_FIELDS),
        (FakeMessageBatch, batch, sdk.MESSAGE_BATCH_FIELDS),
        (ServiceBusSession, AioSession("s-1", None), sdk.SESSION_FIELDS),  # type: ignore[arg-type]
        (ServiceBusSession, SyncSession("s-1", None), sdk.SESSION_FIELDS),  # type: ignore[arg-type]
        (SyncServiceBusSession, SyncSession("s-1", None), sdk.SESSION_FIELDS),  # type: ignore[arg-type]
    ]
    for fake, real, fields in cases:
        sdk_names = _sdk_names(real)
        assert fields <= sdk_names, (type(real).__name__, sorted(fields - sdk_names))  # the SDK renamed one
        overridden = _fake_private_names(fake) & sdk_names
        assert overridden == fields, (fake.__name__, sorted(overridden ^ fields))  # list a new override in sdk.py


# --- Pulumi's private names (an extra of the package; installed where these tests run) ------------


def test_the_installed_pulumi_sdks_are_the_ones_this_module_was_checked_against() -> None:
    assert (version("pulumi"), version("pulumi-policy")) == (
        sdk.PULUMI_VERSION_CHECKED,
        sdk.PULUMI_POLICY_VERSION_CHECKED,
    )


def test_pulumi_sync_await_runs_a_coroutine_to_its_result_from_synchronous_code() -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert sdk.pulumi_sync_await(answer()) == 42


def test_a_secret_is_recognised_by_pulumis_wire_signature() -> None:
    # The engine's wire constants (pulumi/sdk/go/common/resource/sig): the signature key, a secret's
    # signature, and (last) a resource reference's, which is no secret.
    wire_secret = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": "hunter2"}
    assert sdk.is_pulumi_secret(wire_secret)
    assert not sdk.is_pulumi_secret({"value": "hunter2"})
    assert not sdk.is_pulumi_secret({"4dabf18193072939515e22adb298388d": "5cf8f73096256a8f31e491e813e4eb8e"})


@pytest.mark.parametrize("args_class", ["ResourceValidationArgs", "StackValidationArgs"])
def test_not_applicable_raises_the_class_the_gate_skips(args_class: str) -> None:
    import pulumi_policy

    with pytest.raises(sdk.policy_not_applicable_error()):
        getattr(pulumi_policy, args_class).not_applicable(None, "a Standard namespace")


async def _cancelled_as_its_read_completes(wait_for: Any) -> asyncio.Task[Any]:
    """A task in `wait_for(read, 10)` cancelled in the same turn of the loop its read completed in (the task
    is woken, has not run yet): what the SDK's frame reads met whenever a syphon was cancelled mid-receive."""
    read: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(wait_for(read, 10))
    await asyncio.sleep(0)  # the task now waits on its read
    read.set_result("frame")
    task.cancel()
    await asyncio.wait({task})
    return task


@pytest.mark.parametrize("module", sdk.WAIT_FOR_CALLERS)
async def test_the_sdks_wait_for_keeps_a_cancellation_that_comes_as_its_read_completes(module: str) -> None:
    """Python 3.11's asyncio.wait_for returned "frame" and dropped the cancellation (CPython gh-86296): the
    SDK's aio modules read every frame through it, and cancelled syphons ran on for seconds (issue 34)."""
    imported = importlib.import_module(module)
    sdk.keep_cancellations()
    sdk.keep_cancellations()  # idempotent
    assert (await _cancelled_as_its_read_completes(imported.asyncio.wait_for)).cancelled()
    assert imported.asyncio.sleep is asyncio.sleep  # the rest of asyncio as it is
    assert asyncio.wait_for is not sdk.wait_for  # the process's own asyncio is left alone


async def test_the_kept_wait_for_still_times_out_and_returns() -> None:
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    with pytest.raises(TimeoutError):
        await sdk.wait_for(never, 0.01)
    assert never.cancelled()
    with pytest.raises(TimeoutError):
        await sdk.wait_for(asyncio.sleep(1), 0)
    assert await sdk.wait_for(asyncio.sleep(0, "done"), None) == "done"
    assert await sdk.wait_for(asyncio.sleep(0, "done"), 5) == "done"


class _Token:
    """A bearer token the emulator's `$cbs` accepts (tests/emulator/test_amqp_over_tls.py)."""

    async def get_token(self, *scopes: str, **kwargs: Any) -> Any:
        from azure.core.credentials import AccessToken

        return AccessToken("fake-entra-token", 2**31 - 1)

    async def close(self) -> None:
        pass


async def test_one_ssl_context_verifies_every_connection_of_a_client_against_its_bundle_only() -> None:
    """`amqp_ssl_context` is what the SDK's connections would build each: over an emulator's TLS port a
    sender and a receiver of one client (two connections) verify the emulator's certificate with the
    context built from its CA, and the context built from certifi's bundle (the SDK's default) refuses it."""
    from azure.servicebus.aio import ServiceBusClient

    from pairedbus.emulator import Emulator
    from pairedbus.emulator.redirect import amqps_to

    async with Emulator(["primary"]) as emulator:
        emulator.namespace("primary").create_queue("orders")
        assert emulator.ca_file is not None
        trusted = sdk.amqp_ssl_context(str(emulator.ca_file))
        assert trusted is sdk.amqp_ssl_context(str(emulator.ca_file))  # built once for the bundle
        assert trusted.check_hostname
        namespace = f"localhost:{emulator.broker('primary').port}"
        with amqps_to(emulator.broker("primary").port):
            async with ServiceBusClient(namespace, _Token(), ssl_context=trusted, retry_total=0) as client:
                async with client.get_queue_sender("orders") as sender:
                    await sender.send_messages(ServiceBusMessage("over tls"))
                async with client.get_queue_receiver("orders") as receiver:
                    received = await receiver.receive_messages(max_message_count=1, max_wait_time=5)
                    assert [str(m) for m in received] == ["over tls"]
                    await receiver.complete_message(received[0])
            async with ServiceBusClient(
                namespace, _Token(), ssl_context=sdk.amqp_ssl_context(), retry_total=0
            ) as client:
                with pytest.raises(ServiceBusConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
                    async with client.get_queue_sender("orders") as sender:
                        await sender.send_messages(ServiceBusMessage("refused"))
        assert emulator.namespace("primary").queue("orders").message_counts()["active"] == 0


async def test_completes_by_lock_token_on_a_shut_down_receiver_fail_as_the_sdk_would_and_open_nothing() -> None:
    """A receiver whose handler the SDK shut down: no management request is made (opening a handler here would
    race the receiver's own use of it); a message whose disposition never went out gets the SDK's own
    shut-down error (the syphon's `Failure.SHUT_DOWN`: not applied, no peek), one whose disposition went out
    unanswered stays unconfirmed (it may have been applied)."""
    from pairedbus.pairing.failures import Failure, failure_of

    opened: list[str] = []

    async def settle_via_mgmt(*_args: Any) -> None:
        opened.append("mgmt")

    receiver = SimpleNamespace(
        _running=False, _handler=None, _amqp_transport=PyamqpTransport, _settle_message_via_mgmt_link=settle_via_mgmt
    )
    messages = [SimpleNamespace(lock_token="a"), SimpleNamespace(lock_token="b")]
    results: list[Exception | None] = [None, None]
    await sdk._by_lock_token(receiver, messages, [0, 1], {1}, results, 5.0)
    assert opened == []
    assert failure_of(results[0]) is Failure.SHUT_DOWN
    assert isinstance(results[1], azure.servicebus.exceptions.ServiceBusError) and "may have been applied" in str(
        results[1]
    )


@pytest.mark.parametrize(
    ("disposition", "operation", "reason", "description"),
    [
        (sdk.COMPLETE, "complete", None, None),
        (sdk.ABANDON, "abandon", None, None),
        (sdk.dead_letter("TooBig", "refused for good"), "dead-letter", "TooBig", "refused for good"),
        (sdk.dead_letter(None, None), "dead-letter", None, None),
    ],
)
async def test_a_disposition_sends_what_the_sdks_own_settlement_sends(
    disposition: sdk.Disposition, operation: str, reason: str | None, description: str | None
) -> None:
    """The receive link's delivery state and the management request's fields (`disposition-status`, the
    dead-letter reason and description) are those the SDK's own settlement builds for the same call: its
    transport's `settle_message_via_receiver_link`, and its `_settle_message` falling back by lock token."""
    from azure.servicebus._pyamqp.outcomes import Accepted, Modified, Rejected
    from azure.servicebus.aio import ServiceBusReceiver

    on_link: list[Any] = []

    def settle_messages(_delivery_id: int, _tag: bytes, outcome: str, **kwargs: Any) -> None:
        kwargs.pop("await_outcome"), kwargs.pop("outcome_timeout")
        states = {"accepted": Accepted, "modified": Modified, "rejected": Rejected}
        on_link.append(states[outcome](**kwargs))

    message = SimpleNamespace(_delivery_id=1, _delivery_tag=b"t", _is_deferred_message=False, lock_token="token")
    PyamqpTransport.settle_message_via_receiver_link(
        SimpleNamespace(settle_messages=settle_messages), message, operation, reason, description
    )
    assert on_link == [disposition.link_state()]

    by_token: list[tuple[Any, ...]] = []

    async def refused(*_args: Any, **_kwargs: Any) -> None:
        raise RuntimeError("unconfirmed: the SDK falls back by lock token")

    async def via_mgmt(term: str, tokens: list[str], dead_letter_details: Any = None) -> None:
        by_token.append((term, dead_letter_details))

    receiver = SimpleNamespace(
        _amqp_transport=SimpleNamespace(settle_message_via_receiver_link_async=refused),
        _handler=None,
        _await_settlement_outcome=True,
        _config=SimpleNamespace(timeout=1.0),
        _settle_message_via_mgmt_link=via_mgmt,
    )
    await ServiceBusReceiver._settle_message(receiver, message, operation, reason, description)  # type: ignore[arg-type]
    assert by_token == [disposition.by_lock_token()]


def test_a_disposition_is_one_the_sdk_settles_by_lock_token() -> None:
    with pytest.raises(ValueError, match="no settlement 'defer'"):
        sdk.Disposition("defer")
