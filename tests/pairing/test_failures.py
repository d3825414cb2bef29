"""`pairing.failures`: every row of the table, pinned with the exception as the unmodified SDK raises
it (its transport's mapping of an AMQP condition, its handlers' own checks), and the one verdict all
of the SDK's "handler has been shut down" spellings get."""

from __future__ import annotations

import asyncio
import logging

import pytest
from azure.servicebus import ServiceBusMessage, ServiceBusReceivedMessage, ServiceBusReceiveMode
from azure.servicebus.aio import ServiceBusClient
from azure.servicebus.exceptions import (
    MessageAlreadySettled,
    ServiceBusAuthenticationError,
    ServiceBusError,
)

from pairedbus import sdk
from pairedbus.pairing.failures import FAILURES, Failure, failure_of
from pairedbus.sender.errors import SESSION_ID_NOT_SET, is_shut_down_handler

#: Never dialled: a handler opens its connection on its first call, and these calls fail before it.
CONNECTION_STRING = "Endpoint=sb://localhost:1/;SharedAccessKeyName=k;SharedAccessKey=v"


def _session_id_refusal() -> ServiceBusError:
    return sdk.error_for_condition("amqp:invalid-field", f"{SESSION_ID_NOT_SET}, and it cannot be sent to the entity.")


def _argument_check() -> ValueError:
    """The SDK's own check of a message's fields (no call was made)."""
    message = ServiceBusMessage(b"x", session_id="a")
    try:
        message.partition_key = "b"
    except ValueError as exc:
        return exc
    raise AssertionError("the SDK accepted a partition key that differs from the session id")


#: (what the SDK raises, what it means): every row of the table at least once.
CASES: list[tuple[str, BaseException, Failure]] = [
    ("size exceeded", sdk.error_for_condition("amqp:link:message-size-exceeded"), Failure.TOO_LARGE),
    ("entity not found", sdk.error_for_condition("amqp:not-found"), Failure.ENTITY_NOT_FOUND),
    ("entity disabled", sdk.error_for_condition("com.microsoft:entity-disabled"), Failure.ENTITY_DISABLED),
    ("unauthorized", sdk.error_for_condition("amqp:unauthorized-access"), Failure.DENIED),
    ("cbs refusal", ServiceBusAuthenticationError(message="put-token refused"), Failure.DENIED),
    ("quota", sdk.error_for_condition("amqp:resource-limit-exceeded"), Failure.QUOTA_EXCEEDED),
    ("message lock lost", sdk.error_for_condition("com.microsoft:message-lock-lost"), Failure.LOCK_LOST),
    ("session lock lost", sdk.error_for_condition("com.microsoft:session-lock-lost"), Failure.LOCK_LOST),
    ("message not found", sdk.error_for_condition("com.microsoft:message-not-found"), Failure.MESSAGE_NOT_FOUND),
    ("already settled", MessageAlreadySettled(action="complete"), Failure.ALREADY_SETTLED),
    ("detach forced", sdk.error_for_condition("amqp:link:detach-forced"), Failure.CONNECTION_LOST),
    ("unknown error", sdk.error_for_condition("amqp:unknown-error"), Failure.CONNECTION_LOST),
    ("socket", sdk.error_for_condition("amqp:socket-error", on_connection=True), Failure.CONNECTION_LOST),
    ("sdk timeout", sdk.error_for_condition("com.microsoft:timeout"), Failure.TIMED_OUT),
    ("asyncio bound", TimeoutError("receive took over 60 s"), Failure.TIMED_OUT),
    ("server busy", sdk.error_for_condition("com.microsoft:server-busy"), Failure.BUSY),
    ("argument check", _argument_check(), Failure.INVALID),
    ("pyamqp", AttributeError("'NoneType' object has no attribute 'end'"), Failure.TORN_DOWN),
    ("cannot lock", sdk.error_for_condition("com.microsoft:session-cannot-be-locked"), Failure.RETRY),
    ("internal error", sdk.error_for_condition("amqp:internal-error"), Failure.RETRY),
    (
        "handler failed",
        sdk.error_for_own_failure(AttributeError("'NoneType' object has no attribute 'create_sender_link'")),
        Failure.HANDLER_FAILED,
    ),
    ("invalid field", sdk.error_for_condition("amqp:invalid-field"), Failure.REFUSED),
    ("session id refusal", _session_id_refusal(), Failure.REFUSED),
    ("a bug", KeyError("destination"), Failure.NOT_SERVICE_BUS),
]


@pytest.mark.parametrize(("raised", "failure"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_each_failure_the_sdk_raises_means_its_row(raised: BaseException, failure: Failure) -> None:
    assert failure_of(raised) is failure


def test_every_row_and_every_verdict_is_pinned_above() -> None:
    verdicts = [row.failure for row in FAILURES]
    assert len(set(verdicts)) == len(verdicts)  # one row per verdict: a case per verdict hits every row
    assert set(verdicts) | {Failure.NOT_SERVICE_BUS} == set(Failure)  # what no row matches
    pinned = {failure for _, _, failure in CASES}
    assert pinned == set(Failure) - {Failure.SHUT_DOWN}  # that one: the shut-down test below


async def _shut_down_spellings() -> list[ValueError]:
    """What the SDK raises on a handler it shut down, each way it words it."""
    raised: list[ValueError] = []
    async with ServiceBusClient.from_connection_string(CONNECTION_STRING) as client:
        sender = client.get_queue_sender("orders")
        await sender.close()
        with pytest.raises(ValueError) as sending:
            await sender.send_messages(ServiceBusMessage(b"x"))
        raised.append(sending.value)
        receiver = client.get_queue_receiver("orders")
        await receiver.close()
        with pytest.raises(ValueError) as opening:
            await receiver.__aenter__()
        raised.append(opening.value)
        # A receiver whose link the SDK closed after an error of its own: settling on it is refused.
        settling_on = client.get_queue_receiver("orders")
        from azure.servicebus._pyamqp.message import Message, Properties

        received = ServiceBusReceivedMessage(
            Message(data=[b"x"], properties=Properties(message_id="m")),
            receive_mode=ServiceBusReceiveMode.PEEK_LOCK,
            receiver=settling_on,
        )
        with pytest.raises(ValueError) as settling:
            await settling_on.complete_message(received)
        raised.append(settling.value)
        await settling_on.close()
    return raised


def test_every_spelling_of_a_shut_down_handler_means_shut_down() -> None:
    logging.getLogger("azure").setLevel(logging.CRITICAL)
    spellings = asyncio.run(_shut_down_spellings())
    assert len({str(exc) for exc in spellings}) == 2  # the handlers' own words, and the settlement check's
    assert [failure_of(exc) for exc in spellings] == [Failure.SHUT_DOWN] * 3
    assert all(is_shut_down_handler(exc) for exc in spellings)  # the failover sender renews its handler
    assert failure_of(ValueError("The handler has been closed")) is Failure.INVALID  # the words, not any ValueError
