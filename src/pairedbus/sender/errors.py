"""Which errors fail over, which take a backlog queue out of the rotation, and the errors the
failover sender raises itself."""

from __future__ import annotations

from collections.abc import Sequence

from azure.servicebus.exceptions import (
    MessageSizeExceededError,
    MessagingEntityDisabledError,
    MessagingEntityNotFoundError,
    OperationTimeoutError,
    ServiceBusAuthenticationError,
    ServiceBusAuthorizationError,
    ServiceBusError,
    ServiceBusQuotaExceededError,
)

from pairedbus.errors import is_retryable

#: The SDK marks authorization/authentication errors retryable (a token may refresh), but the
#: secondary would refuse the same credential and a missing entity or oversized message is the
#: caller's to fix: these always reach the caller and never start the failover clock.
NEVER_FAIL_OVER: tuple[type[BaseException], ...] = (
    MessageSizeExceededError,
    MessagingEntityNotFoundError,
    ServiceBusAuthorizationError,
    ServiceBusAuthenticationError,
)
#: The SDK's operation timeout, and asyncio's (`asyncio.TimeoutError` is `TimeoutError`).
TIMEOUTS: tuple[type[BaseException], ...] = (OperationTimeoutError, TimeoutError)
#: A backlog queue that answers with one of these cannot take parked messages now (the spec:
#: "any failure counts here — a full queue, a missing queue, a refused one").
UNUSABLE_BACKLOG_QUEUE: tuple[type[BaseException], ...] = (
    ServiceBusQuotaExceededError,
    MessagingEntityNotFoundError,
    MessagingEntityDisabledError,
    ServiceBusAuthorizationError,
    ServiceBusAuthenticationError,
)


def starts_failover_clock(exc: BaseException) -> bool:
    """Retryable Service Bus errors and timeouts start (or advance) the failover clock."""
    if isinstance(exc, NEVER_FAIL_OVER):
        return False
    if isinstance(exc, TIMEOUTS):
        return True
    return isinstance(exc, ServiceBusError) and is_retryable(exc)


def may_be_a_closed_handler(exc: BaseException) -> bool:
    """What the SDK raises for an operation on a handler whose client was closed under it (the
    close/fault rule closing the namespace's connection mid-send), as seen over the wire: a plain
    `ServiceBusError` wrapping pyamqp's own failure ("Handler failed: 'NoneType' object has no
    attribute 'create_sender_link'", "... 'client_ready_async'"), pyamqp's `AttributeError` itself
    ("'NoneType' object has no attribute 'end'"), or the handler's `ValueError` ("The handler has
    already been shutdown"). Only the connection's state can tell it from the caller's error."""
    if isinstance(exc, ServiceBusError):
        return type(exc) is ServiceBusError and not is_session_id_refusal(exc)
    return isinstance(exc, (AttributeError, ValueError))


#: The note (PEP 678) the failover sender adds to an error its backlog send raised to the caller: a
#: caller reading a traceback sees that the primary was not the hop that failed.
BACKLOG_HOP_NOTE = "pairedbus: raised by the backlog send (the entity was failed over to the secondary)"


def raised_by_backlog(exc: BaseException) -> bool:
    """Whether the failover sender raised `exc` from its backlog send (not from the primary)."""
    return BACKLOG_HOP_NOTE in getattr(exc, "__notes__", ())


#: What the SDK raises for any call on a handler it shut down itself (after some errors of its own): a plain
#: ValueError, so its text is the only signal.
HANDLER_SHUT_DOWN = "The handler has already been shutdown"


def is_shut_down_handler(exc: BaseException) -> bool:
    """Whether `exc` says the SDK handler the call ran on was shut down (by the SDK): it never works again."""
    return type(exc) is ValueError and HANDLER_SHUT_DOWN in str(exc)


def takes_backlog_queue_out(exc: BaseException) -> bool:
    """Whether a failed backlog send says the queue is unusable (so another one is tried). A
    message too large fails on every queue alike: that one is the caller's."""
    if isinstance(exc, MessageSizeExceededError):
        return False
    return isinstance(exc, UNUSABLE_BACKLOG_QUEUE) or starts_failover_clock(exc)


#: The primary's refusal of a message without a session id by a session-enabled entity, as the service
#: words it ("The SessionId was not set on a message, and it cannot be sent to the entity. Entities
#: that have session support enabled can only receive messages that have the SessionId set to a valid
#: value."; quoted in Azure/azure-functions-java-library#197 and JasperFx/wolverine#264). The SDK has
#: no type for it: its AMQP condition is not in azure-servicebus's `_ERROR_CODE_TO_ERROR_MAPPING`, so
#: it arrives as a plain, non-retryable `ServiceBusError`; the text is the only signal.
SESSION_ID_NOT_SET = "The SessionId was not set on a message"


def is_session_id_refusal(exc: BaseException) -> bool:
    """Whether the primary refused a send because the entity requires sessions and a message had
    no session id (the one place its wording is read)."""
    return (
        isinstance(exc, ServiceBusError)
        and not isinstance(exc, SessionRequiredError)
        and not starts_failover_clock(exc)
        and SESSION_ID_NOT_SET in str(exc)
    )


class SessionPartitionKeyMismatchError(ServiceBusError, ValueError):
    """SessionId and PartitionKey are both set and differ (partitioning.md, "Partition keys"):
    the service rejects such a message, so it is refused before anything is sent. A ValueError
    like the SDK's own partition_key setter check, and a non-retryable ServiceBusError."""

    def __init__(self, message_id: str | None, session_id: str | None, partition_key: str) -> None:
        super().__init__(
            f"message {message_id!r}: partition_key {partition_key!r} differs from session_id "
            f"{session_id!r}; when both are set they must be identical",
            retryable=False,
        )


class SessionRequiredError(ServiceBusError):
    """While failed over: the destination requires sessions and a message has no session id. The
    primary refuses it with a non-retryable ServiceBusError; parking it would only have the syphon
    dead-letter it later (`SendRejected`), after the caller was told it was sent."""

    def __init__(self, destination: str, message_id: str | None) -> None:
        super().__init__(
            # The primary's wording first, so a caller that reads it sees the same refusal.
            f"{SESSION_ID_NOT_SET}, and it cannot be sent to the entity. Message {message_id!r}: "
            f"{destination!r} requires sessions and the message has no session_id "
            "(refused while the entity is failed over, as the primary would refuse it)",
            retryable=False,
        )
        self.destination = destination


def destination_not_found(destination: str) -> MessagingEntityNotFoundError:
    """What the primary raises for a missing entity, raised while failed over for an entity the
    client learned is missing (parking it would end as a `DestinationNotFound` dead letter)."""
    return MessagingEntityNotFoundError(
        message=f"the messaging entity {destination!r} does not exist in the primary namespace "
        "(refused while the entity is failed over, as the primary would refuse it)"
    )


class NoBacklogQueueError(ServiceBusError):
    """No backlog queue can take the message now: each one tried failed, or is out of the rotation
    (missing at open, or failed recently). Retryable when the last failure was."""

    def __init__(self, failures: Sequence[tuple[str, BaseException]], out_of_rotation: int) -> None:
        tried = "; ".join(f"{queue}: {type(exc).__name__}" for queue, exc in failures) or "none tried"
        last = failures[-1][1] if failures else None
        super().__init__(
            f"no backlog queue could take the message ({tried}; {out_of_rotation} out of the rotation)",
            retryable=last is not None and (starts_failover_clock(last) or is_retryable(last)),
        )
        self.failures = list(failures)
