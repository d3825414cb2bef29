"""What the service answers each refusal with, in its own vocabulary: the AMQP condition (on a refused
attach or transfer, a detach, a `$management` reply) and the `$management` status.

One table for both front-ends: the wire sends it (`pairedbus.emulator.conditions`); the in-process
front-end has the SDK's own transport make the exception from the same condition
(`pairedbus.testing.errors`), so the two cannot drift apart (`tests/testing/test_front_ends_agree.py`
measures the result against the unmodified SDK). The conditions are the service's (../shared/wire.md,
"Error conditions"), not an SDK's.
"""

from __future__ import annotations

from typing import NamedTuple

from pairedbus.servicebus.errors import REFUSED, ErrorKind


class Answer(NamedTuple):
    condition: str
    #: The status of a `$management` reply carrying the refusal.
    status: int


_DETACH_FORCED = "amqp:link:detach-forced"

#: The model's kind -> the service's answer. Kinds the management plane refuses over HTTP
#: (RESOURCE_NOT_FOUND, RESOURCE_EXISTS) are not here: that plane's statuses are its own.
ANSWERS: dict[ErrorKind, Answer] = {
    ErrorKind.ENTITY_NOT_FOUND: Answer("amqp:not-found", 404),
    # A strict world's unknown host: answered as a lost connection (a real DNS failure is a connection
    # error too: ServiceBusConnectionError, retryable).
    ErrorKind.NAMESPACE_NOT_FOUND: Answer(_DETACH_FORCED, 500),
    ErrorKind.ENTITY_DISABLED: Answer("com.microsoft:entity-disabled", 400),
    ErrorKind.SIZE_EXCEEDED: Answer("amqp:link:message-size-exceeded", 413),
    ErrorKind.QUOTA_EXCEEDED: Answer("amqp:resource-limit-exceeded", 403),
    ErrorKind.NAMESPACE_QUOTA_EXCEEDED: Answer(REFUSED, 400),
    ErrorKind.SERVER_BUSY: Answer("com.microsoft:server-busy", 503),
    ErrorKind.LOCK_LOST: Answer("com.microsoft:message-lock-lost", 410),
    ErrorKind.SESSION_LOCK_LOST: Answer("com.microsoft:session-lock-lost", 410),
    ErrorKind.SESSION_CANNOT_BE_LOCKED: Answer("com.microsoft:session-cannot-be-locked", 410),
    ErrorKind.MESSAGE_NOT_FOUND: Answer("com.microsoft:message-not-found", 404),
    ErrorKind.ALREADY_SETTLED: Answer("com.microsoft:message-lock-lost", 410),
    ErrorKind.TIMEOUT: Answer("com.microsoft:timeout", 408),
    ErrorKind.UNAUTHORIZED: Answer("amqp:unauthorized-access", 401),
    ErrorKind.CONNECTION_LOST: Answer(_DETACH_FORCED, 500),
    ErrorKind.BAD_REQUEST: Answer(REFUSED, 400),
    ErrorKind.INVALID_OPERATION: Answer(REFUSED, 400),
}

#: A create of a name already taken, answered on `$management`.
ALREADY_EXISTS = Answer("com.microsoft:entity-already-exists", 409)
