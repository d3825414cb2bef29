"""A moto-style fake of Azure Service Bus for tests: `with mock_servicebus() as world:`.

See docs/testing.md. The fake replaces `ServiceBusClient` and `ServiceBusAdministrationClient`
(sync and aio) with in-memory namespaces keyed by fully qualified namespace.
"""

from pairedbus.testing.clock import Clock
from pairedbus.testing.entities import (
    DEAD_LETTER_REASON_MAX_DELIVERY,
    DEAD_LETTER_REASON_TTL,
    OperationCounts,
    Queue,
    Subscription,
    Topic,
)
from pairedbus.testing.messages import FakeReceivedMessage, received_application_properties
from pairedbus.testing.patching import ServiceBusPatch, active_world, mock_servicebus
from pairedbus.testing.world import Namespace, ServiceBusWorld, normalize_fqdn

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
