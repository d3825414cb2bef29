"""The runtime's one back-off policy (`pairing.backoff`): exponential with full jitter, its draws from
an injectable source."""

from __future__ import annotations

import random

from pairedbus.pairing.backoff import TOP_OF_WINDOW, BackoffPolicy


def test_the_window_doubles_per_failure_in_a_row_up_to_the_maximum() -> None:
    policy = BackoffPolicy(0.5, 5.0)
    assert [policy.window(n) for n in range(1, 7)] == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]


def test_the_fixed_source_waits_the_top_of_each_window() -> None:
    policy = BackoffPolicy(0.5, 5.0, rng=TOP_OF_WINDOW)
    assert [policy.delay(n) for n in range(1, 7)] == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]


def test_waits_are_spread_over_the_whole_window() -> None:
    """Full jitter: clients that failed together do not come back together."""
    policy = BackoffPolicy(1.0, 60.0, rng=random.Random(3))
    draws = [policy.delay(4) for _ in range(1_000)]
    assert all(0.0 <= d <= 8.0 for d in draws)
    assert min(draws) < 0.5 and max(draws) > 7.5  # near both ends of [0, 8]
    assert len(set(draws)) == len(draws)


def test_a_seeded_source_reproduces_its_waits() -> None:
    first, second = (BackoffPolicy(1.0, 60.0, rng=random.Random(11)) for _ in range(2))
    assert [first.delay(n) for n in range(1, 10)] == [second.delay(n) for n in range(1, 10)]


def test_many_failures_in_a_row_stay_at_the_maximum() -> None:
    policy = BackoffPolicy(1.0, 60.0, rng=TOP_OF_WINDOW)
    assert policy.delay(5_000) == 60.0
