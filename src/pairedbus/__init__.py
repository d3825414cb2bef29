"""pairedbus: Azure Service Bus paired namespaces for send availability."""

__version__ = "0.1.0"
