"""Every azure-servicebus and azure-core error the in-process front-end raises, made in one place
(moto keeps a backend's errors in its `exceptions.py` the same way).

The model (`pairedbus.servicebus`) raises its own `ServiceError` with a kind and the service's text;
`sdk_error` turns it into the exception the SDK raises for the same event, by one table. The
front-end's public classes are wrapped by `raises_sdk_errors`, so no `ServiceError` reaches a caller.
The data plane raises azure-servicebus's exceptions; the administration client raises azure.core's
`ResourceNotFoundError` / `ResourceExistsError` and `HttpResponseError` with the status the service
answers. A caller branches on the class (and its `retryable` flag, set by the SDK's class), never on
the text. Argument checks that the SDK makes locally raise Python's own `ValueError` / `TypeError`
where they are made, as the SDK does.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar, cast

from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.servicebus.exceptions import (
    MessageAlreadySettled,
    MessageSizeExceededError,
    OperationTimeoutError,
)

from pairedbus import sdk
from pairedbus.servicebus.answers import ANSWERS
from pairedbus.servicebus.errors import ErrorKind, ServiceError, made

#: What an injected fault raises: an exception class (made with a message), an instance (raised
#: as is), a factory, or one of the model's kinds.
ErrorFactory = type[BaseException] | BaseException | Callable[[], BaseException] | ErrorKind


def _http(status: int) -> Callable[[str], HttpResponseError]:
    def make(message: str) -> HttpResponseError:
        error = HttpResponseError(message=message)
        error.status_code = status
        return error

    return make


def _already_settled(message: str) -> MessageAlreadySettled:
    error = MessageAlreadySettled()
    error.args = (message,)  # the SDK builds its text from the action; the model's text already holds it
    return error


#: The kinds a client never sees as the service's AMQP condition, each made as the SDK makes it. Every
#: other kind is made by the SDK's own transport (`sdk.error_for_condition`) from the condition the
#: wire sends for it (`servicebus.answers.ANSWERS`: one table for both front-ends), so its class,
#: condition and `retryable` are the wire's (`tests/testing/test_front_ends_agree.py` measures each
#: against the unmodified SDK).
_OTHER_ERRORS: dict[ErrorKind, Callable[[str], BaseException]] = {
    # The SDK's retry loop, once its retries are spent, re-makes a timeout from the class alone (no
    # condition; retryable, the class's flag), whatever the service answered.
    ErrorKind.TIMEOUT: lambda m: OperationTimeoutError(message=m),
    # A second settlement never reaches the service: the SDK refuses it locally.
    ErrorKind.ALREADY_SETTLED: _already_settled,
    # The management plane answers over HTTP: azure.core's error with the service's status.
    ErrorKind.BAD_REQUEST: _http(400),
    ErrorKind.NAMESPACE_QUOTA_EXCEEDED: _http(403),
    ErrorKind.RESOURCE_NOT_FOUND: lambda m: ResourceNotFoundError(message=m),
    ErrorKind.RESOURCE_EXISTS: lambda m: ResourceExistsError(message=m),
}


def _made(kind: ErrorKind, message: str) -> BaseException:
    """The exception the SDK raises for the model's `kind`, with the service's text."""
    other = _OTHER_ERRORS.get(kind)
    if other is not None:
        return other(message)
    return sdk.error_for_condition(ANSWERS[kind].condition, message)


def sdk_error(error: ServiceError) -> BaseException:
    """The exception the SDK raises for the model's `error` (an injected one: what its fault holds)."""
    if error.kind is ErrorKind.INJECTED:
        return make_error(error.injected, error.message)  # type: ignore[arg-type]  # the model carries the fault's error as it was given
    return _made(error.kind, error.message)


def make_error(error: ErrorFactory, what: str) -> BaseException:
    """The exception an injected fault raises on `what` (a namespace, entity or fragment; or the
    model's text of the injection)."""
    message = what if what.startswith("Injected fault on ") else f"Injected fault on {what}."
    if isinstance(error, ErrorKind):
        return _made(error, message)
    exc = made(error, message)
    if exc is None:
        raise TypeError(f"an injected fault's error must be an exception, its class or a factory, not {error!r}")
    return exc


C = TypeVar("C", bound=type)
F = TypeVar("F", bound=Callable[..., Any])

#: Dunder methods a caller reaches directly (context managers, iteration).
_ENTRY_DUNDERS = frozenset({"__enter__", "__exit__", "__aenter__", "__aexit__", "__next__", "__anext__"})


def raises_sdk_errors(cls: C) -> C:
    """Wrap every public method of a front-end class (its own and its fake bases', sync and async) so
    that a `ServiceError` from the model leaves as the SDK's exception, made by `sdk_error`."""
    for name in dir(cls):
        if name.startswith("_") and name not in _ENTRY_DUNDERS:
            continue
        raw = inspect.getattr_static(cls, name)
        if not inspect.isfunction(raw) or raw.__module__.startswith("azure."):  # the SDK base class's own
            continue
        if getattr(raw, "__sdk_errors__", False):
            continue
        setattr(cls, name, translating(raw))
    return cls


def translating(method: F) -> F:
    """`method` (sync or async) raising the SDK's error for the model's: for what runs after the public
    method returned (a pager's fetch)."""
    if inspect.iscoroutinefunction(method):

        @functools.wraps(method)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return await method(*args, **kwargs)
            except ServiceError as error:
                raise sdk_error(error) from None

        async_wrapper.__sdk_errors__ = True  # type: ignore[attr-defined]  # a marker against wrapping twice
        return cast(F, async_wrapper)

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except ServiceError as error:
            raise sdk_error(error) from None

    wrapper.__sdk_errors__ = True  # type: ignore[attr-defined]  # as above
    return cast(F, wrapper)


# --- the data plane: what only the SDK's client itself raises ---------------------------------------


def operation_timed_out(operation: str, seconds: float) -> OperationTimeoutError:
    return OperationTimeoutError(message=f"The {operation} operation timed out after {seconds} seconds.")


def batch_full(limit: int) -> MessageSizeExceededError:
    return MessageSizeExceededError(message=f"ServiceBusMessageBatch has reached its size limit: {limit}")


# --- the administration client (azure.core) ----------------------------------------------------


def resource_not_found(message: str) -> ResourceNotFoundError:
    return ResourceNotFoundError(message=message)


def already_exists(name: str) -> ResourceExistsError:
    return ResourceExistsError(message=f"The messaging entity '{name}' already exists.")
