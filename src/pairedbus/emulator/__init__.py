"""A Service Bus emulator on the wire: the model of `pairedbus.testing` served over AMQP 1.0 on
loopback ports, so that the unmodified SDK (Python, Node, any other) runs its own transport,
retries, error mapping and settlement against it. See docs/emulator.md."""

from pairedbus.emulator.emulator import Emulator
from pairedbus.emulator.faults import WireFaults
from pairedbus.emulator.server import DEFAULT_KEY, DEFAULT_KEY_NAME, Broker

__all__ = ["DEFAULT_KEY", "DEFAULT_KEY_NAME", "Broker", "Emulator", "WireFaults"]
