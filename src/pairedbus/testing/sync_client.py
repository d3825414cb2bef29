"""The fake synchronous `azure.servicebus` data plane, by the names the SDK uses: the sync twins
of the aio classes (both on shared cores and one world; a blocking receive blocks its thread
on the world's `arrival` condition until a message arrives, the receiver closes or the deadline)."""

from pairedbus.servicebus.clock import to_datetime
from pairedbus.testing.client import SyncServiceBusClient as ServiceBusClient
from pairedbus.testing.handler import DEFAULT_RECEIVE_WAIT_SECONDS
from pairedbus.testing.receiver import SyncServiceBusReceiver as ServiceBusReceiver
from pairedbus.testing.sender import SyncServiceBusSender as ServiceBusSender
from pairedbus.testing.servicebus_session import SyncServiceBusSession as ServiceBusSession

__all__ = [
    "DEFAULT_RECEIVE_WAIT_SECONDS",
    "ServiceBusClient",
    "ServiceBusReceiver",
    "ServiceBusSender",
    "ServiceBusSession",
    "to_datetime",
]
