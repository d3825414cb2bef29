"""Which errors a user can fix, and which the SDK says a retry can help."""

from __future__ import annotations

from azure.servicebus.exceptions import (
    MessageSizeExceededError,
    MessagingEntityNotFoundError,
    OperationTimeoutError,
    ServiceBusConnectionError,
    ServiceBusServerBusyError,
)

from pairedbus.errors import UserError, is_retryable


def test_retryable_reads_the_flag_each_sdk_exception_sets() -> None:
    assert is_retryable(ServiceBusServerBusyError(message="busy"))
    assert is_retryable(ServiceBusConnectionError(message="link detached"))
    assert is_retryable(OperationTimeoutError(message="timed out"))
    assert not is_retryable(MessageSizeExceededError(message="too big"))
    assert not is_retryable(MessagingEntityNotFoundError(message="no such queue"))
    assert not is_retryable(RuntimeError("not a Service Bus error"))


def test_user_errors_exit_2() -> None:
    assert UserError("--count: expected >= 1").exit_code == 2
