from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from pairedbus.pipeline.inventory import REASON_CORRUPT
from pairedbus.pipeline.metrics import (
    REASON_BAD_INTERVAL,
    REASON_BAD_TIMESTAMP,
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
