"""`pairedbus.pairing.ports`: the SDK's aio classes and the fake's satisfy the runtime's ports.

Statically: `_the_classes_satisfy_the_ports` is never called; tests/test_types.py's strict mypy run
checks this file, and an assignment of a class that lacks a member, or has one of another shape,
fails it. At run time: every member a port names exists on each class, a coroutine function where
the port's is one (mypy cannot see a sync method whose return type matches an async one's)."""

from __future__ import annotations

import inspect
from typing import Protocol, assert_type

import pytest
from azure.servicebus import ServiceBusMessage, ServiceBusReceivedMessage
from azure.servicebus import aio as sdk_aio

from pairedbus.pairing import ports
from pairedbus.testing import client as fake_client
from pairedbus.testing import receiver as fake_receiver
from pairedbus.testing import sender as fake_sender
from pairedbus.testing.messages import FakeReceivedMessage


def _received_by(client: ports.Client[ports.M], receiver: ports.Receiver[ports.M]) -> list[ports.M]:
    """What `client`'s and `receiver`'s messages are: solved by mypy from the arguments' classes. (A
    written `Receiver[FakeReceivedMessage]` would be checked against the bound before mypy has inferred
    the fake message's generated properties, and fail.)"""
    return []


def _the_classes_satisfy_the_ports(
    sdk_client: sdk_aio.ServiceBusClient,
    sdk_receiver: sdk_aio.ServiceBusReceiver,
    sdk_sender: sdk_aio.ServiceBusSender,
    sdk_message: ServiceBusReceivedMessage,
    fake: fake_client.ServiceBusClient,
    fakes_receiver: fake_receiver.ServiceBusReceiver,
    fakes_sender: fake_sender.ServiceBusSender,
    fakes_message: FakeReceivedMessage,
    outgoing: ServiceBusMessage,
) -> None:
    client: ports.Client[ServiceBusReceivedMessage] = sdk_client
    sender: ports.Sender = sdk_sender
    entity_sender: ports.EntitySender = sdk_sender
    sender_client: ports.SenderClient = sdk_client
    message: ports.ReceivedMessage = sdk_message
    assert_type(_received_by(sdk_client, sdk_receiver), list[ServiceBusReceivedMessage])
    fake_sender_port: ports.Sender = fakes_sender
    fake_entity_sender: ports.EntitySender = fakes_sender
    fake_sender_client: ports.SenderClient = fake
    fake_message_port: ports.ReceivedMessage = fakes_message
    assert_type(_received_by(fake, fakes_receiver), list[FakeReceivedMessage])
    # what is parked is restored from a message the sender built: it is restorable too
    restorable: ports.Restorable = outgoing
    del client, sender, entity_sender, sender_client, message, fake_sender_port, fake_entity_sender
    del fake_sender_client, fake_message_port, restorable


def _members(port: type) -> dict[str, object]:
    """The members `port` and the ports it extends declare (their own names, not `Protocol`'s)."""
    members: dict[str, object] = {}
    for klass in reversed(port.__mro__):
        if klass is object or klass is Protocol or not getattr(klass, "_is_protocol", False):
            continue
        for name, value in vars(klass).items():
            if not name.startswith("_") or name in {"__aenter__", "__aexit__"}:
                members[name] = value
    return members


PAIRS = [
    (ports.Client, sdk_aio.ServiceBusClient),
    (ports.Client, fake_client.ServiceBusClient),
    (ports.Receiver, sdk_aio.ServiceBusReceiver),
    (ports.Receiver, fake_receiver.ServiceBusReceiver),
    (ports.Sender, sdk_aio.ServiceBusSender),
    (ports.Sender, fake_sender.ServiceBusSender),
    (ports.EntitySender, sdk_aio.ServiceBusSender),
    (ports.EntitySender, fake_sender.ServiceBusSender),
    (ports.SenderClient, sdk_aio.ServiceBusClient),
    (ports.SenderClient, fake_client.ServiceBusClient),
    (ports.ReceivedMessage, ServiceBusReceivedMessage),
    (ports.ReceivedMessage, FakeReceivedMessage),
    (ports.Restorable, ServiceBusMessage),
]


@pytest.mark.parametrize(("port", "klass"), PAIRS, ids=lambda v: f"{v.__module__}.{v.__qualname__}")
def test_every_member_of_the_port_is_on_the_class_in_its_kind(port: type, klass: type) -> None:
    members = _members(port)
    assert members, f"{port.__qualname__} names no member"
    for name, declared in members.items():
        assert hasattr(klass, name), f"{klass.__qualname__} lacks {name}"
        actual = inspect.getattr_static(klass, name)
        if isinstance(declared, property):
            assert isinstance(actual, property), f"{klass.__qualname__}.{name} is not a property"
        else:
            assert inspect.iscoroutinefunction(declared) == inspect.iscoroutinefunction(actual), (
                f"{klass.__qualname__}.{name}: async in the port, sync here (or the reverse)"
            )


def test_the_member_check_tells_a_class_that_lacks_one() -> None:
    class HalfASender:
        async def send_messages(self) -> None: ...
        async def close(self) -> None: ...

    with pytest.raises(AssertionError, match="lacks create_message_batch"):
        test_every_member_of_the_port_is_on_the_class_in_its_kind(ports.Sender, HalfASender)

    class SyncSender:
        def create_message_batch(self) -> None: ...
        async def send_messages(self) -> None: ...
        async def close(self) -> None: ...

    with pytest.raises(AssertionError, match="async in the port"):
        test_every_member_of_the_port_is_on_the_class_in_its_kind(ports.Sender, SyncSender)
