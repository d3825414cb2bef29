"""A pump's sends to the primary (`sending.PrimarySends`): what a send's answer does to the
back-offs, the error counts, the close/fault rule and the destination's batching rule."""

from __future__ import annotations

from typing import Any

import pytest
from azure.servicebus.exceptions import MessagingEntityNotFoundError, ServiceBusError, ServiceBusServerBusyError

from pairedbus.pairing.backoff import TOP_OF_WINDOW, BackoffPolicy
from pairedbus.syphon.health import DestinationHealth, Health
from pairedbus.syphon.outcomes import DeadLetter, Retry, Sent, Split
from pairedbus.syphon.sending import PrimarySends, Unit
from pairedbus.syphon.stats import SyphonStats


class StubDestinations:
    """Sends answer from `answers` (an error raised, or None: acknowledged), one per send."""

    def __init__(self, *answers: BaseException | None, packing: BaseException | None = None) -> None:
        self.answers = list(answers)
        self.packing = packing
        self.sent: list[Any] = []
        self.keyed_by_message_id: list[str] = []

    async def send(self, destination: str, batch: Any) -> None:
        self.sent.append(batch)
        answer = self.answers.pop(0) if self.answers else None
        if answer is not None:
            raise answer

    async def batches(self, destination: str, messages: list[Any], **_: Any) -> list[tuple[Any, list[int], Any]]:
        if self.packing is not None:
            raise self.packing
        return [(f"batch-{m}", [i], None) for i, m in enumerate(messages)]

    def learn_keyed_by_message_id(self, destination: str) -> None:
        self.keyed_by_message_id.append(destination)


class Pair:
    def __init__(self) -> None:
        self.noted: list[tuple[str, str]] = []

    def note_error(self, side: str, exc: BaseException) -> bool:
        self.noted.append((side, type(exc).__name__))
        return False


def sends(destinations: StubDestinations) -> tuple[PrimarySends, DestinationHealth, SyphonStats, Pair]:
    """Sends to "orders", and its health."""
    health, stats, pair = Health(BackoffPolicy(10.0, 60.0, rng=TOP_OF_WINDOW)), SyphonStats(), Pair()
    primary = PrimarySends(destinations, health, stats, pair, queue="contoso-primary-backlog-0")  # type: ignore[arg-type]
    return primary, health.of("orders"), stats, pair


async def test_a_keyed_success_clears_its_key_s_and_its_destination_s_back_off() -> None:
    primary, health, stats, _ = sends(StubDestinations(None))
    stats.unfixable_since, stats.unfixable_error = 1.0, "ServiceBusAuthenticationError: denied"
    health.failed("cart-1")
    health.failed()
    assert await primary.send("orders", Unit("batch", [0, 1], "cart-1")) == Sent()
    assert health.failures("cart-1") == 0 and health.wait("cart-1") == 0
    assert health.failures() == 0 and health.wait() == 0
    assert stats.unfixable_error is None  # progress: what failed for good is fixed


async def test_a_keyed_retryable_failure_backs_off_the_key_only_and_is_counted() -> None:
    primary, health, stats, pair = sends(StubDestinations(ServiceBusServerBusyError(message="busy")))
    assert await primary.send("orders", Unit("batch", [0], "cart-1")) == Retry()
    assert health.failures("cart-1") == 1 and health.wait("cart-1") > 9
    assert health.failures() == 0
    assert stats.errors == {"ServiceBusServerBusyError": 1}
    assert pair.noted == [("primary", "ServiceBusServerBusyError")]


async def test_a_shut_down_sender_backs_off_the_destination_even_for_a_keyed_unit() -> None:
    primary, health, _, _ = sends(StubDestinations(ValueError("The handler has already been shutdown.")))
    assert await primary.send("orders", Unit("batch", [0], "cart-1")) == Retry(whole_destination=True)
    assert health.failures() == 1
    assert health.failures("cart-1") == 0


async def test_a_refused_batch_teaches_the_destination_message_id_keys() -> None:
    # A refusal carries the service's condition, as the SDK builds it from the wire.
    refused = ServiceBusError("refused", condition="amqp:invalid-field")
    destinations = StubDestinations(refused, refused)
    primary, health, _, _ = sends(destinations)
    assert await primary.send("orders", Unit("batch", [0, 1], None)) == Split(keyed_by_message_id=True)
    assert destinations.keyed_by_message_id == ["orders"]
    assert await primary.send("orders", Unit("message", [0], None)) == DeadLetter(
        "SendRejected", "ServiceBusError: refused Error condition: amqp:invalid-field."
    )
    assert destinations.keyed_by_message_id == ["orders"]  # a lone message teaches nothing
    assert health.failures() == 0


async def test_units_sent_side_by_side_answer_in_their_order() -> None:
    destinations = StubDestinations(None, ServiceBusServerBusyError(message="busy"), None)
    primary, _, _, _ = sends(destinations)
    units = [Unit(f"batch-{i}", [i], None) for i in range(3)]
    assert await primary.send_all("orders", units) == [Sent(), Retry(), Sent()]
    assert destinations.sent == ["batch-0", "batch-1", "batch-2"]


async def test_packing_gives_units_of_the_messages_indexes() -> None:
    primary, _, _, _ = sends(StubDestinations())
    assert await primary.pack("orders", ["a", "b"]) == [Unit("batch-a", [0], None), Unit("batch-b", [1], None)]


async def test_a_sender_that_cannot_open_backs_off_the_destination() -> None:
    primary, health, stats, pair = sends(StubDestinations(packing=ServiceBusServerBusyError(message="busy")))
    assert await primary.pack("orders", ["a"]) == Retry()
    assert health.failures() == 1
    assert stats.errors == {"ServiceBusServerBusyError": 1}
    assert pair.noted == [("primary", "ServiceBusServerBusyError")]


async def test_a_destination_missing_when_opening_dead_letters_everything() -> None:
    primary, health, stats, _ = sends(StubDestinations(packing=MessagingEntityNotFoundError(message="gone")))
    outcome = await primary.pack("orders", ["a", "b"])
    assert outcome == DeadLetter("DestinationNotFound", "'orders' does not exist in the primary namespace", True)
    assert health.failures() == 0
    assert stats.errors == {"MessagingEntityNotFoundError": 1}


async def test_opening_raises_what_is_no_service_bus_answer_without_counting_it() -> None:
    primary, health, stats, pair = sends(StubDestinations(packing=KeyError("bug")))
    with pytest.raises(KeyError):
        await primary.pack("orders", ["a"])
    assert stats.errors == {} and pair.noted == [] and health.failures() == 0
