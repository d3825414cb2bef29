"""Binds the real client classes at import time, before any patch starts (like code under test)."""

from azure.servicebus import ServiceBusClient as SyncServiceBusClient
from azure.servicebus.aio import ServiceBusClient
from azure.servicebus.aio.management import ServiceBusAdministrationClient

__all__ = ["ServiceBusAdministrationClient", "ServiceBusClient", "SyncServiceBusClient"]
