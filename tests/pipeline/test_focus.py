"""FOCUS cost exports: one charge counted once, amounts never summed across currencies, amounts
that cannot be real quarantined with the reason (issue 21, item 5)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from pairedbus.pipeline.focus import (
    MAX_ABS_AMOUNT,
    REASON_ABSURD,
    REASON_CHARGE_CONFLICT,
    REASON_CURRENCY,
    REASON_NOT_FINITE,
    read_focus,
)
from pairedbus.pipeline.sources import REFUSED_NOT_PARQUET

pytestmark = pytest.mark.spark

RID = "/subscriptions/s/resourcegroups/rg/providers/microsoft.servicebus/namespaces/contoso-dr"
HEADER = (
    "BilledCost",
    "EffectiveCost",
    "BillingCurrency",
    "BillingAccountId",
    "ChargePeriodStart",
    "ChargePeriodEnd",
    "ChargeCategory",
    "ResourceId",
    "SkuPriceId",
    "ServiceName",
    "Tags",
)


def charge(billed: object, effective: object, day: int = 16, currency: str = "USD", sku: str = "base") -> tuple:
    return (
        billed,
        effective,
        currency,
        "acct-1",
        f"2026-11-{day}T00:00:00Z",
        f"2026-11-{day + 1}T00:00:00Z",
        "Usage",
        RID,
        sku,
        "Service Bus",
        "{}",
    )


def write(path: Path, rows: list[tuple]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        writer.writerows(rows)


def charges_of(spark, directory: Path):
    charges, quarantine, files = read_focus(spark, str(directory))
    got = sorted((str(r.date), r.currency, r.billed, r.effective, r.duplicates) for r in charges.collect())
    return got, sorted(r.reason for r in quarantine.collect()), files


def test_the_same_export_present_twice_counts_each_charge_once_and_counts_the_copies(spark, tmp_path: Path) -> None:
    rows = [charge(0.324, 0.324, 16), charge(0.324, 0.324, 17)]
    write(tmp_path / "focus-2026-11.csv", rows)
    write(tmp_path / "focus-2026-11 (copy).csv", rows)
    got, reasons, _ = charges_of(spark, tmp_path)
    assert got == [("2026-11-16", "USD", 0.324, 0.324, 1), ("2026-11-17", "USD", 0.324, 0.324, 1)]
    assert reasons == []


def test_the_charges_and_their_quarantine_come_from_one_read_of_the_files(spark, tmp_path: Path) -> None:
    # A conflict, a row a check refuses, and a charge: the quarantine's write must not read and
    # de-duplicate the exports a second time (the sample audit's quarantine job: 4 of its 7 stages).
    write(tmp_path / "a.csv", [charge(1.0, 1.0, 16), charge(float("nan"), 1.0, 17), charge(2.0, 2.0, 18)])
    write(tmp_path / "b.csv", [charge(1.5, 1.5, 16)])
    charges, quarantine, _ = read_focus(spark, str(tmp_path))
    assert charges.inputFiles() == [] and quarantine.inputFiles() == []  # both from one checkpoint, no file
    assert sorted(r.reason for r in quarantine.collect()) == sorted([REASON_CHARGE_CONFLICT] * 2 + [REASON_NOT_FINITE])
    assert [(str(r.date), r.billed) for r in charges.collect()] == [("2026-11-18", 2.0)]


def test_rows_a_single_export_repeats_are_its_own_charges_and_all_kept(spark, tmp_path: Path) -> None:
    # FOCUS defines no row identifier: two identical rows in one export are the generator's rows.
    write(tmp_path / "focus.csv", [charge(1.0, 1.0), charge(1.0, 1.0)])
    got, _, _ = charges_of(spark, tmp_path)
    assert got == [("2026-11-16", "USD", 1.0, 1.0, 0), ("2026-11-16", "USD", 1.0, 1.0, 0)]


def test_charges_that_differ_in_identity_are_not_duplicates(spark, tmp_path: Path) -> None:
    write(tmp_path / "a.csv", [charge(1.0, 1.0, sku="base")])
    write(tmp_path / "b.csv", [charge(1.0, 1.0, sku="operations")])
    got, _, _ = charges_of(spark, tmp_path)
    assert [g[-1] for g in got] == [0, 0]


def test_files_that_disagree_on_a_charge_are_quarantined_not_guessed(spark, tmp_path: Path) -> None:
    write(tmp_path / "a.csv", [charge(1.0, 1.0), charge(2.0, 2.0, 17)])
    write(tmp_path / "b.csv", [charge(1.5, 1.5), charge(2.0, 2.0, 17)])
    got, reasons, _ = charges_of(spark, tmp_path)
    assert got == [("2026-11-17", "USD", 2.0, 2.0, 1)]
    assert reasons == [REASON_CHARGE_CONFLICT, REASON_CHARGE_CONFLICT]


@pytest.mark.parametrize(
    ("billed", "effective", "reason"),
    [
        ("NaN", "1.0", REASON_NOT_FINITE),
        ("1.0", "nan", REASON_NOT_FINITE),
        ("Infinity", "1.0", REASON_NOT_FINITE),
        ("1.0", "-Infinity", REASON_NOT_FINITE),
        ("1e308", "1.0", REASON_ABSURD),
        ("1.0", "-2e13", REASON_ABSURD),
    ],
)
def test_amounts_that_cannot_be_real_are_quarantined_with_the_reason(spark, tmp_path: Path, billed, effective, reason):
    write(tmp_path / "focus.csv", [charge(billed, effective), charge(0.5, 0.5, 17)])
    got, reasons, _ = charges_of(spark, tmp_path)
    assert got == [("2026-11-17", "USD", 0.5, 0.5, 0)]
    assert reasons == [reason]


def test_the_absurdity_bound_keeps_cents_exact_and_passes_any_real_charge() -> None:
    assert MAX_ABS_AMOUNT == 1e13
    assert MAX_ABS_AMOUNT * 100 < 2**53  # every cent below the bound is a distinct double
    assert math.isfinite(MAX_ABS_AMOUNT)


def test_currencies_are_kept_apart_and_a_non_iso_code_is_quarantined(spark, tmp_path: Path) -> None:
    write(tmp_path / "usd.csv", [charge(1.0, 1.0)])
    write(tmp_path / "eur.csv", [charge(3.0, 2.5, currency="eur"), charge(1.0, 1.0, 17, currency="euro")])
    got, reasons, _ = charges_of(spark, tmp_path)
    assert got == [("2026-11-16", "EUR", 3.0, 2.5, 0), ("2026-11-16", "USD", 1.0, 1.0, 0)]
    assert reasons == [REASON_CURRENCY]


def test_a_garbage_parquet_file_is_refused_by_name_and_the_csv_still_read(spark, tmp_path: Path) -> None:
    write(tmp_path / "focus.csv", [charge(1.0, 1.0)])
    (tmp_path / "part-0001.parquet").write_bytes(b"this is not parquet at all")
    got, _, files = charges_of(spark, tmp_path)
    assert got == [("2026-11-16", "USD", 1.0, 1.0, 0)]
    assert files.refused == {str((tmp_path / "part-0001.parquet").resolve()): REFUSED_NOT_PARQUET}


def test_a_parquet_file_with_the_magic_but_a_broken_footer_is_refused_when_spark_opens_it(spark, tmp_path: Path):
    write(tmp_path / "focus.csv", [charge(1.0, 1.0)])
    broken = tmp_path / "part-0002.parquet"
    broken.write_bytes(b"PAR1" + b"\x07" * 64 + (40).to_bytes(4, "little") + b"PAR1")
    got, _, files = charges_of(spark, tmp_path)
    assert got == [("2026-11-16", "USD", 1.0, 1.0, 0)]
    [(uri, reason)] = files.refused.items()
    assert Path(uri).name == "part-0002.parquet" and reason.startswith("unreadable: ")
    assert "\tat " not in reason and len(reason) <= len("unreadable: ") + 300
