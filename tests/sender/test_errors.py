import pytest
from azure.servicebus.exceptions import (
    MessageSizeExceededError,
    MessagingEntityNotFoundError,
    OperationTimeoutError,
    ServiceBusAuthenticationError,
    ServiceBusAuthorizationError,
    ServiceBusCommunicationError,
    ServiceBusConnectionError,
    ServiceBusError,
    ServiceBusQuotaExceededError,
    ServiceBusServerBusyError,
)

from pairedbus.sender.errors import SessionPartitionKeyMismatchError, starts_failover_clock


@pytest.mark.parametrize(
    "error",
    [
        ServiceBusServerBusyError(message="busy"),
        ServiceBusCommunicationError(message="gone"),
        ServiceBusConnectionError(message="reset"),
        OperationTimeoutError(message="slow"),
        TimeoutError(),
        ServiceBusError("transient", retryable=True),
    ],
)
def test_retryable_errors_and_timeouts_start_the_clock(error):
    assert starts_failover_clock(error)


@pytest.mark.parametrize(
    "error",
    [
        MessageSizeExceededError(message="big"),
        MessagingEntityNotFoundError(message="none"),
        ServiceBusAuthorizationError(message="no"),  # the SDK marks it retryable
        ServiceBusAuthenticationError(message="no"),
        ServiceBusQuotaExceededError(message="full"),
        ServiceBusError("permanent", retryable=False),
        ValueError("bad input"),
    ],
)
def test_caller_errors_never_fail_over(error):
    assert not starts_failover_clock(error)


def test_partition_key_mismatch_is_a_non_retryable_sdk_error_and_a_value_error():
    error = SessionPartitionKeyMismatchError("m1", "s", "p")
    assert isinstance(error, ServiceBusError) and isinstance(error, ValueError)
    assert not error._retryable
    assert not starts_failover_clock(error)
    assert "'p'" in str(error) and "'s'" in str(error)
