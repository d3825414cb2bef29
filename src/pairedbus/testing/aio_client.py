"""The fake `azure.servicebus.aio` data plane, by the names the SDK uses (see client.py, sender.py,
receiver.py and session.py, where the classes live with their sync twins on shared cores)."""

from pairedbus.testing.client import ServiceBusClient
from pairedbus.testing.handler import DEFAULT_RECEIVE_WAIT_SECONDS, current_world
from pairedbus.testing.receiver import ServiceBusReceiver
from pairedbus.testing.sender import ServiceBusSender
from pairedbus.testing.servicebus_session import ServiceBusSession

__all__ = [
    "DEFAULT_RECEIVE_WAIT_SECONDS",
    "ServiceBusClient",
    "ServiceBusReceiver",
    "ServiceBusSender",
    "ServiceBusSession",
    "current_world",
]
