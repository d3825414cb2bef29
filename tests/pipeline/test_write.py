"""The audit's writing (`pipeline/write.py`), its driver-side parts: the output URI, CSV text, which
properties differ between versions of a resource, and bills summed per currency."""

from __future__ import annotations

import json
from pathlib import Path

from pairedbus.pipeline.summary import Bills
from pairedbus.pipeline.write import bills_by_currency, csv_text, differing, output_uri, write_text


def test_a_local_directory_becomes_a_file_uri_and_a_cluster_uri_is_kept(tmp_path: Path) -> None:
    assert output_uri(str(tmp_path)) == tmp_path.resolve().as_uri()
    assert output_uri("abfss://audit@acct.dfs.core.windows.net/run/") == "abfss://audit@acct.dfs.core.windows.net/run"


def test_csv_text_quotes_what_csv_must_and_ends_lines_with_newline() -> None:
    assert csv_text(("a", "b"), [["x,y", None], [1, 'say "hi"']]) == 'a,b\n"x,y",\n1,"say ""hi"""\n'


def test_differing_names_the_properties_whose_values_differ_between_versions() -> None:
    first = json.dumps({"lockDuration": "PT1M", "maxDeliveryCount": 10, "tags": {"a": 1, "b": 2}})
    second = json.dumps({"lockDuration": "PT5M", "maxDeliveryCount": 10, "tags": {"b": 2, "a": 1}, "status": "Active"})
    assert differing([first, second]) == ["lockDuration", "status"]


def test_bills_are_summed_per_currency_never_across_and_bill_less_days_are_skipped() -> None:
    rows = [
        {"currency": "USD", "actual_billed": 1.25, "actual_effective": 2.0},
        {"currency": "USD", "actual_billed": None, "actual_effective": 3.0},
        {"currency": "EUR", "actual_billed": 4.0, "actual_effective": 4.5},
        {"currency": None, "actual_billed": None, "actual_effective": None},
    ]
    assert bills_by_currency(rows) == {
        "EUR": Bills(billed=4.0, effective=4.5),
        "USD": Bills(billed=1.25, effective=5.0),
    }


def test_a_local_text_file_is_written_without_hadoop(tmp_path: Path) -> None:
    target = tmp_path / "deeper" / "conflicts.csv"
    write_text(None, target.as_uri(), "a,b\n")  # type: ignore[arg-type]  # no Spark needed for file: URIs
    assert target.read_text(encoding="utf-8") == "a,b\n"
    assert [p.name for p in target.parent.iterdir()] == ["conflicts.csv"]  # no .crc beside it
