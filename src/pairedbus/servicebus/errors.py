"""What Service Bus refuses, as the model states it: one error type, `ServiceError`, carrying a
`kind` and the service's text. The model knows no SDK and no wire: what the service answers for each
kind (its AMQP condition and `$management` status) is the model's one table, `servicebus.answers`;
each front-end turns that into what its clients expect, in one place each (`pairedbus.testing.errors`:
azure-servicebus's and azure.core's exceptions; `pairedbus.emulator.conditions`: the condition sent). The texts follow the service's, so that logs read the same on both front-ends.

An injected fault (`ServiceBusWorld.fail(..., error)`) holds whatever its caller gave: an `ErrorKind`,
or a front-end's own vocabulary (the in-process front-end's users pass azure-servicebus exception
classes, instances or factories). The model does not read it: it raises `ServiceError(INJECTED,
injected=error)` and the front-end makes the error from it.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorKind(StrEnum):
    """What went wrong, in the service's terms (`servicebus.answers` says what the service answers for each)."""

    ENTITY_NOT_FOUND = "entity-not-found"
    #: A strict world's unknown namespace: the DNS lookup fails.
    NAMESPACE_NOT_FOUND = "namespace-not-found"
    ENTITY_DISABLED = "entity-disabled"
    #: The entity is full (data plane: the sender's quota).
    QUOTA_EXCEEDED = "quota-exceeded"
    #: The namespace's entity count or the SKU's limit (the management plane answers HTTP 403).
    NAMESPACE_QUOTA_EXCEEDED = "namespace-quota-exceeded"
    SERVER_BUSY = "server-busy"
    LOCK_LOST = "lock-lost"
    SESSION_LOCK_LOST = "session-lock-lost"
    SESSION_CANNOT_BE_LOCKED = "session-cannot-be-locked"
    MESSAGE_NOT_FOUND = "message-not-found"
    SIZE_EXCEEDED = "size-exceeded"
    UNAUTHORIZED = "unauthorized"
    #: A value the management plane refuses (HTTP 400).
    BAD_REQUEST = "bad-request"
    #: The management plane's missing queue, topic, subscription or rule (HTTP 404).
    RESOURCE_NOT_FOUND = "resource-not-found"
    #: The management plane's create of a name already taken (HTTP 409).
    RESOURCE_EXISTS = "resource-exists"
    #: An operation the data plane refuses as invalid (a session rule, a partition key).
    INVALID_OPERATION = "invalid-operation"
    ALREADY_SETTLED = "already-settled"
    TIMEOUT = "timeout"
    CONNECTION_LOST = "connection-lost"
    #: An injected fault whose error is the front-end's own value (`ServiceError.injected`).
    INJECTED = "injected"


class ServiceError(Exception):
    """A refusal of the service: `kind` says which, `message` is the service's text. `injected` is the
    fault's own error when `kind` is INJECTED (else None)."""

    def __init__(self, kind: ErrorKind, message: str, *, injected: object = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.injected = injected

    def __repr__(self) -> str:
        return f"ServiceError({self.kind.value!r}, {self.message!r})"


#: The AMQP condition the service refuses an invalid operation with (a session rule, a partition key):
#: both front-ends hand it to the SDK (the syphon tells a refusal from the SDK's own failure by it:
#: `sdk.carries_condition`).
REFUSED = "amqp:invalid-field"

#: What an injected fault raises unless told otherwise: the service is busy (retryable).
DEFAULT_FAULT = ErrorKind.SERVER_BUSY


def injected(error: object, what: str) -> ServiceError:
    """The error of a fault injected on `what` (a namespace, entity or fragment): `error` is a kind
    (its text says where it was injected) or a front-end's own value, carried as is."""
    text = f"Injected fault on {what}."
    if isinstance(error, ErrorKind):
        return ServiceError(error, text)
    return ServiceError(ErrorKind.INJECTED, text, injected=error)


def made(error: object, text: str) -> BaseException | None:
    """The exception a front-end's own fault error stands for: a class made with the injection's `text`
    (`message=`, as azure-servicebus's and azure.core's errors take it; else no argument), an instance
    as is, a factory called; None for anything else (a kind is the model's own)."""
    if isinstance(error, BaseException):
        return error
    if isinstance(error, type) and issubclass(error, BaseException):
        try:
            return error(message=text)  # type: ignore[call-arg]  # BaseException takes no message=
        except TypeError:
            return error()
    if callable(error):
        result = error()
        return result if isinstance(result, BaseException) else None
    return None


# --- the data plane ----------------------------------------------------------------------------


def entity_not_found(fqdn: str, path: str) -> ServiceError:
    return ServiceError(
        ErrorKind.ENTITY_NOT_FOUND,
        f"The messaging entity 'sb://{fqdn}/{path}' could not be found. "
        "To know more visit https://aka.ms/sbResourceMgrExceptions.",
    )


def entity_disabled(fqdn: str, path: str, status: str) -> ServiceError:
    """A send to an entity whose status is Disabled or SendDisabled."""
    return ServiceError(
        ErrorKind.ENTITY_DISABLED, f"Messaging entity 'sb://{fqdn}/{path}' is currently disabled (status {status})."
    )


def namespace_not_found(fqdn: str) -> ServiceError:
    return ServiceError(ErrorKind.NAMESPACE_NOT_FOUND, f"Failed to resolve host {fqdn}.")


def reply_lost(fqdn: str, entity: str) -> ServiceError:
    """The injected ambiguous outcome of a send: stored, but the client never saw the reply."""
    return ServiceError(
        ErrorKind.TIMEOUT,
        f"Injected ambiguous outcome: the send to {fqdn}/{entity} was stored, but its reply was lost.",
    )


def no_session_available() -> ServiceError:
    return ServiceError(ErrorKind.TIMEOUT, "Failed to initiate the connection due to exception: no session available.")


def sessions_required() -> ServiceError:
    return ServiceError(
        ErrorKind.INVALID_OPERATION,
        "It is not possible for an entity that requires sessions to create a non-sessionful message receiver.",
    )


def sessions_not_supported() -> ServiceError:
    return ServiceError(
        ErrorKind.INVALID_OPERATION,
        "It is not possible for an entity that does not require sessions to create a sessionful receiver.",
    )


def session_id_missing() -> ServiceError:
    return ServiceError(
        ErrorKind.INVALID_OPERATION,
        "The SessionId was not set on a message, and it cannot be sent to the entity. Entities that have "
        "session support enabled can only receive messages that have the SessionId set to a valid value.",
    )


def partition_key_mismatch(partition_key: str, session_id: str) -> ServiceError:
    return ServiceError(
        ErrorKind.INVALID_OPERATION,
        f"The PartitionKey '{partition_key}' of the message must match its SessionId '{session_id}'.",
    )


def no_partition_available(fqdn: str, entity: str) -> ServiceError:
    return ServiceError(ErrorKind.INVALID_OPERATION, f"No partition of {fqdn}/{entity} is available.")


def entity_full(entity: str, size_in_bytes: int, limit: int) -> ServiceError:
    return ServiceError(
        ErrorKind.QUOTA_EXCEEDED,
        f"The maximum entity size has been reached or exceeded for '{entity}'. "
        f"Size of entity in bytes: {size_in_bytes}, Max entity size in bytes: {limit}.",
    )


def message_too_large(size: int, limit: int) -> ServiceError:
    return ServiceError(
        ErrorKind.SIZE_EXCEEDED,
        f"The received message (size {size} bytes) exceeds the limit ({limit} bytes) currently allowed on the link.",
    )


def scheduled_message_not_found(sequence_number: int) -> ServiceError:
    return ServiceError(
        ErrorKind.MESSAGE_NOT_FOUND, f"The scheduled message with sequence number {sequence_number} was not found."
    )


def deferred_message_not_found(sequence_number: int) -> ServiceError:
    return ServiceError(
        ErrorKind.MESSAGE_NOT_FOUND,
        f"Failed to lock one or more specified messages. Sequence number {sequence_number}.",
    )


#: The text of a lost message lock (azure-servicebus shows the same one when the service gives none).
LOCK_LOST_TEXT = (
    "The lock on the message lock has expired. Callers should call attempt to receive and process the message again."
)
#: The text of a lost session lock.
SESSION_LOCK_LOST_TEXT = "The lock on the session has expired. Callers should request the session again."


def lock_lost() -> ServiceError:
    return ServiceError(ErrorKind.LOCK_LOST, LOCK_LOST_TEXT)


def lock_lost_late() -> ServiceError:
    """The injected late lock loss: the lock ran out before the complete reached the service."""
    return ServiceError(
        ErrorKind.LOCK_LOST,
        "The lock supplied is invalid. Either the lock expired, or the message has already "
        "been removed from the queue (injected late lock loss).",
    )


def already_settled(action: str) -> ServiceError:
    """A second settlement of one received message (`action`: complete, abandon, ...)."""
    return ServiceError(
        ErrorKind.ALREADY_SETTLED,
        f"Unable to {action} message; The message has either been deleted or already settled.",
    )


def session_lock_lost() -> ServiceError:
    return ServiceError(ErrorKind.SESSION_LOCK_LOST, SESSION_LOCK_LOST_TEXT)


def session_locked(session_id: str) -> ServiceError:
    return ServiceError(
        ErrorKind.SESSION_CANNOT_BE_LOCKED,
        f"The requested session '{session_id}' cannot be accepted. It may be locked by another receiver.",
    )


def unauthorized(message: str) -> ServiceError:
    return ServiceError(ErrorKind.UNAUTHORIZED, message)


def server_busy(message: str) -> ServiceError:
    return ServiceError(ErrorKind.SERVER_BUSY, message)


# --- the management plane ----------------------------------------------------------------------


def bad_request(message: str) -> ServiceError:
    """A value the service refuses (HTTP 400)."""
    return ServiceError(ErrorKind.BAD_REQUEST, message)


def quota_exceeded(message: str) -> ServiceError:
    """A namespace quota the service enforces (HTTP 403)."""
    return ServiceError(ErrorKind.NAMESPACE_QUOTA_EXCEEDED, message)


def resource_not_found(message: str) -> ServiceError:
    """A queue, topic, subscription or rule the management plane does not find (HTTP 404)."""
    return ServiceError(ErrorKind.RESOURCE_NOT_FOUND, message)


def resource_exists(name: str) -> ServiceError:
    """A create of a name already taken (HTTP 409)."""
    return ServiceError(ErrorKind.RESOURCE_EXISTS, f"The messaging entity '{name}' already exists.")
