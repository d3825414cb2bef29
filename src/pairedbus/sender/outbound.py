"""Rules every outbound message meets before its first send, on any path.

- A message without a message id gets a unique one (uuid4): if a send is repeated (a timeout
  whose message was in fact stored, a move the syphon redoes), the destination's duplicate
  detection recognises it.
- SessionId and PartitionKey, when both set, must be identical (partitioning.md).

Both read the raw AMQP properties: the healthy path pays an attribute read, not a decode.

Partition keys (partitioning.md): the sender sets no partition key and no session id of its own.
The message id it assigns is a partition key only on an entity with duplicate detection and
only for a message with neither session id nor partition key; and that is exactly where it is
needed, since duplicate detection is what removes the second copy of an ambiguous send or of a
move the syphon redoes. The trade-off, to know: on a partitioned entity with duplicate detection
every such message is pinned to the fragment its id hashes to, so while that fragment is down
its sends fail (retryably: the failover clock runs, and the message is parked) instead of going
to another fragment. An entity that prefers availability to de-duplication turns duplicate
detection off; the sender's ids then pin nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from azure.servicebus import ServiceBusMessage

from pairedbus.sender.errors import SessionPartitionKeyMismatchError


def new_message_id() -> str:
    return str(uuid.uuid4())


def prepare(message: object) -> bool:
    """Give the message an id if it has none and check its partition key; True if it has a
    session id (so its entity requires sessions)."""
    if not isinstance(message, ServiceBusMessage):
        raise TypeError(f"the failover sender sends ServiceBusMessage objects, got {type(message).__name__}")
    properties = message.raw_amqp_message.properties
    if properties is None or properties.message_id is None:
        message.message_id = new_message_id()
        properties = message.raw_amqp_message.properties
    if properties is None or properties.group_id is None:  # setting message_id made the properties
        return False
    session_id = message.session_id
    partition_key = message.partition_key
    if partition_key is not None and partition_key != session_id:
        raise SessionPartitionKeyMismatchError(message.message_id, session_id, partition_key)
    return True


def prepare_all(messages: Iterable[ServiceBusMessage]) -> bool:
    """`prepare` each message (all of them, before any is sent); True if any has a session id."""
    has_session = False
    for message in messages:
        has_session = prepare(message) or has_session
    return has_session
