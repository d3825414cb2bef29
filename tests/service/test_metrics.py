"""The syphon's metrics table (`pairedbus.service.metrics`): what a scrape yields before and after the syphon exists."""

from __future__ import annotations

from collections import Counter

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from pairedbus.service.metrics import SyphonCollector
from pairedbus.syphon.stats import SyphonStats


class Readings:
    def __init__(self, stats: SyphonStats | None, *, healthy: bool = True, problem: str | None = None) -> None:
        self._stats, self._healthy, self._problem = stats, healthy, problem

    def healthy(self) -> bool:
        return self._healthy

    def liveness_problem(self) -> str | None:
        return self._problem

    def stats(self) -> SyphonStats | None:
        return self._stats

    def in_flight(self) -> int:
        return 4


def _scrape(readings: Readings) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(SyphonCollector(readings))
    body = generate_latest(registry).decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(body)
        for s in family.samples
    }


def test_before_the_syphon_exists_only_up_and_live_are_reported() -> None:
    samples = _scrape(Readings(None, healthy=False, problem="signing in"))
    assert samples == {("pairedbus_syphon_up", ()): 0.0, ("pairedbus_syphon_live", ()): 0.0}


def test_every_counter_of_the_stats_is_one_series_and_labelled_ones_one_per_key() -> None:
    stats = SyphonStats(moved=1, dead_lettered=2, dropped_pings=3, left_locked=5, retries=6)
    stats.errors = Counter({"b": 1, "a": 2})
    stats.dead_letter_reasons = Counter({"SendRejected": 2})
    stats.backlog_depth = {"q/0": 0}
    samples = _scrape(Readings(stats))
    assert samples == {
        ("pairedbus_syphon_up", ()): 1.0,
        ("pairedbus_syphon_live", ()): 1.0,
        ("pairedbus_syphon_messages_moved_total", ()): 1.0,
        ("pairedbus_syphon_messages_dead_lettered_total", ()): 2.0,
        ("pairedbus_syphon_dead_letters_total", (("reason", "SendRejected"),)): 2.0,
        ("pairedbus_syphon_pings_dropped_total", ()): 3.0,
        ("pairedbus_syphon_messages_left_locked_total", ()): 5.0,
        ("pairedbus_syphon_send_retries_total", ()): 6.0,
        ("pairedbus_syphon_in_flight", ()): 4.0,
        ("pairedbus_syphon_errors_total", (("kind", "a"),)): 2.0,
        ("pairedbus_syphon_errors_total", (("kind", "b"),)): 1.0,
        ("pairedbus_syphon_backlog_depth", (("queue", "q/0"),)): 0.0,
    }
