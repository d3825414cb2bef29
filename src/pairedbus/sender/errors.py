"""Which errors fail over, and the errors the failover sender raises itself."""

from __future__ import annotations

from azure.servicebus.exceptions import (
    MessageSizeExceededError,
    MessagingEntityNotFoundError,
    OperationTimeoutError,
    ServiceBusAuthenticationError,
    ServiceBusAuthorizationError,
    ServiceBusError,
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


def starts_failover_clock(exc: BaseException) -> bool:
    """Retryable Service Bus errors and timeouts start (or advance) the failover clock."""
    if isinstance(exc, NEVER_FAIL_OVER):
        return False
    if isinstance(exc, TIMEOUTS):
        return True
    return isinstance(exc, ServiceBusError) and is_retryable(exc)


class SessionPartitionKeyMismatchError(ServiceBusError, ValueError):
    """SessionId and PartitionKey are both set and differ (partitioning.md, "Partition keys"):
    the service rejects such a message, so it is refused before anything is sent. A ValueError
    like the SDK's own partition_key setter check, and a non-retryable ServiceBusError."""

    def __init__(self, message_id: str | None, session_id: str, partition_key: str) -> None:
        super().__init__(
            f"message {message_id!r}: partition_key {partition_key!r} differs from session_id "
            f"{session_id!r}; when both are set they must be identical",
            retryable=False,
        )
