"""Azure data shared by the exporter tests (tests/exports) and the audit pipeline's (tests/pipeline): a
subscription, namespace ids, and Azure Monitor's metrics REST response (the shape `exports.metrics` writes
and `pipeline.metrics` reads: Metrics - List, api-version 2023-10-01)."""

from __future__ import annotations

from typing import Any

SUBSCRIPTION = "00000000-0000-0000-0000-000000000001"


def ns_id(name: str) -> str:
    return f"/subscriptions/{SUBSCRIPTION}/resourceGroups/rg/providers/Microsoft.ServiceBus/namespaces/{name}"


def series(entity: str | None, *points: tuple[str, float | None]) -> dict[str, Any]:
    """One time series of an entity (None: no `entityname` dimension); a point's value None has no total."""
    meta = (
        [] if entity is None else [{"name": {"value": "entityname", "localizedValue": "entityname"}, "value": entity}]
    )
    return {
        "metadatavalues": meta,
        "data": [{"timeStamp": t} | ({} if v is None else {"total": v}) for t, v in points],
    }


def metrics_response(
    namespace: str,
    metric: str,
    timeseries: list[dict[str, Any]],
    *,
    interval: str = "PT1M",
    cost: int = 0,
    **metric_fields: Any,
) -> dict[str, Any]:
    """A metrics response for one metric of a namespace; `metric_fields` are further fields of the metric
    (`displayDescription`, `errorCode`)."""
    return {
        "cost": cost,
        "timespan": "2026-11-18T00:00:00Z/2026-11-19T00:00:00Z",
        "interval": interval,
        "namespace": "Microsoft.ServiceBus/namespaces",
        "resourceregion": "westeurope",
        "value": [
            {
                "id": f"{ns_id(namespace)}/providers/Microsoft.Insights/metrics/{metric}",
                "type": "Microsoft.Insights/metrics",
                "name": {"value": metric, "localizedValue": metric},
                "unit": "Count",
                **metric_fields,
                "timeseries": timeseries,
            }
        ],
    }
