"""Per-destination exponential back-off."""

from __future__ import annotations

from pairedbus.syphon.backoff import Backoff


class ManualClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_healthy_destination_has_no_delay() -> None:
    assert Backoff(1.0, 60.0, clock=ManualClock()).remaining("orders") == 0.0


def test_delay_doubles_per_consecutive_failure_up_to_the_cap() -> None:
    backoff = Backoff(1.0, 5.0, clock=ManualClock())
    assert [backoff.failed("orders") for _ in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]


def test_remaining_delay_counts_down_with_the_clock() -> None:
    clock = ManualClock()
    backoff = Backoff(2.0, 60.0, clock=clock)
    backoff.failed("orders")
    clock.now += 0.5
    assert backoff.remaining("orders") == 1.5
    clock.now += 5
    assert backoff.remaining("orders") == 0.0


def test_one_destination_backing_off_leaves_the_others_alone() -> None:
    backoff = Backoff(1.0, 60.0, clock=ManualClock())
    backoff.failed("orders")
    backoff.failed("orders")
    assert backoff.remaining("invoices") == 0.0
    assert backoff.failures("invoices") == 0


def test_success_resets_the_destination() -> None:
    backoff = Backoff(1.0, 60.0, clock=ManualClock())
    backoff.failed("orders")
    backoff.succeeded("orders")
    assert (backoff.remaining("orders"), backoff.failures("orders")) == (0.0, 0)
    assert backoff.failed("orders") == 1.0


def test_many_failures_do_not_overflow() -> None:
    backoff = Backoff(1.0, 60.0, clock=ManualClock())
    for _ in range(2_000):
        delay = backoff.failed("orders")
    assert delay == 60.0
