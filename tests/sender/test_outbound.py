import pytest
from azure.servicebus import ServiceBusMessage

from pairedbus.sender.errors import SessionPartitionKeyMismatchError
from pairedbus.sender.outbound import prepare, prepare_all


def test_a_message_without_id_gets_a_unique_one_and_an_id_is_never_replaced():
    first, second = ServiceBusMessage(b"a"), ServiceBusMessage(b"b")
    # azure-servicebus >= 7.15 gives every new message a uuid4 id itself: take it away, so that `prepare` must.
    first.message_id = second.message_id = None
    assert first.message_id is None and second.message_id is None
    prepare_all([first, second])
    assert first.message_id and second.message_id and first.message_id != second.message_id
    kept = ServiceBusMessage(b"c", message_id="order-42")
    prepare(kept)
    assert kept.message_id == "order-42"


def test_session_messages_are_reported():
    assert prepare(ServiceBusMessage(b"a", session_id="s1")) is True
    assert prepare(ServiceBusMessage(b"a")) is False
    assert prepare_all([ServiceBusMessage(b"a"), ServiceBusMessage(b"b", session_id="s")]) is True


def test_matching_session_id_and_partition_key_pass():
    assert prepare(ServiceBusMessage(b"a", session_id="s", partition_key="s"))


def test_different_session_id_and_partition_key_are_refused():
    message = ServiceBusMessage(b"a", partition_key="p")
    message.session_id = "s"  # the SDK only checks when partition_key is set second
    with pytest.raises(SessionPartitionKeyMismatchError):
        prepare(message)


def test_only_service_bus_messages_are_accepted():
    with pytest.raises(TypeError, match="ServiceBusMessage"):
        prepare({"body": "x"})  # type: ignore[arg-type]


def test_the_healthy_paths_property_read_is_the_sdks_public_one():
    # `send_messages` reads a message's AMQP properties through `sdk.amqp_properties` (a private
    # field, for speed): it must be what the public `raw_amqp_message.properties` gives.
    from pairedbus import sdk

    message = ServiceBusMessage(b"a", message_id="m-1", session_id="s-1")
    assert sdk.amqp_properties(message) is message.raw_amqp_message.properties
    assert (sdk.amqp_properties(message).message_id, sdk.amqp_properties(message).group_id) == ("m-1", "s-1")
    message.raw_amqp_message.properties = None
    assert sdk.amqp_properties(message) is None


def test_a_message_is_sendable_as_is_exactly_when_it_has_an_id_and_no_session_id():
    # `send_messages` skips `prepare` when `sdk.sendable_as_is` (private fields, for speed) says so:
    # it must answer what the public `raw_amqp_message.properties` says.
    from pairedbus import sdk

    assert sdk.sendable_as_is(ServiceBusMessage(b"a", message_id="m-1")) is True
    assert sdk.sendable_as_is(ServiceBusMessage(b"a", message_id="m-1", session_id="s-1")) is False
    unnamed = ServiceBusMessage(b"a")  # azure-servicebus 7.15's constructor gives it a uuid4 id...
    assert sdk.sendable_as_is(unnamed) is True
    unnamed.message_id = None  # ...which the caller may take away
    assert sdk.sendable_as_is(unnamed) is False
    bare = ServiceBusMessage(b"a", message_id="m-1")
    bare.raw_amqp_message.properties = None
    assert sdk.sendable_as_is(bare) is False
    grouped = ServiceBusMessage(b"a", message_id="m-1")
    grouped.raw_amqp_message.properties.group_id = "g-1"  # a session id set on the raw message
    assert sdk.sendable_as_is(grouped) is False
