"""Every error the in-process front-end raises is the SDK's own class, made in one place
(`testing/errors.py`) from the model's `ServiceError` kind, so code under test retries, catches and logs
them as it would the service's; an injected fault takes a class, an instance, a factory or a kind."""

from __future__ import annotations

import asyncio

import pytest
from azure.core.exceptions import HttpResponseError, ResourceExistsError
from azure.servicebus.exceptions import (
    MessageAlreadySettled,
    MessageLockLostError,
    MessagingEntityNotFoundError,
    ServiceBusConnectionError,
    ServiceBusError,
    ServiceBusQuotaExceededError,
    ServiceBusServerBusyError,
)

from pairedbus import sdk
from pairedbus.emulator import conditions
from pairedbus.servicebus import errors as model
from pairedbus.servicebus.answers import ANSWERS
from pairedbus.servicebus.errors import ErrorKind, ServiceError
from pairedbus.testing import errors


def test_an_injected_fault_is_built_from_a_class_an_instance_a_factory_or_a_kind() -> None:
    built = errors.make_error(ServiceBusServerBusyError, "ns/orders")
    assert type(built) is ServiceBusServerBusyError and "Injected fault on ns/orders." in str(built)
    given = ServiceBusConnectionError(message="gone")
    assert errors.make_error(given, "ns") is given
    assert isinstance(errors.make_error(lambda: TimeoutError("late"), "ns"), TimeoutError)
    assert type(errors.make_error(KeyboardInterrupt, "ns")) is KeyboardInterrupt  # no message= accepted
    kind = errors.make_error(ErrorKind.CONNECTION_LOST, "ns")
    assert type(kind) is ServiceBusConnectionError and "Injected fault on ns." in str(kind)


def test_an_injected_fault_carried_by_the_model_is_made_from_what_it_holds() -> None:
    made = errors.sdk_error(model.injected(ServiceBusQuotaExceededError, "ns/orders"))
    assert type(made) is ServiceBusQuotaExceededError and "Injected fault on ns/orders." in str(made)
    default = errors.sdk_error(model.injected(model.DEFAULT_FAULT, "ns"))
    assert type(default) is ServiceBusServerBusyError and "Injected fault on ns." in str(default)


@pytest.mark.parametrize("kind", [k for k in ErrorKind if k is not ErrorKind.INJECTED])
def test_every_kind_of_the_model_has_its_sdk_error_with_the_services_text(kind: ErrorKind) -> None:
    made = errors.sdk_error(ServiceError(kind, "the service's text"))
    assert "the service's text" in str(made)
    assert isinstance(made, (ServiceBusError, HttpResponseError, MessageAlreadySettled))


def test_data_plane_errors_are_the_sdks_classes() -> None:
    missing = errors.sdk_error(model.entity_not_found("contoso.servicebus.windows.net", "orders"))
    assert isinstance(missing, MessagingEntityNotFoundError)
    assert "'sb://contoso.servicebus.windows.net/orders' could not be found" in str(missing)
    full = errors.sdk_error(model.entity_full("orders", 2048, 1024))
    assert isinstance(full, ServiceBusQuotaExceededError)
    assert "Size of entity in bytes: 2048, Max entity size in bytes: 1024." in str(full)
    mismatch = errors.sdk_error(model.partition_key_mismatch("pk", "s1"))
    assert type(mismatch) is ServiceBusError and "PartitionKey 'pk'" in str(mismatch)
    assert sdk.carries_condition(mismatch)  # a refusal by the service, as on the wire
    lost = errors.sdk_error(model.lock_lost())  # the SDK's own text, and the condition it appends over the wire
    assert str(lost) == f"{MessageLockLostError()} Error condition: com.microsoft:message-lock-lost."
    settled = errors.sdk_error(model.already_settled("complete"))
    assert type(settled) is MessageAlreadySettled and str(settled) == str(MessageAlreadySettled(action="complete"))


@pytest.mark.parametrize("kind", [kind for kind in ErrorKind if kind is not ErrorKind.INJECTED])
def test_the_fake_makes_every_kind_with_the_condition_the_wire_sends(kind: ErrorKind) -> None:
    made = errors.sdk_error(ServiceError(kind, "text"))
    condition = sdk.condition_of(made)
    # a kind the SDK makes without a condition (its own timeout, a local refusal, the HTTP plane) has none
    assert condition is None or condition == conditions.condition_of(ServiceError(kind, "text"))


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        # the transport's flags, not the classes': the two rows the class constructors got wrong
        (model.unauthorized("denied"), False),
        (model.scheduled_message_not_found(7), True),
        (model.server_busy("busy"), True),
        (model.entity_full("orders", 2, 1), False),
    ],
)
def test_a_kind_is_retryable_as_the_sdks_transport_says(error: ServiceError, retryable: bool) -> None:
    made = errors.sdk_error(error)
    assert sdk.is_retryable(made) is retryable
    assert sdk.condition_of(made) == ANSWERS[error.kind].condition


def test_administration_errors_have_the_http_status_the_service_answers() -> None:
    bad = errors.sdk_error(model.bad_request("bad"))
    quota = errors.sdk_error(model.quota_exceeded("full"))
    assert isinstance(bad, HttpResponseError) and isinstance(quota, HttpResponseError)
    assert (bad.status_code, quota.status_code) == (400, 403)
    exists = errors.already_exists("orders")
    assert isinstance(exists, ResourceExistsError) and "'orders' already exists" in str(exists)


def test_a_front_end_class_hands_callers_the_sdks_error_never_the_models() -> None:
    @errors.raises_sdk_errors
    class Handler:
        def send(self) -> None:
            raise model.lock_lost()

        async def receive(self) -> None:
            raise model.session_lock_lost()

        def _private(self) -> None:
            raise model.lock_lost()

    with pytest.raises(MessageLockLostError):
        Handler().send()
    with pytest.raises(ServiceBusError, match="session"):
        asyncio.run(Handler().receive())
    with pytest.raises(ServiceError):  # only what a caller reaches is wrapped
        Handler()._private()
