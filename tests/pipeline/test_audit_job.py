from __future__ import annotations

import csv
import hashlib
import json
import threading
from pathlib import Path

import pytest

from pairedbus import cli
from pairedbus.pipeline import audit_job, transform
from pairedbus.pipeline.audit_job import run_audit
from pairedbus.pipeline.prices import load_prices

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples" / "estate"


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def audited(spark_keeper, tmp_path_factory):
    spark = spark_keeper.session()
    out = tmp_path_factory.mktemp("audit")
    PERSISTED["before"] = persisted(spark)
    spark.sparkContext.setJobGroup(JOB_GROUP, "the sample audit")
    with pytest.MonkeyPatch.context() as patch:
        quarantine_started = threading.Event()
        price_pairing, write_quarantine = transform.pairing_cost, audit_job.write_quarantine

        def pairing_cost(*args, **kwargs):
            # Run one after another, the pairing is priced before the quarantine is written: it waits in vain.
            OVERLAPS["the quarantine is written while the pairing is priced"] = quarantine_started.wait(GUARD_S)
            return price_pairing(*args, **kwargs)

        def quarantine(*args, **kwargs):
            quarantine_started.set()
            return write_quarantine(*args, **kwargs)

        patch.setattr(transform, "pairing_cost", pairing_cost)
        patch.setattr(audit_job, "write_quarantine", quarantine)
        summary = run_audit(
            spark,
            str(SAMPLES / "inventory"),
            str(SAMPLES / "metrics"),
            str(out),
            load_prices(),
            costs_dir=str(SAMPLES / "costs"),
            progress=STAGES_SEEN.append,
        )
    PERSISTED["after"] = persisted(spark)
    JOBS.extend(spark.sparkContext.statusTracker().getJobIdsForGroup(JOB_GROUP))
    spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    return summary, out


JOB_GROUP = "pairedbus-sample-audit"
#: The Spark jobs the sample audit ran.
JOBS: list[int] = []


STAGES_SEEN: list[str] = []
#: Whether independent steps of the audit ran at once (pipeline/steps.py).
OVERLAPS: dict[str, bool] = {}
#: A guard against a hang when they do not: never reached when they do.
GUARD_S = 120
#: The session's persisted RDDs (cached frames, checkpoints' blocks) before and after the audit.
PERSISTED: dict[str, set[int]] = {}


def persisted(spark) -> set[int]:
    return set(spark.sparkContext._jsc.getPersistentRDDs().keys())


@pytest.mark.spark
def test_the_audit_leaves_nothing_persisted_behind(audited) -> None:
    assert PERSISTED["after"] - PERSISTED["before"] == set()  # (its clearCache also drops earlier tests' caches)


@pytest.mark.spark
def test_the_quarantine_is_written_while_the_pairing_is_priced(audited) -> None:
    # Independent steps run at once, on driver threads of their own: one's planning overlaps another's tasks.
    assert OVERLAPS == {"the quarantine is written while the pairing is priced": True}


@pytest.mark.spark
def test_the_audit_reports_each_stage_in_order(audited) -> None:
    assert STAGES_SEEN == ["read", "transform", "write", "render"]


@pytest.mark.spark
def test_the_sample_audit_runs_few_spark_jobs(audited) -> None:
    # Each job is a stage of its own for adaptive execution, with its scheduling and re-planning: the
    # sample's 218 KB took 97 jobs, among them a sampling job and a shuffle for each written table's
    # sort on read-back, two jobs for each empty-estate check and two or three for each count of the
    # summary, where one partition of these small tables needs one. Then 84; planned with AQE off on
    # one partition and without broadcasts (a job each), one job a query: 26. Then 23: the quarantine's
    # bound and the summary's counts by reason in one read of the written quarantine (two before), the
    # summary's three counts in one job. Then 24: what the bill says per pair is checkpointed beside the
    # pairing (one job more), so that the attribution, last on the run's critical path, is a small join.
    assert len(JOBS) <= MAX_JOBS, f"{len(JOBS)} jobs"


MAX_JOBS = 24


@pytest.mark.spark
def test_the_sample_audit_leaves_the_sessions_adaptive_plan_as_it_found_it(audited, spark) -> None:
    # The sample is planned with AQE off on one partition (spark_session.small_estate_conf), for its run only.
    assert spark.conf.get("spark.sql.adaptive.enabled") == "true"
    assert spark.conf.get("spark.sql.shuffle.partitions") != "1"
    assert spark.conf.get("spark.sql.autoBroadcastJoinThreshold") != "-1"


#: SHA-256 of the sample audit's outputs as `main` wrote them before issue 38 (the run's directory and the
#: repository's written as <OUT> and <REPO>): a change to the plans must leave every byte of them as it
#: was. Parquet files are not compared: parquet-mr writes a column's encodings from a hash set, in an
#: order that differs between two runs of the same tree; report.html is rendered from summary.json and
#: the CSVs' rows, and pins the Plotly release besides.
SAMPLE_OUTPUTS = {
    "attribution.csv": "7e9e005fd879ecb8a24fb47bcfba4f160e750e372dc5ec53b48a9351f845262e",
    "conflicts.csv": "9004d2f6f6ef0af35efef5ee13cd349095e7ba305fde15dcd8a81c8c9faf43c9",
    "cost.csv": "ec569e1b80d00dc8fdee4f036a74c7d213d3e550a3e08c622bc44ed1ac67ebf5",
    "pairing.csv": "dcd8c1ed0819eaffb6b0a25bb854063a5e9999d4dc40a7f5699c010763e3e7d6",
    "quarantine": "3b63f5904a4119123df6e8658f136183b60d7cec38d6c82f1135c7bbb2281519",
    "summary.json": "96dc39001d2b1fed9a2434264a6c7ad0f0fae6577694fa7616078a91fd449a32",
    "violations.csv": "cba23f2c6d856473f84e3cae0a4829110964500a3fcd156b7308ccd61c0bd3ff",
}


def output_digests(out: Path) -> dict[str, str]:
    """SAMPLE_OUTPUTS' files (the quarantine's part files together, in name order) as written under OUT."""
    places = {str(out): "<OUT>", out.as_uri(): "<OUT>", REPO.as_uri(): "<REPO>", str(REPO): "<REPO>"}
    digests = {}
    for name in SAMPLE_OUTPUTS:
        files = sorted((out / name).glob("part-*")) if (out / name).is_dir() else [out / name]
        data = b"".join(f.read_bytes() for f in files)
        for place, placeholder in sorted(places.items(), key=lambda p: -len(p[0])):
            data = data.replace(place.encode(), placeholder.encode())
        digests[name] = hashlib.sha256(data).hexdigest()
    return digests


@pytest.mark.spark
def test_the_sample_outputs_are_byte_for_byte_those_of_before(audited) -> None:
    _, out = audited
    assert output_digests(out) == SAMPLE_OUTPUTS


@pytest.mark.spark
def test_sample_estate_summary_counts(audited) -> None:
    summary, out = audited
    assert (summary.namespaces, summary.entities, summary.violations, summary.quarantined, summary.days) == (
        4,
        11,
        3,
        2,
        4,
    )
    # 4 days: two Standard namespaces at the base charge (no tiered operations) and two Premium at 1 MU.
    assert summary.estimated_cost_usd == pytest.approx(round(4 * (2 * 0.0135 * 24 + 2 * 0.928 * 24), 2))
    assert json.loads((out / "summary.json").read_text())["violations"] == 3
    assert summary.line().startswith("audit: 4 namespaces, 2 pairs, 11 entities, 3 violations, 2 quarantined")


@pytest.mark.spark
def test_sample_violations_csv_names_backlog_queues_with_slashes(audited) -> None:
    _, out = audited
    rows = read_csv(out / "violations.csv")
    assert list(rows[0]) == ["namespace", "entity", "rule", "property", "expected", "actual", "severity"]
    assert [(r["namespace"], r["entity"], r["rule"], r["property"]) for r in rows] == [
        ("contoso-orders-dr", "contoso-orders/x-servicebus-transfer/1", "backlog-queue-settings", "lockDuration"),
        ("contoso-orders-dr", "contoso-orders/x-servicebus-transfer/1", "backlog-queue-settings", "maxDeliveryCount"),
        ("fabrikam-billing", "ledger", "premium-entities-partitioned", "enablePartitioning"),
    ]


@pytest.mark.spark
def test_sample_outage_day_shows_backlog_traffic_and_pairing_operations(audited) -> None:
    _, out = audited
    rows = {(r["namespace"], r["date"]): r for r in read_csv(out / "cost.csv")}
    outage = rows[("contoso-orders-dr", "2026-11-18")]
    # 2,100 messages an hour parked for four hours; three backlog queues polled by the syphon.
    assert (outage["backlog_messages"], outage["syphon_receives"]) == ("8400", "288")
    assert outage["pairing_operations"] == str(2 * 8400 + 288)
    # Four hours of backlog traffic x three primary entities x one client.
    assert rows[("contoso-orders", "2026-11-18")]["ping_operations_estimate"] == str(4 * 60 * 3)
    assert rows[("contoso-orders", "2026-11-17")]["ping_operations_estimate"] == "0"


@pytest.mark.spark
def test_sample_quarantine_keeps_each_malformed_record_with_its_reason(audited) -> None:
    _, out = audited
    records = [
        json.loads(line) for f in sorted((out / "quarantine").glob("*.json")) for line in f.read_text().splitlines()
    ]
    assert sorted((r["input"], Path(r["source_file"]).name) for r in records) == [
        ("inventory", "estate.jsonl"),
        ("metrics", "fabrikam-billing.counters.2026-11-17.json"),
    ]
    assert all(r["reason"] and r["record"] for r in records)


@pytest.mark.spark
def test_sample_outputs_include_parquet_and_a_self_contained_report(audited, spark) -> None:
    _, out = audited
    assert spark.read.parquet(str(out / "cost.parquet")).count() == 16
    assert spark.read.parquet(str(out / "violations.parquet")).count() == 3
    html = (out / "report.html").read_text()
    # Self-contained: Plotly's bundle inline, nothing fetched (the browser test draws it).
    assert "<script src" not in html and "<link" not in html
    assert html.count('class="plotly-graph-div"') == 5


def test_bad_prices_file_fails_with_one_line_before_spark_starts(tmp_path: Path, capsys) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text("[]")
    code = cli.main(
        [
            "audit",
            "--inventory",
            str(SAMPLES / "inventory"),
            "--metrics",
            str(SAMPLES / "metrics"),
            "--out",
            str(tmp_path / "out"),
            "--prices",
            str(prices),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("pairedbus: error: --prices ") and err.count("\n") == 1


def test_missing_inventory_directory_is_a_user_error(tmp_path: Path, capsys) -> None:
    code = cli.main(
        ["audit", "--inventory", str(tmp_path / "nope"), "--metrics", str(SAMPLES / "metrics"), "--out", str(tmp_path)]
    )
    assert code == 2
    assert "--inventory" in capsys.readouterr().err


@pytest.mark.spark
def test_inventory_without_metrics_still_reports_violations_and_no_days(spark, tmp_path: Path) -> None:
    (tmp_path / "metrics").mkdir()
    summary = run_audit(
        spark, str(SAMPLES / "inventory"), str(tmp_path / "metrics"), str(tmp_path / "out"), load_prices()
    )
    assert (summary.violations, summary.days, summary.estimated_cost_usd, summary.quarantined) == (3, 0, 0.0, 1)
    assert read_csv(tmp_path / "out" / "cost.csv") == []
    assert "No metrics." in (tmp_path / "out" / "report.html").read_text()


@pytest.mark.spark
def test_sample_focus_export_is_attributed_to_pairs_next_to_the_estimate(audited) -> None:
    summary, out = audited
    rows = {(r["pair"], r["date"]): r for r in read_csv(out / "attribution.csv")}
    contoso = rows[("contoso-orders", "2026-11-16")]
    # Estimate without the pings: secondary base 0.324 + syphon compute 1.296 + logs 0.023.
    assert float(contoso["estimate_usd"]) == pytest.approx(1.643)
    # The bill: the secondary 0.324, the syphon's app at idle rates 0.3888, its workspace 0.0115;
    # the primary's own 0.324 is not pairing's.
    assert float(contoso["actual_effective"]) == pytest.approx(0.324 + 0.3888 + 0.0115)
    assert float(contoso["difference_usd"]) == pytest.approx(0.7243 - 1.643)
    fabrikam = rows[("fabrikam-billing", "2026-11-16")]
    # A reservation covers the secondary's messaging unit: billed 0, effective 20 % below list.
    assert float(fabrikam["actual_billed"]) == pytest.approx(0.3888 + 0.0115)
    assert float(fabrikam["actual_effective"]) == pytest.approx(22.272 * 0.8 + 0.3888 + 0.0115)
    assert fabrikam["currency"] == "USD"
    assert summary.actual_pairing_cost_usd == pytest.approx(4 * (0.7243 + 22.272 * 0.8 + 0.4003), abs=0.01)
    assert summary.files_read["costs"] == {"csv": 1}


@pytest.mark.spark
def test_the_headline_names_billed_and_effective_per_currency(audited) -> None:
    # Issue 21: "billed 75.77 USD" was the effective (amortised) cost; the invoice says 4.50 USD
    # (the reservation of fabrikam-billing-dr's messaging unit was paid up front: billed 0 a day).
    summary, out = audited
    assert {c: (b.billed, b.effective) for c, b in summary.bills.items()} == {"USD": (4.50, 75.77)}
    assert "bills for the pairs: billed 4.50 USD, effective (amortised) 75.77 USD" in summary.line()
    assert "estimated cost of pairing 100.94 USD" in summary.line()
    html = (out / "report.html").read_text()
    assert "billed <b>4.50 USD</b>, effective (amortised) <b>75.77 USD</b>" in html
    assert summary.duplicates_dropped["costs"] == 0


@pytest.mark.slow
@pytest.mark.spark
def test_a_file_over_the_quarantine_bound_is_refused_whole_and_the_audit_runs_without_it(
    spark, tmp_path: Path, monkeypatch
) -> None:
    """Issue 35: 1 GiB of random bytes quarantined 8,316,093 rows. A file that passes the checks before the read
    and still puts more records in quarantine than the bound is refused as unparsable: none of its records are
    kept, not even its sound ones, and the quarantine holds none of it."""
    from pairedbus.pipeline import write

    monkeypatch.setattr(write, "MAX_QUARANTINED_PER_FILE", 3)
    metrics = tmp_path / "metrics"
    metrics.mkdir()
    sample = "contoso-orders.counters.2026-11-18.json"
    (metrics / sample).write_bytes((SAMPLES / "metrics" / sample).read_bytes())
    with (metrics / "mostly-bad.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["namespace", "metric", "entity", "timestamp", "total", "interval_minutes"])
        writer.writerow(["hostile-ns", "IncomingRequests", "orders", "2026-11-18T03:00:00Z", "5", "60"])
        writer.writerows([["hostile-ns", "IncomingRequests", "orders", f"not a time {i}", "1", "60"] for i in range(4)])

    summary = run_audit(spark, str(SAMPLES / "inventory"), str(metrics), str(tmp_path / "out"), load_prices())

    [(uri, reason)] = summary.files_refused.items()
    assert Path(uri).name == "mostly-bad.csv"
    assert reason.startswith("unparsable: more than 3 of its records quarantined (mostly: a column of the wrong type")
    assert (summary.namespaces, summary.days) == (4, 1)  # hostile-ns's sound row is not read either
    quarantined = (tmp_path / "out" / "quarantine").glob("*.json")
    assert not any("mostly-bad.csv" in f.read_text() for f in quarantined)
