"""Steps of an audit run at once (`pipeline/steps.py`): each with the Spark local properties of the thread
that started it, its failure raised where its result is asked for, none left running after the block."""

from __future__ import annotations

import threading

import pytest

from pairedbus.pipeline.steps import POOL, Steps, done

pytestmark = pytest.mark.spark

#: A guard against a hang if the steps ran one after another: never reached when they run at once.
GUARD_S = 120


def test_two_steps_run_at_once(spark) -> None:
    both = threading.Barrier(2, timeout=GUARD_S)  # each waits for the other: one at a time never meets
    with Steps(spark) as steps:
        first, second = steps.start(both.wait), steps.start(both.wait)
        assert sorted([first.result(), second.result()]) == [0, 1]


def test_a_step_runs_its_jobs_with_the_starting_threads_job_group_and_description(spark) -> None:
    context = spark.sparkContext
    context.setJobGroup("pairedbus-steps-test", "steps")
    context.setLocalProperty("spark.job.description", "pairedbus audit: transform")
    try:
        with Steps(spark) as steps:
            seen = steps.start(lambda: context.getLocalProperty("spark.job.description")).result()
            assert steps.start(lambda: spark.range(3).count()).result() == 3
        assert seen == "pairedbus audit: transform"
        assert context.statusTracker().getJobIdsForGroup("pairedbus-steps-test")  # the step's count, in the group
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        context.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]


def test_each_step_thread_has_its_scheduler_pool_under_the_sessions_fair_scheduler(spark) -> None:
    # FIFO would give the earliest job every free slot: the pairing's one task queued behind the quarantine's 13.
    assert spark.sparkContext.getConf().get("spark.scheduler.mode") == "FAIR"
    both = threading.Barrier(2, timeout=GUARD_S)  # two threads at once: two pools

    def pool() -> str | None:
        both.wait()
        return spark.sparkContext.getLocalProperty(POOL)

    with Steps(spark) as steps:
        first, second = steps.start(pool), steps.start(pool)
        pools = {first.result(), second.result()}
    assert len(pools) == 2 and None not in pools


def test_a_steps_failure_is_raised_where_its_result_is_asked_for_and_the_block_waits_for_the_others(spark) -> None:
    finished: list[str] = []
    release = threading.Event()

    def fail() -> None:
        raise ValueError("step failed")

    def slow() -> None:
        release.wait(GUARD_S)
        finished.append("slow")

    with pytest.raises(ValueError, match="step failed"), Steps(spark) as steps:
        steps.start(slow)
        failed = steps.start(fail)
        release.set()
        failed.result()
    assert finished == ["slow"]  # the block ended after the step that was running


def test_done_holds_its_value() -> None:
    assert done(3).result() == 3
