"""A destination's health (`syphon.health`), pure: a manual clock, and the back-off's fixed or seeded draws."""

from __future__ import annotations

import random

import pytest

from pairedbus.pairing.backoff import TOP_OF_WINDOW, BackoffPolicy
from pairedbus.syphon.health import DOWN_AFTER, DestinationHealth, Health


class ManualClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def health(
    clock: ManualClock, *, initial: float = 1.0, maximum: float = 60.0, rng: random.Random = TOP_OF_WINDOW
) -> DestinationHealth:
    return DestinationHealth("orders", BackoffPolicy(initial, maximum, rng=rng), clock=clock)


def test_a_healthy_destination_and_its_keys_are_tried_at_once() -> None:
    orders = health(ManualClock())
    assert orders.wait() == orders.wait("cart-1") == 0.0
    assert orders.down_since is None and orders.down_for() == 0.0 and not orders.down_by_its_keys


def test_a_failing_key_backs_off_alone_and_the_destination_stays_up() -> None:
    clock = ManualClock()
    orders = health(clock)
    assert [orders.failed("cart-1") for _ in range(3)] == [1.0, 2.0, 4.0]  # the policy's windows, top drawn
    assert orders.wait("cart-1") == 4.0 and orders.failures("cart-1") == 3
    assert orders.wait("cart-2") == 0.0 and orders.wait() == 0.0
    assert orders.down_since is None
    clock.now += 3.0
    assert orders.wait("cart-1") == 1.0


def test_the_destination_is_down_from_its_first_failure_until_a_send_goes_through() -> None:
    clock = ManualClock()
    orders = health(clock, initial=2.0, maximum=5.0)
    assert orders.failed() == 2.0
    clock.now += 1.5
    assert orders.failed() == 4.0 and orders.failed() == 5.0  # capped
    assert orders.down_since == 100.0 and orders.down_for() == 1.5
    clock.now += 1.0
    assert orders.wait() == 4.0
    orders.sent("cart-1")
    assert orders.wait() == 0.0 and orders.failures() == 0 and orders.down_since is None
    assert orders.failed() == 2.0  # the window starts again


def test_a_keyed_send_going_through_clears_its_key_and_the_destination_but_not_other_keys() -> None:
    orders = health(ManualClock())
    orders.failed("cart-1")
    orders.failed("cart-2")
    orders.failed()
    orders.sent("cart-1")
    assert orders.failures("cart-1") == 0 and orders.failures() == 0
    assert orders.failures("cart-2") == 1


def test_keyed_failures_in_a_row_whichever_their_keys_take_the_destination_down_and_count_afresh() -> None:
    orders = health(ManualClock())
    assert [orders.count(failed=True) for _ in range(DOWN_AFTER - 1)] == list(range(1, DOWN_AFTER))
    assert not orders.down_by_its_keys
    assert orders.count(failed=False) == 0  # a send that did not fail breaks the run
    for _ in range(DOWN_AFTER):
        orders.count(failed=True)
    assert orders.down_by_its_keys
    assert orders.went_down() == 1.0
    assert orders.failures() == 1 and orders.down_since == 100.0
    assert not orders.down_by_its_keys and orders.count(failed=True) == 1  # three more before it is down again


def test_the_jitter_is_the_policys_draw_from_the_rng_given() -> None:
    clock = ManualClock()
    drawn = health(clock, initial=1.0, maximum=5.0, rng=random.Random(7))
    delays = [drawn.failed("cart-1") for _ in range(5)]
    again = health(ManualClock(), initial=1.0, maximum=5.0, rng=random.Random(7))
    assert [again.failed("cart-1") for _ in range(5)] == delays  # seeded: the same draws
    assert all(0.0 <= d <= w for d, w in zip(delays, [1.0, 2.0, 4.0, 5.0, 5.0], strict=True))
    assert drawn.wait("cart-1") == pytest.approx(delays[-1])


def test_every_pump_of_a_syphon_asks_the_same_destinations_health() -> None:
    healths = Health(BackoffPolicy(1.0, 60.0, rng=TOP_OF_WINDOW), clock=ManualClock())
    healths.of("orders").failed()
    assert healths.of("orders") is healths.of("orders") and healths.of("orders").failures() == 1
    assert healths.of("invoices").failures() == 0 and healths.of("invoices").destination == "invoices"
