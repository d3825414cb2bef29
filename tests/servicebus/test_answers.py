"""What the service answers each refusal with (../shared/wire.md, "Error conditions"): the literal
conditions and `$management` statuses, restated here to pin the one table both front-ends read."""

from __future__ import annotations

from pairedbus.servicebus.answers import ALREADY_EXISTS, ANSWERS, Answer
from pairedbus.servicebus.errors import ErrorKind


def test_each_kind_is_answered_with_the_services_condition_and_status() -> None:
    assert {kind.value: tuple(answer) for kind, answer in ANSWERS.items()} == {
        "entity-not-found": ("amqp:not-found", 404),
        "namespace-not-found": ("amqp:link:detach-forced", 500),
        "entity-disabled": ("com.microsoft:entity-disabled", 400),
        "size-exceeded": ("amqp:link:message-size-exceeded", 413),
        "quota-exceeded": ("amqp:resource-limit-exceeded", 403),
        "namespace-quota-exceeded": ("amqp:invalid-field", 400),
        "server-busy": ("com.microsoft:server-busy", 503),
        "lock-lost": ("com.microsoft:message-lock-lost", 410),
        "session-lock-lost": ("com.microsoft:session-lock-lost", 410),
        "session-cannot-be-locked": ("com.microsoft:session-cannot-be-locked", 410),
        "message-not-found": ("com.microsoft:message-not-found", 404),
        "already-settled": ("com.microsoft:message-lock-lost", 410),
        "timeout": ("com.microsoft:timeout", 408),
        "unauthorized": ("amqp:unauthorized-access", 401),
        "connection-lost": ("amqp:link:detach-forced", 500),
        "bad-request": ("amqp:invalid-field", 400),
        "invalid-operation": ("amqp:invalid-field", 400),
    }
    assert ALREADY_EXISTS == Answer("com.microsoft:entity-already-exists", 409)


def test_only_the_http_planes_kinds_and_an_injected_fault_have_no_amqp_answer() -> None:
    assert set(ErrorKind) - set(ANSWERS) == {
        ErrorKind.RESOURCE_NOT_FOUND,
        ErrorKind.RESOURCE_EXISTS,
        ErrorKind.INJECTED,
    }
