"""The cost of pairing per pair, checked by hand on the sample estate (issue 14, item 1)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from pairedbus.pipeline.audit_job import run_audit
from pairedbus.pipeline.pairing_cost import PAIRING_COLUMNS, discover_pairs
from pairedbus.pipeline.prices import BUNDLED_PRICES, PriceTable

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples" / "estate"

pytestmark = pytest.mark.spark


def small_included_tier() -> PriceTable:
    """The bundled table with 10,000 included operations a month instead of 13 million, so that
    the sample's few operations cross into the paid tier (0.80 USD a million)."""
    import json

    raw = json.loads(BUNDLED_PRICES.read_text())
    raw["standard"]["operation_tiers_per_month"] = [
        {"up_to_millions": 0.01, "price_per_million": 0.0},
        {"up_to_millions": None, "price_per_million": 0.80},
    ]
    return PriceTable.model_validate(raw)


@pytest.fixture(scope="module")
def pairing_rows(spark_keeper, tmp_path_factory) -> dict[tuple[str, str], dict[str, str]]:
    spark = spark_keeper.session()
    out = tmp_path_factory.mktemp("pairing")
    run_audit(spark, str(SAMPLES / "inventory"), str(SAMPLES / "metrics"), str(out), small_included_tier())
    with (out / "pairing.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == list(PAIRING_COLUMNS)
    return {(r["pair"], r["date"]): r for r in rows}


def test_outage_day_of_the_contoso_pair_column_by_column(pairing_rows) -> None:
    row = pairing_rows[("contoso-orders", "2026-11-18")]
    assert (row["primary"], row["secondary"], row["backlog_queues"]) == ("contoso-orders", "contoso-orders-dr", "3")
    # 2,100 messages an hour (orders 1200 + payments 300 + events 600) parked for 4 hours.
    assert row["parked_messages"] == "8400"
    # Billed four times instead of twice: two extra operations each.
    assert row["parked_extra_operations"] == "16800"
    # 15-minute long polls: 4 an hour x 24 hours x 3 backlog queues.
    assert row["syphon_receives"] == "288"
    # One ping a minute for 4 hours x 3 primary entities x 1 client.
    assert row["ping_operations"] == "720"
    assert row["pairing_operations"] == str(16800 + 288 + 720)
    # Standard base charge: 0.0135 USD an hour x 24.
    assert float(row["secondary_base_usd"]) == pytest.approx(0.324)
    # The secondary's month so far: 288 (16th) + 288 (17th) + 17,088 (18th) operations, all pairing's.
    # 10,000 are included; the 18th pays for 17,664 - 10,000 = 7,664 at 0.80 USD a million.
    assert float(row["secondary_operations_usd"]) == pytest.approx(7664 * 0.80 / 1e6, abs=1e-6)
    # The primary is far past its included operations: its 720 pings cost 0.80 USD a million.
    assert float(row["ping_operations_usd"]) == pytest.approx(720 * 0.80 / 1e6, abs=1e-6)
    # Container Apps: 86,400 s x (0.5 vCPU x 0.000024 + 1 GiB x 0.000003); Log Analytics 0.01 GB x 2.30.
    assert float(row["syphon_compute_usd"]) == pytest.approx(86400 * (0.5 * 0.000024 + 1.0 * 0.000003))
    assert float(row["syphon_logs_usd"]) == pytest.approx(0.023)
    total = 0.324 + 7664 * 0.8e-6 + 720 * 0.8e-6 + 1.296 + 0.023
    assert float(row["total_usd"]) == pytest.approx(total, abs=2e-6)
    # Mean of the four days (16th, 17th: 1.643; 19th: 1.643 + 288 operations at 0.80/M) x 30 days.
    mean = (1.643 + 1.643 + total + 1.643 + 288 * 0.8e-6) / 4
    assert float(row["monthly_projection_usd"]) == pytest.approx(mean * 30, abs=1e-5)


def test_premium_pair_pays_messaging_units_and_no_operations(pairing_rows) -> None:
    row = pairing_rows[("fabrikam-billing", "2026-11-16")]
    assert (row["backlog_queues"], row["syphon_receives"], row["parked_messages"]) == ("2", "192", "0")
    assert float(row["secondary_base_usd"]) == pytest.approx(0.928 * 24)  # one messaging unit
    assert float(row["secondary_operations_usd"]) == 0.0


def test_pairs_come_from_tags_too_when_no_backlog_queue_exists_yet(spark) -> None:
    from pairedbus import contract

    rows = [
        ("namespace", n, "", {contract.TAG_PAIR: "orders-pair", contract.TAG_ROLE: role})
        for n, role in (("orders-a", contract.ROLE_PRIMARY), ("orders-b", contract.ROLE_SECONDARY))
    ]
    frame = spark.createDataFrame(rows, "kind string, namespace string, entity string, tags map<string,string>")
    assert [tuple(r) for r in discover_pairs(frame).collect()] == [("orders-pair", "orders-a", "orders-b", 0)]


def test_focus_rows_from_gzip_csv_and_parquet_with_unreadable_rows_quarantined(spark, tmp_path: Path) -> None:
    import gzip

    from pairedbus.pipeline.focus import REASON_FOCUS_ROW, read_focus

    header = "BilledCost,EffectiveCost,BillingCurrency,ChargePeriodStart,ResourceId,ServiceName,Tags\n"
    rid = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ServiceBus/namespaces/Contoso-DR"
    with gzip.open(tmp_path / "part-1.CSV.gz", "wt") as handle:
        handle.write(header + f'1.5,1.25,USD,2026-11-16T00:00:00Z,{rid},Service Bus,"{{}}"\n')
        handle.write(f"lots,1,USD,2026-11-16T00:00:00Z,{rid},SB,\n")  # BilledCost is not a number
    spark.createDataFrame(
        [(2.0, 2.0, "USD", "2026-11-17T00:00:00Z", rid, "Service Bus", '{"pairedbus-pair": "p"}')],
        "BilledCost double, EffectiveCost double, BillingCurrency string, ChargePeriodStart string, ResourceId string, "
        "ServiceName string, Tags string",
    ).coalesce(1).write.parquet(str(tmp_path / "part-2.parquet"))
    charges, quarantine, files = read_focus(spark, str(tmp_path))
    got = sorted((str(r.date), r.resource_id, r.billed, r.effective, r.tag_pair) for r in charges.collect())
    assert got == [
        ("2026-11-16", rid.lower(), 1.5, 1.25, None),
        ("2026-11-17", rid.lower(), 2.0, 2.0, "p"),
    ]
    assert [r.reason for r in quarantine.collect()] == [REASON_FOCUS_ROW]
    assert files.refused == {}
