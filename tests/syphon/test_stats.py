"""The syphon's counters count every event, not just the first (issue 22)."""

from __future__ import annotations

from azure.core.exceptions import HttpResponseError
from azure.servicebus.exceptions import ServiceBusAuthorizationError, ServiceBusServerBusyError

from pairedbus.syphon.stats import SyphonStats


def test_errors_and_dead_letters_are_counted_per_kind_and_reason() -> None:
    stats = SyphonStats()
    for _ in range(3):
        stats.count_error(ServiceBusServerBusyError(message="busy"))
    stats.count_error(ServiceBusAuthorizationError(message="no role"))
    stats.count_dead_letter("TTLExpiredInBacklog")
    stats.count_dead_letter("TTLExpiredInBacklog")
    stats.count_dead_letter("MissingPath")
    assert stats.errors == {"ServiceBusServerBusyError": 3, "ServiceBusAuthorizationError": 1}
    assert stats.dead_lettered == 3
    assert stats.dead_letter_reasons == {"TTLExpiredInBacklog": 2, "MissingPath": 1}
    assert stats.log_fields() == {
        "moved": 0,
        "dead_lettered": 3,
        "dropped_pings": 0,
        "left_locked": 0,
        "errors": {"ServiceBusServerBusyError": 3, "ServiceBusAuthorizationError": 1},
    }


def test_an_unfixable_failure_is_dated_from_the_first_of_a_run_until_a_call_succeeds() -> None:
    stats = SyphonStats()
    stats.count_error(HttpResponseError(message="forbidden", response=None))  # no status code: fixable
    assert stats.unfixable_since is None
    stats.count_error(ServiceBusAuthorizationError(message="first"))
    since = stats.unfixable_since
    assert since is not None
    stats.count_error(ServiceBusAuthorizationError(message="second"))
    assert stats.unfixable_since == since  # still the first
    assert stats.unfixable_error is not None and stats.unfixable_error.startswith(
        "ServiceBusAuthorizationError: second"
    )
    stats.note_reachable()
    assert (stats.unfixable_since, stats.unfixable_error) == (None, None)


def test_a_snapshot_does_not_move_with_the_counters() -> None:
    stats = SyphonStats()
    stats.count_dead_letter("MissingPath")
    snapshot = stats.snapshot()
    stats.count_dead_letter("MissingPath")
    assert (snapshot.dead_lettered, snapshot.dead_letter_reasons["MissingPath"]) == (1, 1)
    assert (stats.dead_lettered, stats.dead_letter_reasons["MissingPath"]) == (2, 2)


def test_liveness_names_what_is_wrong() -> None:
    stats = SyphonStats(progress_at=100.0, listed=True, backlog_depth={"q": 0})
    assert stats.liveness_problem(now=1_000.0, stall_after=60, unfixable_after=60, in_flight=0) is None
    assert stats.liveness_problem(now=1_000.0, stall_after=60, unfixable_after=60, in_flight=2) == (
        "no progress for 900 s with work pending"
    )
    stats.backlog_depth = {"q": 3}
    assert stats.liveness_problem(now=159.0, stall_after=60, unfixable_after=60, in_flight=0) is None
    assert stats.liveness_problem(now=160.0, stall_after=60, unfixable_after=60, in_flight=0) is not None
