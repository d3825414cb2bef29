"""Every error the fake raises is the SDK's own class (`testing/errors.py`), so code under test retries,
catches and logs them as it would the service's; an injected fault takes a class, an instance or a factory."""

from __future__ import annotations

from azure.core.exceptions import HttpResponseError, ResourceExistsError
from azure.servicebus.exceptions import (
    MessagingEntityNotFoundError,
    ServiceBusConnectionError,
    ServiceBusError,
    ServiceBusQuotaExceededError,
    ServiceBusServerBusyError,
)

from pairedbus.testing import errors


def test_an_injected_fault_is_built_from_a_class_an_instance_or_a_factory() -> None:
    built = errors.make_error(ServiceBusServerBusyError, "ns/orders")
    assert type(built) is ServiceBusServerBusyError and "Injected fault on ns/orders." in str(built)
    given = ServiceBusConnectionError(message="gone")
    assert errors.make_error(given, "ns") is given
    assert isinstance(errors.make_error(lambda: TimeoutError("late"), "ns"), TimeoutError)
    assert type(errors.make_error(KeyboardInterrupt, "ns")) is KeyboardInterrupt  # no message= accepted


def test_the_default_fault_is_server_busy_and_a_lost_connection_is_a_connection_error() -> None:
    assert errors.DEFAULT_FAULT is ServiceBusServerBusyError and errors.CONNECTION_LOST is ServiceBusConnectionError


def test_data_plane_errors_carry_the_services_texts() -> None:
    missing = errors.entity_not_found("contoso.servicebus.windows.net", "orders")
    assert isinstance(missing, MessagingEntityNotFoundError)
    assert "'sb://contoso.servicebus.windows.net/orders' could not be found" in str(missing)
    full = errors.entity_full("orders", 2048, 1024)
    assert isinstance(full, ServiceBusQuotaExceededError)
    assert "Size of entity in bytes: 2048, Max entity size in bytes: 1024." in str(full)
    mismatch = errors.partition_key_mismatch("pk", "s1")
    assert (
        type(mismatch) is ServiceBusError and "PartitionKey 'pk'" in str(mismatch) and "SessionId 's1'" in str(mismatch)
    )


def test_administration_errors_have_the_http_status_the_service_answers() -> None:
    assert (errors.bad_request("bad").status_code, errors.quota_exceeded("full").status_code) == (400, 403)
    assert isinstance(errors.bad_request("bad"), HttpResponseError)
    exists = errors.already_exists("orders")
    assert isinstance(exists, ResourceExistsError) and "'orders' already exists" in str(exists)
