"""Bad data is never counted twice nor dropped silently: one test per case of issue 14, item 3."""

from __future__ import annotations

import csv
import gzip
import json
import shutil
from datetime import date
from pathlib import Path

import pytest

from pairedbus import cli, contract
from pairedbus.errors import NoDataError
from pairedbus.pipeline.audit_job import run_audit
from pairedbus.pipeline.inventory import REASON_CORRUPT, REASON_IMPOSSIBLE, REASON_NO_SKU, read_inventory
from pairedbus.pipeline.metrics import REASON_CONFLICT, REASON_NEGATIVE, read_metrics
from pairedbus.pipeline.prices import load_prices
from pairedbus.pipeline.sources import REFUSED_GZIP_CASE, REFUSED_UNKNOWN, list_local
from tests.azure_monitor import metrics_response, ns_id, series

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples" / "estate"
BACKLOG = contract.backlog_queue_name("contoso", 1)


def requests_doc(total: float = 100.0, hour: str = "09") -> dict:
    return metrics_response(
        "contoso", "IncomingRequests", [series("orders", (f"2026-11-18T{hour}:00:00Z", total))], interval="PT1H"
    )


def totals(spark, directory: Path) -> list[tuple[str, float, int]]:
    rows = read_metrics(spark, str(directory)).rows.orderBy("timestamp").collect()
    return [(r.entity, r.total, r.duplicates) for r in rows]


def quarantine_reasons(frame) -> list[str]:
    return sorted(r.reason for r in frame.collect())


@pytest.mark.spark
def test_a_copied_metrics_file_is_counted_once_and_the_copy_is_reported(spark, tmp_path: Path) -> None:
    text = json.dumps(requests_doc(100.0))
    (tmp_path / "contoso.counters.2026-11-18.json").write_text(text)
    (tmp_path / "contoso.counters.2026-11-18 (copy).json").write_text(text)
    assert totals(spark, tmp_path) == [("orders", 100.0, 1)]


@pytest.mark.spark
def test_the_same_document_as_json_and_jsonl_is_counted_once(spark, tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(requests_doc(100.0), indent=2))
    (tmp_path / "a.jsonl").write_text(json.dumps(requests_doc(100.0)) + "\n")
    assert totals(spark, tmp_path) == [("orders", 100.0, 1)]


@pytest.mark.spark
def test_conflicting_copies_of_a_data_point_are_quarantined_not_guessed(spark, tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(requests_doc(100.0)))
    (tmp_path / "b.json").write_text(json.dumps(requests_doc(250.0)))
    metrics = read_metrics(spark, str(tmp_path))
    assert metrics.rows.count() == 0
    [record] = metrics.quarantine.collect()
    assert record.reason == REASON_CONFLICT
    assert (json.loads(record.record)["lowest_total"], json.loads(record.record)["highest_total"]) == (100.0, 250.0)


@pytest.mark.spark
def test_upper_case_gzip_and_parquet_and_csv_metrics_are_all_read(spark, tmp_path: Path) -> None:
    (tmp_path / "A.JSON").write_text(json.dumps(requests_doc(1.0, "01")))
    with gzip.open(tmp_path / "b.jsonl.gz", "wt") as handle:
        handle.write(json.dumps(requests_doc(2.0, "02")) + "\n")
    with (tmp_path / "c.CSV").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["namespace", "metric", "entity", "timestamp", "total", "interval_minutes"])
        writer.writerow(["Contoso", "IncomingRequests", "orders", "2026-11-18T03:00:00Z", "3", "60"])
    spark.createDataFrame(
        [("contoso", "IncomingRequests", "orders", "2026-11-18 04:00:00", 4.0, 60)],
        "namespace string, metric string, entity string, timestamp string, total double, interval_minutes long",
    ).selectExpr(
        "namespace", "metric", "entity", "cast(timestamp as timestamp) timestamp", "total", "interval_minutes"
    ).coalesce(1).write.parquet(str(tmp_path / "d.parquet"))
    assert [t for _, t, _ in totals(spark, tmp_path)] == [1.0, 2.0, 3.0, 4.0]


def test_files_of_unknown_formats_are_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "_SUCCESS").write_text("")
    (tmp_path / "ok.json").write_text("{}")
    files = list_local(str(tmp_path), "metrics")
    assert files.refused == {str((tmp_path / "notes.txt").resolve()): REFUSED_UNKNOWN}
    assert files.readable == 1


@pytest.mark.spark
def test_negative_totals_are_quarantined_with_the_reason(spark, tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(requests_doc(-5.0)))
    metrics = read_metrics(spark, str(tmp_path))
    assert metrics.rows.count() == 0
    assert quarantine_reasons(metrics.quarantine) == [REASON_NEGATIVE]


@pytest.mark.spark
def test_impossible_inventory_values_are_quarantined(spark, write_lines) -> None:
    directory = write_lines(
        "inv/a.jsonl", [{"id": f"{ns_id('contoso')}/queues/orders", "properties": {"maxDeliveryCount": -1}}]
    )
    inventory = read_inventory(spark, str(directory))
    assert inventory.resources.count() == 0
    assert quarantine_reasons(inventory.quarantine) == [REASON_IMPOSSIBLE]


def backlog_queue(**drift: object) -> dict:
    return {
        "id": f"{ns_id('contoso-dr')}/queues/{BACKLOG.replace('/', '~')}",
        "name": BACKLOG,
        "properties": {**contract.BACKLOG_QUEUE_PROPERTIES, **drift},
    }


@pytest.mark.spark
def test_an_exact_duplicate_resource_is_dropped_once_and_counted(spark, write_lines) -> None:
    directory = write_lines("inv/a.jsonl", [backlog_queue(), backlog_queue()])
    rows = read_inventory(spark, str(directory)).resources.collect()
    assert [(r.entity, r.duplicates) for r in rows] == [(BACKLOG, 1)]


@pytest.mark.spark
def test_a_drifted_duplicate_of_a_backlog_queue_is_reported_with_its_drift(spark, tmp_path: Path) -> None:
    inventory = tmp_path / "inventory"
    inventory.mkdir()
    namespaces = [
        {"id": ns_id(n), "name": n, "sku": {"name": "Standard"}, "properties": {"disableLocalAuth": True}}
        for n in ("contoso", "contoso-dr")
    ]
    (inventory / "arm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [*namespaces, backlog_queue()]))
    (inventory / "older.jsonl").write_text(json.dumps(backlog_queue(lockDuration="PT30S")) + "\n")
    (tmp_path / "metrics").mkdir()
    summary = run_audit(spark, str(inventory), str(tmp_path / "metrics"), str(tmp_path / "out"), load_prices())
    assert summary.conflicting_resources == 1
    conflicts = list(csv.DictReader((tmp_path / "out" / "conflicts.csv").open()))
    assert [(c["entity"], c["versions"], c["differing"]) for c in conflicts] == [(BACKLOG, "2", "lockDuration")]
    violations = list(csv.DictReader((tmp_path / "out" / "violations.csv").open()))
    assert (BACKLOG, "lockDuration", "PT30S") in [(v["entity"], v["property"], v["actual"]) for v in violations]


def test_an_empty_estate_exits_non_zero_before_spark(tmp_path: Path, capsys) -> None:
    (tmp_path / "inventory").mkdir()
    (tmp_path / "metrics").mkdir()
    code = cli.main(
        [
            "audit",
            "--inventory",
            str(tmp_path / "inventory"),
            "--metrics",
            str(tmp_path / "metrics"),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "empty estate" in err and err.count("\n") == 1


@pytest.mark.spark
def test_a_date_range_with_no_data_is_an_error(spark, tmp_path: Path) -> None:
    with pytest.raises(NoDataError, match="no metrics in that date range") as raised:
        run_audit(
            spark,
            str(SAMPLES / "inventory"),
            str(SAMPLES / "metrics"),
            str(tmp_path / "out"),
            load_prices(),
            since=date(2025, 1, 1),
            until=date(2025, 1, 31),
        )
    assert raised.value.exit_code == 2


@pytest.mark.spark
def test_every_count_appears_in_the_summary_and_the_report(spark, tmp_path: Path) -> None:
    metrics = tmp_path / "metrics"
    shutil.copytree(SAMPLES / "metrics", metrics)
    copied = sorted(metrics.glob("*.json"))[0]
    shutil.copy(copied, metrics / f"copy-of-{copied.name}")
    (metrics / "readme.txt").write_text("not data")
    summary = run_audit(spark, str(SAMPLES / "inventory"), str(metrics), str(tmp_path / "out"), load_prices())
    assert summary.duplicates_dropped["metrics"] == 3 * 3 * 24  # three metrics x three queues x 24 hours
    assert list(summary.files_refused.values()) == [REFUSED_UNKNOWN]
    assert summary.files_read["metrics"] == {"json": 17}
    html = (tmp_path / "out" / "report.html").read_text()
    assert "readme.txt" in html and "metrics: 216" in html


def test_an_upper_case_gzip_suffix_is_refused_by_name_not_misread(tmp_path: Path) -> None:
    with gzip.open(tmp_path / "a.JSON.GZ", "wt") as handle:
        handle.write("{}")
    files = list_local(str(tmp_path), "metrics")
    assert files.refused == {str((tmp_path / "a.JSON.GZ").resolve()): REFUSED_GZIP_CASE}


@pytest.mark.spark
def test_inventory_from_csv_reads_the_flat_layout_and_quarantines_wrong_types(spark, tmp_path: Path) -> None:
    with (tmp_path / "queues.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "name", "maxDeliveryCount", "lockDuration"])
        writer.writerow([f"{ns_id('contoso')}/queues/orders", "orders", "10", "PT1M"])
        writer.writerow([f"{ns_id('contoso')}/queues/payments", "payments", "ten", "PT1M"])
        writer.writerow([ns_id("contoso"), "contoso", "", ""])
    with (tmp_path / "namespaces.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "sku_name", "sku_capacity"])
        writer.writerow([ns_id("fabrikam"), "Premium", "2"])
    inventory = read_inventory(spark, str(tmp_path))
    rows = sorted((r.kind, r.entity, r.maxDeliveryCount, r.sku_name) for r in inventory.resources.collect())
    assert rows == [("namespace", None, None, "Premium"), ("queue", "orders", 10, None)]
    assert quarantine_reasons(inventory.quarantine) == sorted([REASON_CORRUPT, REASON_NO_SKU])


def corrupt_pages(directory: Path) -> Path:
    """A Parquet file whose magic and footer are sound and whose first data page is not: only a read
    of its data fails (in the middle of the job, not when it is opened)."""
    [part] = sorted(directory.glob("*.parquet"))
    data = bytearray(part.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")
    end = len(data) - footer - 8
    data[4:end] = b"\xff" * (end - 4)
    part.write_bytes(bytes(data))
    return part


@pytest.mark.spark
def test_a_parquet_file_that_fails_only_when_decoded_is_refused_and_the_audit_goes_on(spark, tmp_path: Path) -> None:
    metrics = tmp_path / "metrics"
    shutil.copytree(SAMPLES / "metrics", metrics)
    rows = [("contoso-orders", "IncomingRequests", "orders", f"2026-11-18T{h:02d}:00:00", 1.0, 60) for h in range(24)]
    frame = spark.createDataFrame(
        rows, "namespace string, metric string, entity string, timestamp string, total double, interval_minutes long"
    )
    frame.withColumn("timestamp", frame.timestamp.cast("timestamp")).coalesce(1).write.parquet(str(tmp_path / "p"))
    broken = corrupt_pages(tmp_path / "p")
    shutil.copy(broken, metrics / "extra.parquet")

    summary = run_audit(spark, str(SAMPLES / "inventory"), str(metrics), str(tmp_path / "out"), load_prices())

    [(uri, reason)] = summary.files_refused.items()
    assert Path(uri).name == "extra.parquet" and reason.startswith("unreadable: ")
    assert (summary.namespaces, summary.days, summary.violations) == (4, 4, 3)
