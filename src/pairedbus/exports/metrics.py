"""`pairedbus metrics export`: Azure Monitor metrics per entity as Metrics REST documents.

One query per region, per batch of namespaces, per day, through azure-monitor-querymetrics'
`MetricsClient` (the metrics half of azure-monitor-query before 2.0), split by the `EntityName`
dimension (diagnostic-settings exports drop dimensions, so they cannot feed the audit). Every
result is written back in the REST response shape, one document per file:
`OUT/<namespace>.<counters|gauges>.<YYYY-MM-DD>.json`.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

from pairedbus import contract, durations
from pairedbus.errors import DateRangeError, UserError

METRIC_NAMESPACE = "Microsoft.ServiceBus/namespaces"
#: Counters are summed (Total); ActiveMessages is a gauge Azure Monitor aggregates by Average/Maximum.
COUNTERS = ("IncomingMessages", "OutgoingMessages", "IncomingRequests")
GAUGES = ("ActiveMessages",)
QUERIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "counters": (COUNTERS, ("Total",)),
    "gauges": (GAUGES, ("Average", "Maximum")),
}
ENTITY_FILTER = "EntityName eq '*'"
#: The batch API takes at most 50 resource ids per call.
MAX_RESOURCES_PER_QUERY = 50
DEFAULT_GRANULARITY = timedelta(minutes=1)

MetricsClientFactory = Callable[[str, Any], Any]


@dataclass
class MetricsExport:
    out: Path
    files: list[Path] = field(default_factory=list)
    namespaces: int = 0


#: Azure Monitor keeps platform metrics 93 days
#: (https://learn.microsoft.com/azure/azure-monitor/essentials/data-platform-metrics#retention-of-metrics).
METRICS_RETENTION = timedelta(days=93)


def parse_since(text: str, *, now: datetime, flag: str = "--since") -> datetime:
    """`7d`, `36h`, or an ISO 8601 date/time (UTC unless it says otherwise)."""
    relative = re.fullmatch(r"(\d+)([dh])", text.strip())
    if relative:
        amount = int(relative[1])
        try:
            return now - (timedelta(days=amount) if relative[2] == "d" else timedelta(hours=amount))
        except OverflowError:
            raise DateRangeError(f"{flag} {text}: too far back (Azure Monitor keeps metrics 93 days)") from None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise DateRangeError(f"{flag} {text}: expected Nd, Nh or an ISO 8601 date/time") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def check_range(since: datetime, until: datetime, *, now: datetime) -> None:
    """Within what Azure Monitor keeps, and in order."""
    if since < now - METRICS_RETENTION:
        raise DateRangeError(
            f"--since {since.isoformat()}: more than 93 days ago (Azure Monitor keeps platform metrics 93 days)"
        )
    if since >= until:
        raise DateRangeError(f"--since {since.isoformat()}: must be before --until {until.isoformat()}")


def metrics_endpoint(location: str) -> str:
    """The regional metrics endpoint: `West Europe` -> https://westeurope.metrics.monitor.azure.com."""
    return f"https://{location.replace(' ', '').lower()}.metrics.monitor.azure.com"


def days(since: datetime, until: datetime) -> Iterator[tuple[datetime, datetime]]:
    """UTC day windows covering [since, until)."""
    start = since.astimezone(UTC)
    end = until.astimezone(UTC)
    while start < end:
        next_day = datetime.combine(start.date() + timedelta(days=1), time(), tzinfo=UTC)
        yield start, min(next_day, end)
        start = next_day


def _timestamp(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rest_document(result: Any) -> dict[str, Any]:
    """A `MetricsQueryResult` back in the REST response shape the audit reads."""
    values = []
    for metric in result.metrics:
        timeseries = []
        for series in metric.timeseries:
            data = []
            for point in series.data:
                entry: dict[str, Any] = {"timeStamp": _timestamp(point.timestamp)}
                for name in ("total", "average", "minimum", "maximum", "count"):
                    if getattr(point, name, None) is not None:
                        entry[name] = getattr(point, name)
                data.append(entry)
            metadata = [
                {"name": {"value": key, "localizedValue": key}, "value": value}
                for key, value in series.metadata_values.items()
            ]
            timeseries.append({"metadatavalues": metadata, "data": data})
        values.append(
            {
                "id": metric.id,
                "type": metric.type,
                "name": {"value": metric.name, "localizedValue": metric.name},
                "unit": metric.unit,
                "displayDescription": metric.display_description,
                "errorCode": "Success",
                "timeseries": timeseries,
            }
        )
    return {
        "cost": result.cost,
        "timespan": result.timespan,
        "interval": durations.iso_duration(result.granularity) if result.granularity else None,
        "namespace": result.namespace,
        "resourceregion": result.resource_region,
        "value": values,
    }


def _default_metrics_client(endpoint: str, credential: Any) -> Any:
    from azure.monitor.querymetrics import MetricsClient

    return MetricsClient(endpoint, credential)


_NAMESPACE_IN_ID = re.compile(r"/namespaces/([^/]+)", re.IGNORECASE)


def _namespace_of(metric_id: str) -> str | None:
    match = _NAMESPACE_IN_ID.search(metric_id)
    return match[1].lower() if match else None


def export_metrics(
    subscription_id: str,
    out_dir: str | Path,
    *,
    since: datetime,
    until: datetime | None = None,
    granularity: timedelta = DEFAULT_GRANULARITY,
    credential: Any = None,
    management_client: Any = None,
    metrics_client_factory: MetricsClientFactory | None = None,
    on_step: Callable[[str], None] | None = None,
) -> MetricsExport:
    """Query every Service Bus namespace of the subscription; the clients are injectable for tests;
    `on_step` is told each query as it is made (the command's progress)."""
    until = until or datetime.now(UTC)
    if since >= until:
        raise UserError(f"--since {since.isoformat()}: must be before {until.isoformat()}")
    if credential is None and (management_client is None or metrics_client_factory is None):
        from azure.identity import DefaultAzureCredential

        credential = DefaultAzureCredential()
    if management_client is None:
        from azure.mgmt.servicebus import ServiceBusManagementClient

        management_client = ServiceBusManagementClient(credential, subscription_id)
    factory = metrics_client_factory or _default_metrics_client

    by_region: dict[str, list[str]] = defaultdict(list)
    for namespace in management_client.namespaces.list():
        by_region[namespace.location].append(namespace.id)

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    export = MetricsExport(out=out, namespaces=sum(len(ids) for ids in by_region.values()))
    for location, ids in sorted(by_region.items()):
        client = factory(metrics_endpoint(location), credential)
        with client:
            for start in range(0, len(ids), MAX_RESOURCES_PER_QUERY):
                batch: Sequence[str] = ids[start : start + MAX_RESOURCES_PER_QUERY]
                for day_start, day_end in days(since, until):
                    for group, (names, aggregations) in QUERIES.items():
                        if on_step is not None:
                            on_step(f"{location} {day_start:%Y-%m-%d} {group}")
                        results = client.query_resources(
                            resource_ids=batch,
                            metric_namespace=METRIC_NAMESPACE,
                            metric_names=list(names),
                            timespan=(day_start, day_end),
                            granularity=granularity,
                            aggregations=list(aggregations),
                            filter=ENTITY_FILTER,
                            # With a filter the service returns only the top 10 series by default.
                            max_results=contract.MAX_ENTITIES_PER_NAMESPACE,
                        )
                        for result in results:
                            # Results carry their resource in each metric's id; their order is not promised.
                            namespace = next((_namespace_of(m.id) for m in result.metrics if m.id), None)
                            if namespace is None:
                                continue  # nothing measured for this resource
                            path = out / f"{namespace}.{group}.{day_start.date().isoformat()}.json"
                            path.write_text(json.dumps(rest_document(result), indent=1) + "\n", encoding="utf-8")
                            export.files.append(path)
    return export
