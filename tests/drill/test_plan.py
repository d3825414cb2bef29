"""What a seed fixes: the drill's plan is a pure function of its config, and the report carries its digest."""

from __future__ import annotations

from datetime import timedelta

from pairedbus.drill import DrillConfig, run_drill_on_fake
from pairedbus.drill.plan import drill_plan


def test_the_same_seed_gives_the_same_plan_and_digest():
    config = DrillConfig(messages=500, outages=3, syphon_restarts=4, seed=7)
    first, second = drill_plan(config), drill_plan(config)
    assert first.digest == second.digest
    assert (first.outage_windows, first.kill_points, first.client_seeds) == (
        second.outage_windows,
        second.kill_points,
        second.client_seeds,
    )


def test_the_digest_changes_with_the_plan_not_with_the_bounds():
    base = DrillConfig(messages=500, seed=7)
    digest = drill_plan(base).digest
    assert drill_plan(base.model_copy(update={"seed": 8})).digest != digest
    assert drill_plan(base.model_copy(update={"fault_rate": 0.5})).digest != digest
    assert drill_plan(base.model_copy(update={"syphon_restarts": 3})).digest != digest
    assert drill_plan(base.model_copy(update={"timeout": 60.0})).digest == digest  # a bound, not the plan


def test_two_drills_with_the_same_seed_report_the_same_plan():
    config = DrillConfig(
        messages=60,
        outages=1,
        syphon_restarts=1,
        seed=3,
        min_send_time=timedelta(milliseconds=200),
        ping_interval=timedelta(milliseconds=50),
        failover_interval=timedelta(0),
    )
    first, second = run_drill_on_fake(config), run_drill_on_fake(config)
    assert first.plan_digest == second.plan_digest == drill_plan(config).digest
    assert first.ok and second.ok, (first.as_dict(), second.as_dict())
