"""Which errors fail over, which take a backlog queue out of the rotation, and the errors the
failover sender raises itself."""

from __future__ import annotations

from collections.abc import Sequence

from azure.servicebus.exceptions import MessagingEntityNotFoundError, ServiceBusError

from pairedbus.errors import is_retryable
from pairedbus.pairing.failures import RETRYABLE, Failure, failure_of

#: What starts (or advances) the failover clock: what the SDK says a retry can help, and timeouts,
#: but never a refused credential (the SDK marks it retryable, a token may refresh, but the
#: secondary would refuse the same credential). A missing entity or an oversized message is the
#: caller's to fix: it reaches the caller and never starts the clock.
FAILS_OVER: frozenset[Failure] = RETRYABLE - {Failure.DENIED}
#: A backlog queue that answers with one of these (or one that fails over) cannot take parked
#: messages now (the spec: "any failure counts here — a full queue, a missing queue, a refused one").
#: A message too large fails on every queue alike: that one is the caller's.
UNUSABLE_BACKLOG_QUEUE: frozenset[Failure] = FAILS_OVER | {
    Failure.QUOTA_EXCEEDED,
    Failure.ENTITY_NOT_FOUND,
    Failure.ENTITY_DISABLED,
    Failure.DENIED,
}
#: What the SDK raises for an operation on a handler whose client was closed under it (the close/fault
#: rule closing the namespace's connection mid-send), as seen over the wire: its own failure wrapped
#: without a condition ("Handler failed: 'NoneType' object has no attribute 'create_sender_link'",
#: "... 'client_ready_async'"), pyamqp's AttributeError itself ("'NoneType' object has no attribute
#: 'end'"), or the handler's ValueError ("The handler has already been shutdown").
CLOSED_HANDLER: frozenset[Failure] = frozenset(
    {Failure.HANDLER_FAILED, Failure.TORN_DOWN, Failure.SHUT_DOWN, Failure.INVALID}
)


def starts_failover_clock(exc: BaseException) -> bool:
    """Retryable Service Bus errors and timeouts start (or advance) the failover clock (`FAILS_OVER`)."""
    return failure_of(exc) in FAILS_OVER


def may_be_a_closed_handler(exc: BaseException) -> bool:
    """Whether `exc` is what a call on a handler closed under it raises (`CLOSED_HANDLER`). Only the
    connection's state can tell it from the caller's error."""
    return failure_of(exc) in CLOSED_HANDLER


#: The note (PEP 678) the failover sender adds to an error its backlog send raised to the caller: a
#: caller reading a traceback sees that the primary was not the hop that failed.
BACKLOG_HOP_NOTE = "pairedbus: raised by the backlog send (the entity was failed over to the secondary)"


def raised_by_backlog(exc: BaseException) -> bool:
    """Whether the failover sender raised `exc` from its backlog send (not from the primary)."""
    return BACKLOG_HOP_NOTE in getattr(exc, "__notes__", ())


def is_shut_down_handler(exc: BaseException) -> bool:
    """Whether `exc` says the SDK handler the call ran on was shut down: it never works again."""
    return failure_of(exc) is Failure.SHUT_DOWN


def takes_backlog_queue_out(exc: BaseException) -> bool:
    """Whether a failed backlog send says the queue is unusable (so another one is tried)."""
    return failure_of(exc) in UNUSABLE_BACKLOG_QUEUE


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
