"""Per-destination exponential back-off with jitter: the delays are pinned with the policy's fixed
source (`TOP_OF_WINDOW`) where a test reads them."""

from __future__ import annotations

import random

import pytest

from pairedbus.pairing.backoff import TOP_OF_WINDOW
from pairedbus.syphon.backoff import Backoff


class ManualClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_healthy_destination_has_no_delay() -> None:
    assert Backoff(1.0, 60.0, clock=ManualClock(), rng=TOP_OF_WINDOW).remaining("orders") == 0.0


def test_delay_doubles_per_consecutive_failure_up_to_the_cap() -> None:
    backoff = Backoff(1.0, 5.0, clock=ManualClock(), rng=TOP_OF_WINDOW)
    assert [backoff.failed("orders") for _ in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]


def test_remaining_delay_counts_down_with_the_clock() -> None:
    clock = ManualClock()
    backoff = Backoff(2.0, 60.0, clock=clock, rng=TOP_OF_WINDOW)
    backoff.failed("orders")
    clock.now += 0.5
    assert backoff.remaining("orders") == 1.5
    clock.now += 5
    assert backoff.remaining("orders") == 0.0


def test_one_destination_backing_off_leaves_the_others_alone() -> None:
    backoff = Backoff(1.0, 60.0, clock=ManualClock(), rng=TOP_OF_WINDOW)
    backoff.failed("orders")
    backoff.failed("orders")
    assert backoff.remaining("invoices") == 0.0
    assert backoff.failures("invoices") == 0


def test_success_resets_the_destination() -> None:
    backoff = Backoff(1.0, 60.0, clock=ManualClock(), rng=TOP_OF_WINDOW)
    backoff.failed("orders")
    backoff.succeeded("orders")
    assert (backoff.remaining("orders"), backoff.failures("orders")) == (0.0, 0)
    assert backoff.failed("orders") == 1.0


def test_many_failures_do_not_overflow() -> None:
    backoff = Backoff(1.0, 60.0, clock=ManualClock(), rng=TOP_OF_WINDOW)
    for _ in range(2_000):
        delay = backoff.failed("orders")
    assert delay == 60.0


def test_each_delay_is_drawn_from_its_window_and_remaining_counts_down_from_the_draw() -> None:
    """Full jitter: the n-th failure in a row waits a draw from [0, min(maximum, initial * 2**(n-1))],
    and `remaining` counts down from that draw (not from the window's top)."""
    clock = ManualClock()
    backoff = Backoff(1.0, 5.0, clock=clock, rng=random.Random(7))
    delays = [backoff.failed("orders") for _ in range(6)]
    assert all(0.0 <= delay <= top for delay, top in zip(delays, [1.0, 2.0, 4.0, 5.0, 5.0, 5.0], strict=True))
    assert delays != [1.0, 2.0, 4.0, 5.0, 5.0, 5.0]  # jittered
    again = Backoff(1.0, 5.0, clock=ManualClock(), rng=random.Random(7))
    assert [again.failed("orders") for _ in range(6)] == delays  # a seeded source pins them
    assert backoff.remaining("orders") == pytest.approx(delays[-1])
    clock.now += delays[-1]
    assert backoff.remaining("orders") == 0.0
