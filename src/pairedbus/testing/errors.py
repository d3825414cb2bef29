"""Every azure-servicebus and azure-core error the fake raises, made in one place (moto keeps a
backend's errors in its `exceptions.py` the same way).

The data plane raises azure-servicebus's exceptions with the texts the service sends; the
administration client raises azure.core's `ResourceNotFoundError` / `ResourceExistsError` and
`HttpResponseError` with the status the service answers. A caller branches on the class (and
its `retryable` flag, set by the SDK's class), never on the text; the texts follow the service's
so that logs read the same. Argument checks that the SDK makes locally raise Python's own
`ValueError` / `TypeError` where they are made, as the SDK does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeGuard

from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.servicebus.exceptions import (
    MessageAlreadySettled,
    MessageLockLostError,
    MessageNotFoundError,
    MessageSizeExceededError,
    MessagingEntityDisabledError,
    MessagingEntityNotFoundError,
    OperationTimeoutError,
    ServiceBusConnectionError,
    ServiceBusError,
    ServiceBusQuotaExceededError,
    ServiceBusServerBusyError,
    SessionCannotBeLockedError,
    SessionLockLostError,
)

#: What an injected fault raises: an exception class (made with a message), an instance (raised
#: as is) or a factory.
ErrorFactory = type[BaseException] | BaseException | Callable[[], BaseException]

#: The error an injected fault raises unless told otherwise: the service is busy (retryable).
DEFAULT_FAULT: type[BaseException] = ServiceBusServerBusyError
#: The error `close_connections` faults clients with: the connection dropped.
CONNECTION_LOST: type[BaseException] = ServiceBusConnectionError
#: The error of an ambiguous send or a lost reply: the operation timed out.
TIMED_OUT: type[BaseException] = OperationTimeoutError


#: The condition the service refuses an invalid operation with (a session rule, a partition key): a
#: refusal carries it as the SDK builds it from the wire, so both front-ends raise the same error
#: (the syphon tells a refusal from the SDK's own failure by it: `sdk.carries_condition`).
REFUSED = "amqp:invalid-field"


def make_error(error: ErrorFactory, what: str) -> BaseException:
    """The exception an injected fault raises on `what` (a namespace, entity or fragment)."""
    if isinstance(error, BaseException):
        return error
    if _is_error_class(error):
        try:
            return error(message=f"Injected fault on {what}.")  # type: ignore[call-arg]  # the SDK's and azure.core's errors take message=, BaseException does not
        except TypeError:
            return error()
    return error()


def _is_error_class(error: ErrorFactory) -> TypeGuard[type[BaseException]]:
    return isinstance(error, type) and issubclass(error, BaseException)


# --- the data plane (azure-servicebus) ----------------------------------------------------------


def entity_not_found(fqdn: str, path: str) -> MessagingEntityNotFoundError:
    return MessagingEntityNotFoundError(
        message=f"The messaging entity 'sb://{fqdn}/{path}' could not be found. "
        "To know more visit https://aka.ms/sbResourceMgrExceptions."
    )


def entity_disabled(fqdn: str, path: str, status: str) -> MessagingEntityDisabledError:
    """A send to an entity whose status is Disabled or SendDisabled."""
    return MessagingEntityDisabledError(
        message=f"Messaging entity 'sb://{fqdn}/{path}' is currently disabled (status {status})."
    )


def host_not_found(fqdn: str) -> ServiceBusConnectionError:
    """A strict world's unknown namespace: the DNS lookup fails."""
    return ServiceBusConnectionError(message=f"Failed to resolve host {fqdn}.")


def operation_timed_out(operation: str, seconds: float) -> OperationTimeoutError:
    return OperationTimeoutError(message=f"The {operation} operation timed out after {seconds} seconds.")


def reply_lost(fqdn: str, entity: str) -> OperationTimeoutError:
    """The injected ambiguous outcome of a send: stored, but the client never saw the reply."""
    return OperationTimeoutError(
        message=f"Injected ambiguous outcome: the send to {fqdn}/{entity} was stored, but its reply was lost."
    )


def no_session_available() -> OperationTimeoutError:
    return OperationTimeoutError(message="Failed to initiate the connection due to exception: no session available.")


def sessions_required() -> ServiceBusError:
    return ServiceBusError(
        "It is not possible for an entity that requires sessions to create a non-sessionful message receiver.",
        condition=REFUSED,
    )


def sessions_not_supported() -> ServiceBusError:
    return ServiceBusError(
        "It is not possible for an entity that does not require sessions to create a sessionful receiver.",
        condition=REFUSED,
    )


def session_id_missing() -> ServiceBusError:
    return ServiceBusError(
        "The SessionId was not set on a message, and it cannot be sent to the entity. Entities that have "
        "session support enabled can only receive messages that have the SessionId set to a valid value.",
        condition=REFUSED,
    )


def partition_key_mismatch(partition_key: str, session_id: str) -> ServiceBusError:
    return ServiceBusError(
        f"The PartitionKey '{partition_key}' of the message must match its SessionId '{session_id}'.",
        condition=REFUSED,
    )


def no_partition_available(fqdn: str, entity: str) -> ServiceBusError:
    return ServiceBusError(f"No partition of {fqdn}/{entity} is available.", condition=REFUSED)


def entity_full(entity: str, size_in_bytes: int, limit: int) -> ServiceBusQuotaExceededError:
    return ServiceBusQuotaExceededError(
        message=f"The maximum entity size has been reached or exceeded for '{entity}'. "
        f"Size of entity in bytes: {size_in_bytes}, Max entity size in bytes: {limit}."
    )


def message_too_large(size: int, limit: int) -> MessageSizeExceededError:
    return MessageSizeExceededError(
        message=f"The received message (size {size} bytes) exceeds the limit ({limit} bytes) "
        "currently allowed on the link."
    )


def batch_full(limit: int) -> MessageSizeExceededError:
    return MessageSizeExceededError(message=f"ServiceBusMessageBatch has reached its size limit: {limit}")


def scheduled_message_not_found(sequence_number: int) -> MessageNotFoundError:
    return MessageNotFoundError(message=f"The scheduled message with sequence number {sequence_number} was not found.")


def deferred_message_not_found(sequence_number: int) -> MessageNotFoundError:
    return MessageNotFoundError(
        message=f"Failed to lock one or more specified messages. Sequence number {sequence_number}."
    )


def lock_lost() -> MessageLockLostError:
    return MessageLockLostError()


def lock_lost_late() -> MessageLockLostError:
    """The injected late lock loss: the lock ran out before the complete reached the service."""
    return MessageLockLostError(
        message="The lock supplied is invalid. Either the lock expired, or the message has already "
        "been removed from the queue (injected late lock loss)."
    )


def already_settled(action: str) -> MessageAlreadySettled:
    return MessageAlreadySettled(action=action)


def session_lock_lost() -> SessionLockLostError:
    return SessionLockLostError()


def session_locked(session_id: str) -> SessionCannotBeLockedError:
    return SessionCannotBeLockedError(
        message=f"The requested session '{session_id}' cannot be accepted. It may be locked by another receiver."
    )


# --- the administration client (azure.core) ----------------------------------------------------


def bad_request(message: str) -> HttpResponseError:
    """A value the service refuses (HTTP 400)."""
    error = HttpResponseError(message=message)
    error.status_code = 400
    return error


def quota_exceeded(message: str) -> HttpResponseError:
    """A namespace quota the service enforces (HTTP 403)."""
    error = HttpResponseError(message=message)
    error.status_code = 403
    return error


def resource_not_found(message: str) -> ResourceNotFoundError:
    return ResourceNotFoundError(message=message)


def already_exists(name: str) -> ResourceExistsError:
    return ResourceExistsError(message=f"The messaging entity '{name}' already exists.")
