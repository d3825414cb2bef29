from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from azure.monitor.querymetrics import MetricsQueryResult

from pairedbus.errors import UserError
from pairedbus.exports.metrics import ENTITY_FILTER, days, export_metrics, metrics_endpoint, parse_since
from tests.azure_monitor import SUBSCRIPTION, metrics_response, ns_id, series


def rest_response(namespace: str, metric: str) -> dict:
    return metrics_response(
        namespace,
        metric,
        [series("orders", ("2026-11-18T00:00:00Z", 12.0))],
        cost=59,
        displayDescription="Count of incoming messages.",
        errorCode="Success",
    )


def arm_client(mocker):
    client = mocker.MagicMock()
    namespace = mocker.Mock(id=ns_id("contoso"), location="West Europe")
    client.namespaces.list.return_value = [namespace]
    return client


def test_each_response_is_written_back_in_rest_shape_per_namespace_and_day(mocker, tmp_path: Path) -> None:
    metrics = mocker.MagicMock()
    metrics.__enter__.return_value = metrics
    metrics.query_resources.side_effect = lambda **kw: [
        MetricsQueryResult._from_generated(rest_response("contoso", kw["metric_names"][0]))
    ]
    factory = mocker.Mock(return_value=metrics)
    since = datetime(2026, 11, 18, tzinfo=UTC)

    result = export_metrics(
        SUBSCRIPTION,
        tmp_path,
        since=since,
        until=since + timedelta(days=1),
        credential=object(),
        management_client=arm_client(mocker),
        metrics_client_factory=factory,
    )

    factory.assert_called_once_with("https://westeurope.metrics.monitor.azure.com", mocker.ANY)
    counters = metrics.query_resources.call_args_list[0].kwargs
    assert counters["resource_ids"] == [ns_id("contoso")]
    assert counters["metric_names"] == ["IncomingMessages", "OutgoingMessages", "IncomingRequests"]
    assert counters["filter"] == ENTITY_FILTER == "EntityName eq '*'"
    assert counters["aggregations"] == ["Total"]
    assert counters["granularity"] == timedelta(minutes=1)
    assert counters["timespan"] == (since, since + timedelta(days=1))
    assert counters["max_results"] >= 10_000  # the service's default of 10 series would drop entities
    assert metrics.query_resources.call_args_list[1].kwargs["metric_names"] == ["ActiveMessages"]
    assert sorted(p.name for p in result.files) == [
        "contoso.counters.2026-11-18.json",
        "contoso.gauges.2026-11-18.json",
    ]
    document = json.loads((tmp_path / "contoso.counters.2026-11-18.json").read_text())
    expected = rest_response("contoso", "IncomingMessages")
    assert document == expected


def test_default_metrics_client_is_the_querymetrics_client(mocker, tmp_path: Path) -> None:
    mocker.patch("azure.identity.DefaultAzureCredential")
    client_class = mocker.patch("azure.monitor.querymetrics.MetricsClient")
    client_class.return_value.__enter__.return_value = client_class.return_value
    client_class.return_value.query_resources.return_value = []
    since = datetime(2026, 11, 18, tzinfo=UTC)

    export_metrics(
        SUBSCRIPTION, tmp_path, since=since, until=since + timedelta(hours=1), management_client=arm_client(mocker)
    )

    assert client_class.call_args.args[0] == "https://westeurope.metrics.monitor.azure.com"
    assert client_class.return_value.query_resources.call_count == 2


def test_days_split_the_window_at_utc_midnight() -> None:
    start = datetime(2026, 11, 17, 18, tzinfo=UTC)
    assert list(days(start, start + timedelta(hours=12))) == [
        (start, datetime(2026, 11, 18, tzinfo=UTC)),
        (datetime(2026, 11, 18, tzinfo=UTC), datetime(2026, 11, 18, 6, tzinfo=UTC)),
    ]


def test_since_accepts_relative_and_iso_times() -> None:
    now = datetime(2026, 11, 21, 12, tzinfo=UTC)
    assert parse_since("7d", now=now) == datetime(2026, 11, 14, 12, tzinfo=UTC)
    assert parse_since("36h", now=now) == datetime(2026, 11, 20, 0, tzinfo=UTC)
    assert parse_since("2026-11-01", now=now) == datetime(2026, 11, 1, tzinfo=UTC)
    with pytest.raises(UserError, match="--since yesterday"):
        parse_since("yesterday", now=now)


def test_metrics_endpoint_is_regional() -> None:
    assert metrics_endpoint("North Europe") == "https://northeurope.metrics.monitor.azure.com"
