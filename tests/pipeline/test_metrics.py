from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from pairedbus.pipeline.inventory import REASON_CORRUPT
from pairedbus.pipeline.metrics import (
    REASON_BAD_INTERVAL,
    REASON_BAD_TIMESTAMP,
    REASON_CONFLICT,
    REASON_NO_ENTITY,
    read_metrics,
)
from tests.azure_monitor import metrics_response, series

pytestmark = pytest.mark.spark


def test_responses_become_one_row_per_data_point(spark, tmp_path: Path) -> None:
    doc = metrics_response(
        "Contoso-DR",
        "IncomingMessages",
        [
            series("contoso~x-servicebus-transfer~0", ("2026-11-18T09:00:00Z", 7.0), ("2026-11-18T09:01:00Z", None)),
            series("orders", ("2026-11-18T09:00:00Z", 3.0)),
        ],
    )
    (tmp_path / "m.json").write_text(json.dumps(doc, indent=1))

    metrics = read_metrics(spark, str(tmp_path))
    rows = sorted(tuple(r) for r in metrics.rows.drop("duplicates").collect())

    assert rows == [
        ("contoso-dr", "IncomingMessages", "contoso/x-servicebus-transfer/0", datetime(2026, 11, 18, 9, 0), 7.0, 1),
        ("contoso-dr", "IncomingMessages", "orders", datetime(2026, 11, 18, 9, 0), 3.0, 1),
    ]
    assert metrics.quarantine.count() == 0  # a point without `total` is "no data", not malformed


def test_unreadable_documents_series_and_points_are_quarantined(spark, tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text('{"value": [')
    (tmp_path / "no-dimension.json").write_text(
        json.dumps(metrics_response("a", "IncomingRequests", [series(None, ("2026-11-18T00:00:00Z", 1.0))]))
    )
    (tmp_path / "bad-time.json").write_text(
        json.dumps(
            metrics_response(
                "a", "IncomingRequests", [series("q", ("2026-11-18T25:00:00Z", 1.0), ("2026-11-18T01:00:00Z", 2.0))]
            )
        )
    )
    (tmp_path / "bad-grain.json").write_text(
        json.dumps(
            metrics_response("a", "IncomingRequests", [series("q", ("2026-11-18T00:00:00Z", 1.0))], interval="weekly")
        )
    )

    metrics = read_metrics(spark, str(tmp_path))

    reasons = sorted(r.reason for r in metrics.quarantine.collect())
    assert reasons == sorted([REASON_CORRUPT, REASON_NO_ENTITY, REASON_BAD_TIMESTAMP, REASON_BAD_INTERVAL])
    assert [(r.entity, r.total) for r in metrics.rows.collect()] == [("q", 2.0)]


def test_hourly_grain_counts_sixty_minutes(spark, tmp_path: Path) -> None:
    doc = metrics_response("a", "IncomingMessages", [series("q", ("2026-11-18T00:00:00Z", 1.0))], interval="PT1H")
    (tmp_path / "h.json").write_text(json.dumps(doc))
    assert [r.interval_minutes for r in read_metrics(spark, str(tmp_path)).rows.collect()] == [60]


def test_a_point_with_an_unreadable_time_is_quarantined_once_and_counted_nowhere(spark, tmp_path: Path) -> None:
    # Its total is negative too: the time is what makes it unreadable, and it is not a row of any series.
    doc = metrics_response(
        "a", "IncomingRequests", [series("q", ("2026-11-18T25:00:00Z", -1.0), ("2026-11-18T01:00:00Z", 2.0))]
    )
    (tmp_path / "m.json").write_text(json.dumps(doc))
    (tmp_path / "copy.json").write_text(json.dumps(doc))

    metrics = read_metrics(spark, str(tmp_path))

    assert sorted(r.reason for r in metrics.quarantine.collect()) == [REASON_BAD_TIMESTAMP, REASON_BAD_TIMESTAMP]
    assert [(r.entity, r.total, r.duplicates) for r in metrics.rows.collect()] == [("q", 2.0, 1)]


def test_duplicate_detection_and_the_cost_aggregation_share_one_shuffle(spark, tmp_path: Path) -> None:
    from pairedbus.pipeline.namespace_cost import traffic_grains

    doc = metrics_response("a", "IncomingRequests", [series("q", ("2026-11-18T00:00:00Z", 1.0))])
    (tmp_path / "m.json").write_text(json.dumps(doc))

    plan = traffic_grains(read_metrics(spark, str(tmp_path)).rows)._jdf.queryExecution().executedPlan().toString()

    assert plan.count("Exchange ") == 1
    assert plan.count("try_to_timestamp") + plan.count("as timestamp)") == 1  # each point's time parsed once


def test_a_quarantined_point_shows_its_time_and_total(spark, tmp_path: Path) -> None:
    # Points are read as `timeStamp` and `total` only: a gauge's point (Average, Maximum) shows its time alone.
    counter = series("q", ("2026-11-18T25:00:00Z", 4.0))
    gauge = series("q", ("2026-11-18T26:00:00Z", None))
    gauge["data"][0] |= {"average": 2.5, "maximum": 3.0}
    (tmp_path / "counter.json").write_text(json.dumps(metrics_response("a", "IncomingRequests", [counter])))
    (tmp_path / "gauge.json").write_text(json.dumps(metrics_response("a", "ActiveMessages", [gauge])))

    records = [json.loads(r.record)["p"] for r in read_metrics(spark, str(tmp_path)).quarantine.collect()]

    assert sorted(records, key=lambda p: p["timeStamp"]) == [
        {"timeStamp": "2026-11-18T25:00:00Z", "total": 4.0},
        {"timeStamp": "2026-11-18T26:00:00Z"},
    ]


def test_a_wrongly_typed_value_the_audit_does_not_read_leaves_the_document_readable(spark, tmp_path: Path) -> None:
    doc = metrics_response("a", "IncomingRequests", [series("q", ("2026-11-18T00:00:00Z", 5.0))])
    doc["value"][0]["timeseries"][0]["data"][0]["average"] = {"not": "a number"}
    (tmp_path / "m.json").write_text(json.dumps(doc))

    metrics = read_metrics(spark, str(tmp_path))

    assert [(r.entity, r.total) for r in metrics.rows.collect()] == [("q", 5.0)]
    assert metrics.quarantine.count() == 0


def test_a_second_read_in_the_same_jvm_compiles_no_new_code(spark, tmp_path: Path) -> None:
    # A Python lambda's variable is named from PySpark's process-wide counter and written into the
    # generated code: each read then missed Spark's code cache and the parse stage was compiled again.
    doc = metrics_response("a", "IncomingRequests", [series("q", ("2026-11-18T00:00:00Z", 1.0))])
    (tmp_path / "m.json").write_text(json.dumps(doc))
    compiled = spark._jvm.org.apache.spark.metrics.source.CodegenMetrics.METRIC_COMPILATION_TIME()

    def read() -> list:
        return read_metrics(spark, str(tmp_path)).rows.collect()

    first = read()
    before = compiled.getCount()
    second = read()

    assert second == first
    assert compiled.getCount() - before == 0


def test_the_series_are_shuffled_and_their_points_become_rows_after(spark, tmp_path: Path) -> None:
    # A point's namespace, metric, entity and file travel once per series, not once per point: at 10M points
    # the shuffle carried a row of three strings per point (the old plan exploded all three levels below it).
    from pairedbus.pipeline.namespace_cost import traffic_grains

    doc = metrics_response("a", "IncomingRequests", [series("q", ("2026-11-18T00:00:00Z", 1.0))])
    (tmp_path / "m.json").write_text(json.dumps(doc))

    plan = traffic_grains(read_metrics(spark, str(tmp_path)).rows)._jdf.queryExecution().executedPlan().toString()
    above, below = plan.split("Exchange ", 1)

    assert below.count("Generate ") == 2  # a document's metrics, a metric's series
    assert above.count("Generate ") == 1  # a series' points


def test_a_point_in_a_document_and_in_a_flat_file_is_one_row(spark, tmp_path: Path) -> None:
    # Flat rows are shuffled as series of one point: their copies meet the documents' points, on any day.
    doc = metrics_response(
        "A", "IncomingRequests", [series("q", ("2026-11-18T23:59:00Z", 2.0), ("2026-11-19T00:00:00Z", 3.0))]
    )
    (tmp_path / "m.json").write_text(json.dumps(doc))
    (tmp_path / "m.csv").write_text(
        "namespace,metric,entity,timestamp,total,interval_minutes\n"
        "a,IncomingRequests,q,2026-11-19T00:00:00Z,3.0,1\n"
        "a,IncomingRequests,q,2026-11-18T23:59:00Z,5.0,1\n"
    )

    metrics = read_metrics(spark, str(tmp_path))

    assert [(r.timestamp, r.total, r.duplicates) for r in metrics.rows.collect()] == [
        (datetime(2026, 11, 19, 0, 0), 3.0, 1)
    ]
    assert [r.reason for r in metrics.quarantine.collect()] == [REASON_CONFLICT]
