"""The AMQP error conditions the broker sends, in one place.

The model raises the exception the in-process front-end hands a caller; on the wire the broker
sends the condition the service sends for the same event instead, and the client's SDK maps it
back to its own exception (../shared/wire.md, "Error conditions"). So the in-process fault
vocabulary (`world.fail(..., ServiceBusServerBusyError)`) reaches a wire client as the condition
Service Bus would send.
"""

from __future__ import annotations

from typing import Any

from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.servicebus.exceptions import (
    MessageAlreadySettled,
    MessageLockLostError,
    MessageNotFoundError,
    MessageSizeExceededError,
    MessagingEntityDisabledError,
    MessagingEntityNotFoundError,
    OperationTimeoutError,
    ServiceBusAuthenticationError,
    ServiceBusAuthorizationError,
    ServiceBusConnectionError,
    ServiceBusQuotaExceededError,
    ServiceBusServerBusyError,
    SessionCannotBeLockedError,
    SessionLockLostError,
)

from pairedbus.emulator.codec import Described, Symbol, ULong
from pairedbus.testing.errors import REFUSED

__all__ = [
    "AUTH_FAILED",
    "DEAD_LETTER",
    "DECODE_ERROR",
    "DETACH_FORCED",
    "INTERNAL_ERROR",
    "NOT_FOUND",
    "SERVER_BUSY",
    "condition_of",
    "error_fields",
    "status_of",
]

NOT_FOUND = "amqp:not-found"
SERVER_BUSY = "com.microsoft:server-busy"
AUTH_FAILED = "com.microsoft:auth-failed"
UNAUTHORIZED = "amqp:unauthorized-access"
DETACH_FORCED = "amqp:link:detach-forced"
DECODE_ERROR = "amqp:decode-error"
INTERNAL_ERROR = "amqp:internal-error"
DEAD_LETTER = "com.microsoft:dead-letter"
CONNECTION_FORCED = "amqp:connection:forced"
#: The descriptor of an AMQP error (part 2, 2.8.14).
ERROR_CODE = 0x1D

#: Most specific first: an exception takes the first row its class is an instance of.
_CONDITIONS: tuple[tuple[type[BaseException], str, int], ...] = (
    (MessagingEntityNotFoundError, NOT_FOUND, 404),
    (MessagingEntityDisabledError, "com.microsoft:entity-disabled", 400),
    (MessageSizeExceededError, "amqp:link:message-size-exceeded", 413),
    (ServiceBusQuotaExceededError, "amqp:resource-limit-exceeded", 403),
    (ServiceBusServerBusyError, SERVER_BUSY, 503),
    (MessageLockLostError, "com.microsoft:message-lock-lost", 410),
    (SessionLockLostError, "com.microsoft:session-lock-lost", 410),
    (SessionCannotBeLockedError, "com.microsoft:session-cannot-be-locked", 410),
    (MessageNotFoundError, "com.microsoft:message-not-found", 404),
    (MessageAlreadySettled, "com.microsoft:message-lock-lost", 410),
    (OperationTimeoutError, "com.microsoft:timeout", 408),
    (ServiceBusAuthenticationError, UNAUTHORIZED, 401),
    (ServiceBusAuthorizationError, UNAUTHORIZED, 401),
    (ServiceBusConnectionError, DETACH_FORCED, 500),
    (ResourceNotFoundError, NOT_FOUND, 404),
    (ResourceExistsError, "com.microsoft:entity-already-exists", 409),
    (HttpResponseError, "amqp:invalid-field", 400),
)


def _row(exc: BaseException) -> tuple[str, int]:
    for cls, condition, status in _CONDITIONS:
        if isinstance(exc, cls):
            return condition, status
    # The model's own refusals (session rules, partition keys) are ServiceBusError: the service
    # answers them as an invalid operation.
    return "com.microsoft:argument-error" if isinstance(exc, ValueError) else REFUSED, 400


def condition_of(exc: BaseException) -> str:
    return _row(exc)[0]


def status_of(exc: BaseException) -> int:
    """The `$management` status code for the same error."""
    return _row(exc)[1]


def error_fields(condition: str, description: str, info: dict[Any, Any] | None = None) -> Described:
    """An AMQP `error` (condition, description, info): the described list a close, detach or
    rejected outcome carries."""
    return Described(ULong(ERROR_CODE), [Symbol(condition), description, info])


def error_of(exc: BaseException) -> Described:
    text = getattr(exc, "message", None) or str(exc) or exc.__class__.__name__
    return error_fields(condition_of(exc), str(text))
