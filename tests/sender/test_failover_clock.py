from datetime import timedelta

from pairedbus.sender.failover_clock import FailoverClock


class ManualClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_switches_only_once_the_interval_has_passed_since_the_first_error():
    clock = ManualClock()
    failover = FailoverClock(timedelta(seconds=60), clock=clock)
    assert failover.record_failure() is False  # starts the clock
    clock.now += 59.9
    assert failover.record_failure() is False
    clock.now += 0.1
    assert failover.record_failure() is True


def test_a_success_stops_the_clock_and_the_next_error_starts_it_again():
    clock = ManualClock()
    failover = FailoverClock(timedelta(seconds=60), clock=clock)
    failover.record_failure()
    clock.now += 50
    failover.record_success()
    assert not failover.running
    clock.now += 50
    assert failover.record_failure() is False  # a new run: 0 s old, not 100 s
    assert failover.running


def test_zero_interval_switches_on_the_first_error():
    failover = FailoverClock(timedelta(0), clock=ManualClock())
    assert failover.record_failure() is True


def test_time_without_any_send_does_not_switch_by_itself():
    clock = ManualClock()
    failover = FailoverClock(timedelta(seconds=1), clock=clock)
    failover.record_failure()
    clock.now += 3600
    assert failover.running  # only the next triggering error decides
    assert failover.record_failure() is True


def test_a_run_starts_when_its_first_failing_call_began_not_when_the_error_arrived():
    # The SDK retries for seconds before an error reaches the sender: those are seconds already
    # without a successful send.
    clock = ManualClock()
    failover = FailoverClock(timedelta(seconds=10), clock=clock)
    started = clock.now
    clock.now += 12  # the SDK's own retries
    assert failover.record_failure(started) is True
    assert failover.failing_since == 1000.0


def test_a_call_that_claims_to_have_begun_in_the_future_counts_from_now():
    clock = ManualClock()
    failover = FailoverClock(timedelta(seconds=10), clock=clock)
    assert failover.record_failure(clock.now + 50) is False
    assert failover.failing_since == 1000.0
