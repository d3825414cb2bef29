"""The syphon's Prometheus metrics: one table row per metric, read from the running service at scrape time."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from pairedbus.syphon.stats import SyphonStats

METRIC_PREFIX = "pairedbus_syphon"


class SyphonReadings(Protocol):
    """What the collector reads from the service at scrape time."""

    def healthy(self) -> bool: ...

    def liveness_problem(self) -> str | None: ...

    def stats(self) -> SyphonStats | None: ...

    def in_flight(self) -> int: ...


#: A sample's value, or (for a labelled metric) label value -> sample value.
Reading = float | Mapping[str, float]


@dataclass(frozen=True)
class MetricRow:
    name: str
    family: type[CounterMetricFamily] | type[GaugeMetricFamily]
    help: str
    read: Callable[[SyphonReadings, SyphonStats], Reading]
    #: The one label of a per-key metric (its samples come out sorted by that label).
    label: str | None = None


#: Reported even before the syphon exists, so a scrape can tell "down" from "not scraped".
ALWAYS: tuple[tuple[str, str, Callable[[SyphonReadings], float]], ...] = (
    (
        "up",
        "1 while the syphon loop runs with its clients open and is not failing for good.",
        lambda service: 1.0 if service.healthy() else 0.0,
    ),
    (
        "live",
        "1 while the liveness probe passes (see /livez).",
        lambda service: 0.0 if service.liveness_problem() is not None else 1.0,
    ),
)

#: Reported once the syphon exists; read from its counters.
FROM_STATS: tuple[MetricRow, ...] = (
    MetricRow(
        "messages_moved", CounterMetricFamily, "Backlog messages delivered to the primary.", lambda _, s: s.moved
    ),
    MetricRow(
        "messages_dead_lettered",
        CounterMetricFamily,
        "Backlog messages dead-lettered (e.g. their time to live ran out in the backlog).",
        lambda _, s: s.dead_lettered,
    ),
    MetricRow(
        "dead_letters",
        CounterMetricFamily,
        "Backlog messages dead-lettered, by reason (DestinationNotFound, SendRejected, MessageSizeExceeded, "
        "TTLExpiredInBacklog, MissingPath, ...). Alert on any increase: each is a message a sender was told "
        "was sent and that never reached its destination.",
        lambda _, s: s.dead_letter_reasons,
        label="reason",
    ),
    MetricRow(
        "pings_dropped", CounterMetricFamily, "Pings found in the backlog and dropped.", lambda _, s: s.dropped_pings
    ),
    MetricRow(
        "messages_left_locked",
        CounterMetricFamily,
        "Messages left locked for redelivery (destination backing off, or stopping).",
        lambda _, s: s.left_locked,
    ),
    MetricRow(
        "send_retries", CounterMetricFamily, "Sends retried in place after a retryable failure.", lambda _, s: s.retries
    ),
    MetricRow(
        "in_flight", GaugeMetricFamily, "Messages received and not yet settled.", lambda service, _: service.in_flight()
    ),
    MetricRow("errors", CounterMetricFamily, "Errors by kind.", lambda _, s: s.errors, label="kind"),
    MetricRow(
        "backlog_depth",
        GaugeMetricFamily,
        "Messages waiting in each backlog queue.",
        lambda _, s: s.backlog_depth,
        label="queue",
    ),
)


def _family(row: MetricRow, reading: Reading) -> Metric:
    name = f"{METRIC_PREFIX}_{row.name}"
    if row.label is None:
        assert not isinstance(reading, Mapping), name
        family = row.family(name, row.help, labels=[])
        family.add_metric([], reading)
        return family
    assert isinstance(reading, Mapping), name
    family = row.family(name, row.help, labels=[row.label])
    for key, value in sorted(reading.items()):
        family.add_metric([key], value)
    return family


class SyphonCollector(Collector):
    """Yields every row of the tables above, in order, from one read of the service."""

    def __init__(self, service: SyphonReadings) -> None:
        self._service = service

    def collect(self) -> Iterable[Metric]:
        for name, help_text, read in ALWAYS:
            gauge = GaugeMetricFamily(f"{METRIC_PREFIX}_{name}", help_text)
            gauge.add_metric([], read(self._service))
            yield gauge
        stats = self._service.stats()
        if stats is None:
            return
        for row in FROM_STATS:
            yield _family(row, row.read(self._service, stats))
