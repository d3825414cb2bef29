"""The AMQP error conditions the broker sends, in one place.

The model raises its `ServiceError` with a kind; on the wire the broker sends the condition the
service sends for the same event, and the client's SDK maps it back to its own exception
(../shared/wire.md, "Error conditions"): the model's table, `servicebus.answers.ANSWERS`, gives each
kind its condition and `$management` status. A fault injected with the in-process front-end's vocabulary
(`world.fail(..., ServiceBusServerBusyError)`: an azure-servicebus exception class, instance or
factory) reaches a wire client as the condition Service Bus would send: `_INJECTED_KINDS` reads
its kind.
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
from pairedbus.servicebus.answers import ALREADY_EXISTS, ANSWERS
from pairedbus.servicebus.errors import REFUSED, ErrorKind, ServiceError
from pairedbus.servicebus.errors import made as injected_error

__all__ = [
    "DECODE_ERROR",
    "answer_of",
    "condition_of",
    "error_fields",
    "kind_of",
    "made",
]

#: A frame the broker could not decode (the one condition of the wire's own, not of a model's kind).
DECODE_ERROR = "amqp:decode-error"
#: The descriptor of an AMQP error (part 2, 2.8.14).
ERROR_CODE = 0x1D

#: An injected fault's azure-servicebus (or azure.core) error -> its kind; most specific first: an
#: error takes the first row its class is (or it is) an instance of.
_INJECTED_KINDS: tuple[tuple[type[BaseException], ErrorKind], ...] = (
    (MessagingEntityNotFoundError, ErrorKind.ENTITY_NOT_FOUND),
    (MessagingEntityDisabledError, ErrorKind.ENTITY_DISABLED),
    (MessageSizeExceededError, ErrorKind.SIZE_EXCEEDED),
    (ServiceBusQuotaExceededError, ErrorKind.QUOTA_EXCEEDED),
    (ServiceBusServerBusyError, ErrorKind.SERVER_BUSY),
    (MessageLockLostError, ErrorKind.LOCK_LOST),
    (SessionLockLostError, ErrorKind.SESSION_LOCK_LOST),
    (SessionCannotBeLockedError, ErrorKind.SESSION_CANNOT_BE_LOCKED),
    (MessageNotFoundError, ErrorKind.MESSAGE_NOT_FOUND),
    (MessageAlreadySettled, ErrorKind.ALREADY_SETTLED),
    (OperationTimeoutError, ErrorKind.TIMEOUT),
    (ServiceBusAuthenticationError, ErrorKind.UNAUTHORIZED),
    (ServiceBusAuthorizationError, ErrorKind.UNAUTHORIZED),
    (ServiceBusConnectionError, ErrorKind.CONNECTION_LOST),
    (ResourceNotFoundError, ErrorKind.ENTITY_NOT_FOUND),
    (HttpResponseError, ErrorKind.BAD_REQUEST),
)


def made(exc: BaseException) -> BaseException:
    """The error an injected fault holds, made as the in-process front-end makes it (`errors.made`);
    any other error as it is."""
    if not isinstance(exc, ServiceError) or exc.kind is not ErrorKind.INJECTED:
        return exc
    held = injected_error(exc.injected, exc.message)
    return exc if held is None else held


def kind_of(exc: BaseException) -> ErrorKind | None:
    """The kind of a model's error or of an injected fault's error; None for anything else."""
    if isinstance(exc, ServiceError):
        return None if exc.kind is ErrorKind.INJECTED else exc.kind
    for cls, kind in _INJECTED_KINDS:
        if isinstance(exc, cls):
            return kind
    return None


def answer_of(exc: BaseException) -> tuple[str, int, str]:
    """(condition, `$management` status, description) of an error, as the service sends them."""
    error = made(exc)
    kind = kind_of(error)
    if isinstance(error, ResourceExistsError):  # an HttpResponseError too: before the kinds
        condition, status = ALREADY_EXISTS
    elif kind is not None:
        condition, status = ANSWERS[kind]
    else:
        # Anything else the service answers as an invalid operation (a local argument check as the
        # argument error it is).
        condition, status = ("com.microsoft:argument-error" if isinstance(error, ValueError) else REFUSED), 400
    text = getattr(error, "message", None) or str(error) or error.__class__.__name__
    return condition, status, str(text)


def condition_of(exc: BaseException) -> str:
    return answer_of(exc)[0]


def error_fields(condition: str, description: str, info: dict[Any, Any] | None = None) -> Described:
    """An AMQP `error` (condition, description, info): the described list a close, detach or
    rejected outcome carries."""
    return Described(ULong(ERROR_CODE), [Symbol(condition), description, info])


def error_of(exc: BaseException) -> Described:
    condition, _, text = answer_of(exc)
    return error_fields(condition, text)
