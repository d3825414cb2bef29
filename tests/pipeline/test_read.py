"""Reading the estate (`pipeline/read.py`): every input listed, files already known unreadable refused
before reading, and metric rows limited to the UTC days asked for."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from pairedbus.pipeline.read import read_estate

pytestmark = pytest.mark.spark

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "estate"


def test_metric_rows_are_limited_to_the_days_asked_for_and_a_refused_file_is_not_read(spark) -> None:
    whole = read_estate(spark, str(SAMPLES / "inventory"), str(SAMPLES / "metrics"))
    refused_uri = whole.files["metrics"].by_format["json"][0]
    estate = read_estate(
        spark,
        str(SAMPLES / "inventory"),
        str(SAMPLES / "metrics"),
        since=date(2026, 11, 17),
        until=date(2026, 11, 17),
        refuse={refused_uri: "not readable"},
    )
    assert estate.files["metrics"].refused == {refused_uri: "not readable"}
    assert refused_uri not in estate.files["metrics"].by_format["json"]
    days = {r.day for r in estate.metrics.rows.selectExpr("to_date(timestamp) AS day").distinct().collect()}
    assert days == {date(2026, 11, 17)}
    assert estate.charges is None and estate.charges_quarantine is None
    assert set(estate.files) == {"inventory", "metrics"}
