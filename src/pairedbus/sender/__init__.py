"""The failover sender: send availability over a paired namespace (paired-namespaces.md)."""

from pairedbus.sender.client import PairedNamespaceClient
from pairedbus.sender.errors import SessionPartitionKeyMismatchError, starts_failover_clock
from pairedbus.sender.options import SendAvailabilityOptions
from pairedbus.sender.sender import PairedSender

__all__ = [
    "PairedNamespaceClient",
    "PairedSender",
    "SendAvailabilityOptions",
    "SessionPartitionKeyMismatchError",
    "starts_failover_clock",
]
