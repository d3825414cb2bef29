"""A moto-style fake of Azure Service Bus for tests: `with mock_servicebus() as world:`.

See docs/testing.md. The in-process front-end on the Service Bus model (`pairedbus.servicebus`): it replaces `ServiceBusClient` and `ServiceBusAdministrationClient`
(sync and aio) with in-memory namespaces keyed by fully qualified namespace.
"""

from pairedbus.servicebus import (
    Namespace,
    OperationCounts,
    Queue,
    ServiceBusWorld,
    Subscription,
    Topic,
)
from pairedbus.testing.messages import FakeReceivedMessage, received_application_properties
from pairedbus.testing.patching import ServiceBusPatch, active_world, mock_servicebus

__all__ = [
    "FakeReceivedMessage",
    "Namespace",
    "OperationCounts",
    "Queue",
    "ServiceBusPatch",
    "ServiceBusWorld",
    "Subscription",
    "Topic",
    "active_world",
    "mock_servicebus",
    "received_application_properties",
]
