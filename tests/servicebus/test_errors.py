"""The model's refusals are one type, `ServiceError`, carrying a kind and the service's text; an injected
fault carries whatever its caller gave, unread."""

from __future__ import annotations

from pairedbus.servicebus import errors
from pairedbus.servicebus.errors import ErrorKind, ServiceError
from tests.parsing import parse_source


def test_a_refusal_carries_its_kind_and_the_services_text() -> None:
    missing = errors.entity_not_found("contoso.servicebus.windows.net", "orders")
    assert missing.kind is ErrorKind.ENTITY_NOT_FOUND
    assert "'sb://contoso.servicebus.windows.net/orders' could not be found" in missing.message
    assert errors.partition_key_mismatch("pk", "s1").kind is ErrorKind.INVALID_OPERATION
    assert errors.quota_exceeded("full").kind is ErrorKind.NAMESPACE_QUOTA_EXCEEDED
    assert errors.entity_full("orders", 2, 1).kind is ErrorKind.QUOTA_EXCEEDED


def test_an_injected_kind_is_raised_as_that_kind_and_anything_else_is_carried_as_is() -> None:
    busy = errors.injected(ErrorKind.SERVER_BUSY, "ns/orders")
    assert (busy.kind, busy.message, busy.injected) == (ErrorKind.SERVER_BUSY, "Injected fault on ns/orders.", None)
    marker = object()
    carried = errors.injected(marker, "ns")
    assert carried.kind is ErrorKind.INJECTED and carried.injected is marker
    assert isinstance(carried, ServiceError) and errors.DEFAULT_FAULT is ErrorKind.SERVER_BUSY


def test_the_model_imports_no_sdk() -> None:
    import ast
    from pathlib import Path

    source = parse_source(Path(errors.__file__).read_text())
    names = [n.module or "" for n in ast.walk(source) if isinstance(n, ast.ImportFrom)]
    assert not [n for n in names if n.startswith("azure")]


def test_a_front_ends_fault_error_is_made_from_a_class_an_instance_or_a_factory() -> None:
    class Refused(Exception):
        def __init__(self, *, message: str) -> None:
            super().__init__(message)

    assert str(errors.made(Refused, "Injected fault on ns.")) == "Injected fault on ns."
    assert type(errors.made(KeyboardInterrupt, "text")) is KeyboardInterrupt  # takes no message=
    given = TimeoutError("late")
    assert errors.made(given, "text") is given and errors.made(lambda: given, "text") is given
    assert errors.made("not an error", "text") is None and errors.made(lambda: 42, "text") is None
