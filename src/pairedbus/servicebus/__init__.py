"""Service Bus itself, as one model both fakes serve: namespaces and their entities (queues, topics,
subscriptions and rules), the message store (sequence numbers, locks, deferral, scheduling, TTL, max
delivery count, dead-lettering, partitions, duplicate detection, forwarding), sessions and their
locks, settlement, entity properties, filters, the clock and injected faults.

Front-ends: `pairedbus.testing` (in process: SDK-shaped clients patched over azure-servicebus) and
`pairedbus.emulator` (on the wire: AMQP 1.0 and the Atom admin plane). The model knows neither.
"""

from pairedbus.servicebus.clock import Clock
from pairedbus.servicebus.entities import (
    DEAD_LETTER_REASON_MAX_DELIVERY,
    DEAD_LETTER_REASON_TTL,
    OperationCounts,
    Queue,
    Subscription,
    Topic,
)
from pairedbus.servicebus.link import Link
from pairedbus.servicebus.world import Namespace, ServiceBusWorld, normalize_fqdn

__all__ = [
    "DEAD_LETTER_REASON_MAX_DELIVERY",
    "DEAD_LETTER_REASON_TTL",
    "Clock",
    "Link",
    "Namespace",
    "OperationCounts",
    "Queue",
    "ServiceBusWorld",
    "Subscription",
    "Topic",
    "normalize_fqdn",
]
