from __future__ import annotations

from datetime import date, datetime

import pytest

from pairedbus import contract
from pairedbus.pipeline.namespace_cost import COST_COLUMNS, cost_by_namespace_day, estate_by_namespace, traffic_grains
from pairedbus.pipeline.prices import load_prices

pytestmark = pytest.mark.spark

B0, B1 = contract.backlog_queue_name("contoso", 0), contract.backlog_queue_name("contoso", 1)
ROW_SCHEMA = "namespace string, metric string, entity string, timestamp timestamp, total double, interval_minutes long"
RESOURCE_SCHEMA = "kind string, namespace string, entity string, sku_name string, sku_capacity long"
STANDARD_DAY = 0.0135 * 24  # base charge for a day, bundled table


def resources(spark):
    return spark.createDataFrame(
        [
            ("namespace", "contoso", None, "Standard", None),
            ("queue", "contoso", "orders", None, None),
            ("queue", "contoso", "payments", None, None),
            ("topic", "contoso", "events", None, None),
            ("subscription", "contoso", "events/subscriptions/audit", None, None),
            ("namespace", "contoso-dr", None, "Standard", None),
            ("queue", "contoso-dr", B0, None, None),
            ("queue", "contoso-dr", B1, None, None),
            ("queue", "contoso-dr", "local", None, None),
            ("namespace", "fab", None, "Premium", 2),
        ],
        RESOURCE_SCHEMA,
    )


def t(day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(2026, 11, day, hour, minute)


@pytest.fixture(scope="module")
def cost(spark_keeper):
    """The cost rows by (namespace, day), and the frame's columns and executed plan: plain values, so that a later
    test in the module reads them also after a failed test made the keeper start a new session."""
    spark = spark_keeper.session()
    rows = spark.createDataFrame(
        [
            ("contoso", "IncomingRequests", "orders", t(1), 12_000_000.0, 1),
            ("contoso", "IncomingRequests", "orders", t(2), 2_000_000.0, 1),
            ("contoso-dr", "IncomingMessages", B0, t(1, 10, 0), 5.0, 1),
            ("contoso-dr", "IncomingMessages", B0, t(1, 10, 1), 0.0, 1),
            ("contoso-dr", "IncomingMessages", B1, t(1, 10, 0), 3.0, 1),
            ("contoso-dr", "IncomingMessages", B1, t(1, 10, 2), 2.0, 1),
            ("contoso-dr", "IncomingMessages", "local", t(1, 10, 0), 100.0, 1),
            ("contoso-dr", "IncomingMessages", B0, t(2), 1.0, 5),
            ("ghost", "IncomingRequests", "q", t(1), 50.0, 1),
        ],
        ROW_SCHEMA,
    )
    frame = cost_by_namespace_day(rows, estate_by_namespace(resources(spark)), load_prices(), clients=3)
    by_day = {(r.namespace, r.date.day): r.asDict() for r in frame.collect()}
    return by_day, tuple(frame.columns), frame._jdf.queryExecution().executedPlan().toString()


def test_one_row_per_namespace_per_day_the_metrics_cover(cost) -> None:
    rows, columns, _ = cost
    assert columns == COST_COLUMNS
    assert sorted(rows) == [(ns, d) for ns in ("contoso", "contoso-dr", "fab", "ghost") for d in (1, 2)]
    assert rows[("contoso", 1)]["date"] == date(2026, 11, 1)


def test_operations_are_incoming_requests_summed_per_day(cost) -> None:
    rows, _, _ = cost
    assert [rows[("contoso", d)]["operations"] for d in (1, 2)] == [12_000_000, 2_000_000]
    assert rows[("fab", 1)]["operations"] == 0


def test_backlog_messages_count_only_backlog_queues_on_their_namespace(cost) -> None:
    rows, _, _ = cost
    assert [rows[("contoso-dr", d)]["backlog_messages"] for d in (1, 2)] == [10, 1]
    assert rows[("contoso", 1)]["backlog_messages"] == 0


def test_syphon_receives_four_an_hour_per_backlog_queue_on_the_holding_namespace(cost) -> None:
    rows, _, _ = cost
    assert [rows[("contoso-dr", d)]["syphon_receives"] for d in (1, 2)] == [2 * 4 * 24] * 2
    assert rows[("contoso", 1)]["syphon_receives"] == 0


def test_ping_estimate_is_backlog_minutes_times_primary_entities_times_clients(cost) -> None:
    rows, _, _ = cost
    # Day 1: traffic in minutes 10:00 (both queues: counted once) and 10:02; day 2: one 5-minute grain.
    assert rows[("contoso", 1)]["ping_operations_estimate"] == 2 * 3 * 3
    assert rows[("contoso", 2)]["ping_operations_estimate"] == 5 * 3 * 3
    assert rows[("contoso-dr", 1)]["ping_operations_estimate"] == 0


def test_pairing_operations_are_two_hops_per_backlogged_message_plus_syphon_and_pings(cost) -> None:
    rows, _, _ = cost
    assert rows[("contoso-dr", 1)]["pairing_operations"] == 2 * 10 + 192
    assert rows[("contoso-dr", 2)]["pairing_operations"] == 2 * 1 + 192
    assert rows[("contoso", 1)]["pairing_operations"] == 18


def test_estimated_cost_per_tier(cost) -> None:
    rows, _, _ = cost
    assert rows[("contoso", 1)]["estimated_cost_usd"] == pytest.approx(STANDARD_DAY)
    # 14M operations in the month so far: the 1M above the 13M included ones at $0.80 per million.
    assert rows[("contoso", 2)]["estimated_cost_usd"] == pytest.approx(STANDARD_DAY + 0.80)
    assert rows[("fab", 1)]["estimated_cost_usd"] == pytest.approx(2 * 0.928 * 24)
    assert rows[("ghost", 1)]["estimated_cost_usd"] is None


def test_operation_tiers_restart_each_calendar_month(spark) -> None:
    rows = spark.createDataFrame(
        [
            ("s", "IncomingRequests", "q", datetime(2026, 11, 30), 13_500_000.0, 1),
            ("s", "IncomingRequests", "q", datetime(2026, 12, 1), 13_500_000.0, 1),
        ],
        ROW_SCHEMA,
    )
    estate = estate_by_namespace(spark.createDataFrame([("namespace", "s", None, "Standard", None)], RESOURCE_SCHEMA))
    costs = [r.estimated_cost_usd for r in cost_by_namespace_day(rows, estate, load_prices()).collect()]
    assert costs == pytest.approx([STANDARD_DAY + 0.40, STANDARD_DAY + 0.40])


def test_cost_aggregation_runs_without_python_evaluation(spark, cost) -> None:
    _, _, cost_plan = cost
    rows = spark.createDataFrame([("a", "IncomingMessages", B0, t(1), 1.0, 1)], ROW_SCHEMA)
    # The hot path (one pass over every metric row) and what reads its checkpointed result.
    for plan in (
        traffic_grains(rows)._jdf.queryExecution().executedPlan().toString(),
        cost_plan,
    ):
        assert "HashAggregate" in plan or "Scan" in plan
        assert "Python" not in plan and "ArrowEval" not in plan
