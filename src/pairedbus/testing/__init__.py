"""A moto-style fake of Azure Service Bus for tests: `with mock_servicebus() as world:`.

See docs/testing.md. The in-process front-end on the Service Bus model (`pairedbus.servicebus`): it replaces `ServiceBusClient` and `ServiceBusAdministrationClient`
(sync and aio) with in-memory namespaces keyed by fully qualified namespace.
"""

from pairedbus.servicebus import (
    DEAD_LETTER_REASON_MAX_DELIVERY,
    DEAD_LETTER_REASON_TTL,
    Clock,
    Namespace,
    OperationCounts,
    Queue,
    ServiceBusWorld,
    Subscription,
    Topic,
    normalize_fqdn,
)
from pairedbus.testing.messages import FakeReceivedMessage, received_application_properties
from pairedbus.testing.patching import ServiceBusPatch, active_world, mock_servicebus

__all__ = [
    "DEAD_LETTER_REASON_MAX_DELIVERY",
    "DEAD_LETTER_REASON_TTL",
    "Clock",
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
    "normalize_fqdn",
    "received_application_properties",
]
