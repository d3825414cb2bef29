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

from pairedbus import sdk
from pairedbus.sender.errors import SessionPartitionKeyMismatchError, may_be_a_closed_handler, starts_failover_clock


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


@pytest.mark.parametrize(
    ("error", "closed_handler"),
    [
        (sdk.error_for_own_failure(AttributeError("'NoneType' object has no attribute 'create_sender_link'")), True),
        (AttributeError("'NoneType' object has no attribute 'end'"), True),
        (
            ValueError("The handler has already been shutdown. Please use ServiceBusClient to create a new instance."),
            True,
        ),
        # The service's refusal, with its condition, is the caller's answer whatever the connection's state
        # (the type alone, a plain ServiceBusError, used to count as a handler closed under the call).
        (sdk.error_for_condition("amqp:invalid-field", "The SessionId was not set on a message"), False),
        (sdk.error_for_condition("amqp:not-allowed"), False),
        (sdk.error_for_condition("com.microsoft:server-busy"), False),
    ],
    ids=["sdk-own-failure", "pyamqp", "shut-down", "session-refusal", "not-allowed", "busy"],
)
def test_a_closed_handler_is_told_by_the_sdks_own_failures_not_by_a_refusal(error, closed_handler):
    assert may_be_a_closed_handler(error) is closed_handler
