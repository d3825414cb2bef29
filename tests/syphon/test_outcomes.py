"""What a failed send to the primary means (`outcomes.send_failure`), error by error."""

from __future__ import annotations

import pytest
from azure.servicebus.exceptions import (
    MessageSizeExceededError,
    MessagingEntityNotFoundError,
    ServiceBusConnectionError,
    ServiceBusError,
    ServiceBusQuotaExceededError,
    ServiceBusServerBusyError,
)

from pairedbus import sdk
from pairedbus.syphon.outcomes import DeadLetter, Retry, Split, error_text, send_failure


def test_a_missing_destination_dead_letters_everything_bound_for_it() -> None:
    outcome = send_failure(MessagingEntityNotFoundError(message="gone"), "orders", 5)
    assert outcome == DeadLetter(
        "DestinationNotFound", "'orders' does not exist in the primary namespace", everything=True
    )


def test_a_refused_credential_is_waited_out_as_the_sdk_raises_it() -> None:
    refused = sdk.error_for_condition("amqp:unauthorized-access")
    assert not sdk.is_retryable(refused)  # the SDK's transport: its class alone says retryable
    assert send_failure(refused, "orders", 3) == Retry()
    assert send_failure(refused, "orders", 1) == Retry()


def test_a_batch_too_large_is_split_and_a_lone_message_too_large_dead_lettered() -> None:
    error = MessageSizeExceededError(message="too big")
    assert send_failure(error, "orders", 2) == Split(keyed_by_message_id=False)
    assert send_failure(error, "orders", 1) == DeadLetter("MessageSizeExceeded", "MessageSizeExceededError: too big")


@pytest.mark.parametrize(
    "error",
    [
        TimeoutError("slow"),
        ServiceBusServerBusyError(message="busy"),
        ServiceBusConnectionError(message="reset"),
        ServiceBusQuotaExceededError(message="full"),  # not retryable for the SDK, but a full entity drains
    ],
    ids=["timeout", "server-busy", "connection", "quota-exceeded"],
)
def test_failures_a_wait_can_fix_retry_the_unit_s_key(error: Exception) -> None:
    assert send_failure(error, "orders", 3) == Retry(whole_destination=False)
    assert send_failure(error, "orders", 1) == Retry(whole_destination=False)


def _as_the_sdk_raises(exception: Exception) -> ServiceBusError:
    """The error azure-servicebus's own transport makes of `exception` (its mapping, not ours)."""
    import logging

    from azure.servicebus._transport._pyamqp_transport import PyamqpTransport

    return PyamqpTransport.create_servicebus_exception(logging.getLogger("test"), exception)


def test_a_refused_batch_is_split_and_teaches_message_id_keys_a_refused_message_is_dead_lettered() -> None:
    from azure.servicebus._pyamqp.error import AMQPLinkError, ErrorCondition

    # A refusal the SDK maps to no subclass of its own: a plain ServiceBusError with the condition.
    error = _as_the_sdk_raises(AMQPLinkError(ErrorCondition.NotAllowed, description="refused"))
    assert type(error) is ServiceBusError
    assert send_failure(error, "orders", 2) == Split(keyed_by_message_id=True)
    assert send_failure(error, "orders", 1) == DeadLetter("SendRejected", error_text(error))


@pytest.mark.parametrize("count", [1, 3])
def test_the_sdks_own_failure_wrapped_is_no_refusal_and_backs_off_the_destination(count: int) -> None:
    # Over the wire (the wire drill), a close that tore the sender down under a send surfaced as a plain
    # ServiceBusError without a condition, and the syphon dead-lettered the message as SendRejected.
    error = _as_the_sdk_raises(AttributeError("'NoneType' object has no attribute 'create_sender_link'"))
    assert type(error) is ServiceBusError and str(error).startswith("Handler failed: ")
    assert send_failure(error, "orders", count) == Retry(whole_destination=True)


def test_a_shut_down_sender_backs_off_the_whole_destination() -> None:
    assert send_failure(ValueError("The handler has already been shutdown."), "orders", 1) == Retry(
        whole_destination=True
    )


def test_an_error_that_is_no_service_bus_answer_is_raised() -> None:
    bug = KeyError("bug")
    with pytest.raises(KeyError) as raised:
        send_failure(bug, "orders", 1)
    assert raised.value is bug


def test_a_description_names_the_error_and_is_cut_at_1024_characters() -> None:
    assert error_text(ServiceBusError("no")) == "ServiceBusError: no"
    long = error_text(ServiceBusError("x" * 2000))
    assert len(long) == 1024 and long.startswith("ServiceBusError: xxx")
