from __future__ import annotations

import json
from pathlib import Path

import pytest

from pairedbus.errors import UserError
from pairedbus.pipeline.prices import BUNDLED_PRICES, load_prices


def _table(**overrides: object) -> dict:
    table = json.loads(BUNDLED_PRICES.read_text())
    table.update(overrides)
    return table


def test_bundled_table_names_its_source_and_date() -> None:
    prices = load_prices()
    assert prices.source.startswith("https://azure.microsoft.com/")
    assert prices.as_of == "2024-09-01"
    assert prices.currency == "USD"


def test_standard_operations_are_priced_by_monthly_tier() -> None:
    prices = load_prices()
    assert prices.standard_tiered_cost(13_000_000) == 0.0
    assert prices.standard_tiered_cost(14_000_000) == pytest.approx(0.80)
    # 87M in the second tier, then 1M in the third.
    assert prices.standard_tiered_cost(101_000_000) == pytest.approx(87 * 0.80 + 0.50)
    assert prices.standard_tiered_cost(2_600_000_000) == pytest.approx(87 * 0.80 + 2400 * 0.50 + 100 * 0.20)


def test_prices_file_that_is_not_json_is_a_one_line_user_error(tmp_path: Path) -> None:
    bad = tmp_path / "prices.json"
    bad.write_text("{not json")
    with pytest.raises(UserError, match=r"^--prices .*prices\.json: not JSON \(line 1") as info:
        load_prices(bad)
    assert "\n" not in str(info.value)


def test_prices_file_missing_a_price_names_the_field(tmp_path: Path) -> None:
    table = _table()
    del table["premium"]["messaging_unit_per_hour"]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(table))
    with pytest.raises(UserError, match=r"premium\.messaging_unit_per_hour: Field required"):
        load_prices(path)


def test_prices_file_with_tiers_out_of_order_is_rejected(tmp_path: Path) -> None:
    table = _table()
    table["standard"]["operation_tiers_per_month"] = [
        {"up_to_millions": 100, "price_per_million": 0.8},
        {"up_to_millions": 13, "price_per_million": 0.0},
        {"up_to_millions": None, "price_per_million": 0.2},
    ]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(table))
    with pytest.raises(UserError, match="operation tiers must ascend"):
        load_prices(path)


def test_missing_prices_file_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such file"):
        load_prices(tmp_path / "absent.json")
