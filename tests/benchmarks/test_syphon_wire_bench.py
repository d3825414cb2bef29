"""`benchmarks/syphon_wire_bench.py`'s bookkeeping: the ceiling, the goals' verdicts, the steady state, the
pipelined mover's completes. Nothing here starts a broker or times anything."""

from __future__ import annotations

import asyncio
from types import ModuleType
from typing import Any

import pytest
from azure.servicebus.exceptions import OperationTimeoutError, ServiceBusError

from pairedbus.emulator.remote import EmulatorProcess
from tests.benchmarks.loading import load_benchmark


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("syphon_wire_bench")


def _figures(
    bench: ModuleType,
    *,
    rate: list[float],
    steady: list[float],
    seconds: list[float],
    sustained: list[float] | None = None,
    pipeline: list[float] | None = None,
) -> Any:
    return bench.Figures(
        rate=rate,
        steady=steady,
        seconds=seconds,
        sustained=steady if sustained is None else sustained,
        pipeline=steady if pipeline is None else pipeline,
    )


def test_the_ceiling_is_the_capacity_over_three_round_trips(bench: ModuleType) -> None:
    assert bench.ceiling(2_000, 0.002) == pytest.approx(2_000 / 0.006)


def test_a_cell_of_long_runs_needs_the_syphon_at_least_as_fast_as_the_pipelined_mover(bench: ModuleType) -> None:
    figures = {
        "syphon": _figures(bench, rate=[99.0, 97.0, 101.0], steady=[300.0], seconds=[20.0, 21.0, 20.0]),
        "pipelined": _figures(bench, rate=[100.0, 90.0, 110.0], steady=[200.0], seconds=[20.0, 22.0, 18.0]),
    }

    (verdict,) = bench.judge(figures, c3r=10_000.0)

    # Medians: 99 against 100, both drains 20 s: the bound is 1.0, and 0.99 misses it.
    assert (verdict.syphon, verdict.other, verdict.bound, verdict.met) == (pytest.approx(0.99), 100.0, 1.0, False)


def test_a_cell_of_runs_under_a_second_allows_the_syphon_two_percent(bench: ModuleType) -> None:
    figures = {
        "syphon": _figures(bench, rate=[990.0], steady=[0.0], seconds=[0.5]),
        "pipelined": _figures(bench, rate=[1_000.0], steady=[0.0], seconds=[0.5]),
    }

    (verdict,) = bench.judge(figures, c3r=10_000.0)

    assert (verdict.bound, verdict.met) == (bench.SHORT_RATIO, True)


def test_the_steady_state_is_judged_against_the_lower_of_the_ceiling_and_the_unbounded_mover(
    bench: ModuleType,
) -> None:
    figures = {
        "syphon": _figures(
            bench, rate=[1.0], steady=[900.0, 800.0, 1_000.0], pipeline=[800.0, 700.0, 900.0], seconds=[5.0]
        ),
        # What it sustains (received to completed), not its completes alone nor its slowest stage alone.
        "unbounded": _figures(
            bench,
            rate=[1.0],
            steady=[5_000.0],
            sustained=[4_000.0],
            pipeline=[1_000.0, 1_200.0, 1_100.0],
            seconds=[5.0],
        ),
    }

    under_the_unbounded = bench.judge(figures, c3r=5_000.0)
    under_the_ceiling = bench.judge(figures, c3r=1_000.0)

    # 0.85 x min(5,000, 1,100) = 935 > 900; 0.85 x min(1,000, 1,100) = 850 <= 900. The syphon's own received
    # to completed (800) is held to the same floor.
    assert [(v.measure, v.syphon, v.other, v.bound, v.met) for v in under_the_unbounded] == [
        ("steady state, msg/s", 900.0, 1_100.0, pytest.approx(935.0), False),
        ("received to completed", 800.0, 1_100.0, pytest.approx(935.0), False),
    ]
    assert [(v.syphon, v.bound, v.met) for v in under_the_ceiling] == [
        (900.0, pytest.approx(850.0), True),
        (800.0, pytest.approx(850.0), False),
    ]


def test_no_goal_is_judged_without_the_syphon(bench: ModuleType) -> None:
    figures = {"pipelined": _figures(bench, rate=[1.0], steady=[1.0], seconds=[1.0])}

    assert bench.judge(figures, c3r=1.0) == []


def test_the_steady_state_is_the_rate_between_ten_and_ninety_percent_completed(bench: ModuleType) -> None:
    progress = bench.Progress({"completed": [(0.0, 0), (1.0, 5), (2.0, 10), (3.0, 50), (6.0, 90), (7.0, 100)]})

    assert progress.steady(100) == pytest.approx(80 / 4.0)
    assert progress.sustained(100) == pytest.approx(80 / 4.0)  # the syphon's: its one stage
    assert progress.pipeline(100) == pytest.approx(80 / 4.0)
    assert bench.Progress({"completed": [(0.0, 0), (1.0, 100)]}).steady(100) == 0.0  # both marks in one sample


def test_what_a_mover_sustains_is_its_slowest_stage_not_a_burst_of_completes(bench: ModuleType) -> None:
    # The unbounded mover over the wire: the backlog received and sent in 8 s while 10 % waited to be completed,
    # then completed in a burst of 1 s.
    progress = bench.Progress(
        {
            "received": [(0.0, 0), (1.0, 10), (9.0, 90), (10.0, 100)],
            "sent": [(0.0, 0), (1.0, 0), (2.0, 10), (10.0, 90), (11.0, 100)],
            "completed": [(0.0, 0), (10.0, 9), (10.5, 10), (11.5, 90), (12.0, 100)],
        }
    )

    assert progress.steady(100) == pytest.approx(80 / 1.0)
    assert progress.sustained(100) == pytest.approx(80 / 8.0)
    # 10 % received at 1 s, 90 % completed at 11.5 s.
    assert progress.pipeline(100) == pytest.approx(80 / 10.5)
    # A stage too fast to tell (its marks in one sample) leaves it unknown, not the others' rate.
    progress.stages["sent"] = [(0.0, 0), (1.0, 100)]
    assert progress.sustained(100) == 0.0


def test_what_an_unbounded_mover_sustains_holds_the_wait_of_stages_that_do_not_overlap(bench: ModuleType) -> None:
    # Unbounded at 10 queues: every stage's 10-90 % in 2 s, one after another, over a 9 s drain. Each stage
    # alone is a burst of 4,000 msg/s; what passed all of them came at 80 / 7 s.
    progress = bench.Progress(
        {
            "received": [(0.0, 0), (1.0, 10), (3.0, 90), (3.5, 100)],
            "sent": [(0.0, 0), (3.5, 0), (4.0, 10), (6.0, 90), (6.5, 100)],
            "completed": [(0.0, 0), (5.5, 0), (6.0, 10), (8.0, 90), (9.0, 100)],
        }
    )

    assert progress.sustained(100) == pytest.approx(80 / 2.0)
    assert progress.pipeline(100) == pytest.approx(80 / 7.0)
    # A mover whose 90 % completed came no later than its 10 % received: unknown, not infinite.
    assert (
        bench.Progress({"received": [(0.0, 0), (1.0, 100)], "completed": [(0.0, 0), (1.0, 100)]}).pipeline(100) == 0.0
    )


class _Receiver:
    """Completes that take a turn of the loop each, failing for the messages named, counting how many
    were outstanding at once."""

    def __init__(self, failing: set[int]) -> None:
        self.failing = failing
        self.outstanding = 0
        self.most = 0

    async def complete_message(self, message: int) -> None:
        self.outstanding += 1
        self.most = max(self.most, self.outstanding)
        try:
            await asyncio.sleep(0)
            if message in self.failing:
                raise OperationTimeoutError(message="the settlement was sent but not confirmed")
        finally:
            self.outstanding -= 1


def test_the_pipelined_mover_bounds_its_outstanding_completes_per_receiver_and_records_failures(
    bench: ModuleType,
) -> None:
    receiver = _Receiver(failing={3, 77})
    tally = bench.Tally()
    seen: list[int] = []

    async def two_batches() -> None:
        settling = asyncio.Semaphore(bench.SETTLES_PER_RECEIVER)
        watching = asyncio.ensure_future(_watch(tally, seen))
        await asyncio.gather(
            bench._complete_all(receiver, settling, list(range(250)), tally),
            bench._complete_all(receiver, settling, list(range(250, 500)), tally),
        )
        watching.cancel()

    asyncio.run(two_batches())

    # 250 at once on one receiver's connection made the SDK's outcome waits outlast the operation timeout.
    assert receiver.most == bench.SETTLES_PER_RECEIVER
    assert tally.moved == 498
    assert len(tally.failures) == 2 and all(isinstance(f, ServiceBusError) for f in tally.failures)
    # Counted as they land, not a batch at a time (the steady state's samples see the completes between).
    assert any(0 < moved < 250 for moved in seen)


async def _watch(tally: Any, seen: list[int]) -> None:
    while True:
        seen.append(tally.moved)
        await asyncio.sleep(0)


def test_the_steady_state_goal_is_undecided_when_what_the_unbounded_mover_moves_is_unknown(
    bench: ModuleType,
) -> None:
    figures = {
        "syphon": _figures(bench, rate=[1.0], steady=[300.0], seconds=[5.0]),
        # Its 10 % received and 90 % completed within one sample; its completes' steady state known.
        "unbounded": _figures(bench, rate=[1.0], steady=[900.0], pipeline=[0.0], seconds=[0.5]),
    }

    assert [verdict.met for verdict in bench.judge(figures, c3r=5_000.0)] == [None, None]


@pytest.mark.slow
def test_the_unbounded_mover_counts_each_stage_as_messages_pass_it_over_the_wire(bench: ModuleType) -> None:
    with EmulatorProcess(["primary", "secondary"]) as brokers:
        bench.create_queues(brokers, 2)
        asyncio.run(bench._park(brokers, 60, 2, 256, "stages"))

        progress = asyncio.run(bench._unbounded(brokers, 2, 60, 256, 1))

        assert sum(brokers.queue("primary", f"dest-{d}")["counts"]["active"] for d in range(10)) == 60
    assert {stage: samples[-1][1] for stage, samples in progress.stages.items()} == {
        "received": 60,
        "sent": 60,
        "completed": 60,
    }
    # A message passes the stages in order: at every sample, received >= sent >= completed.
    received, sent, completed = (progress.stages[stage] for stage in bench.STAGES)
    assert all(r[1] >= s[1] >= c[1] for r, s, c in zip(received, sent, completed, strict=True))


@pytest.mark.slow
def test_the_syphon_counts_what_it_received_and_holds_beside_what_it_moved_over_the_wire(bench: ModuleType) -> None:
    with EmulatorProcess(["primary", "secondary"]) as brokers:
        bench.create_queues(brokers, 2)
        asyncio.run(bench._park(brokers, 60, 2, 256, "syphon-stages"))

        progress = asyncio.run(bench._syphon(brokers, 2, 60, 256, 1))

    received, completed = progress.stages["received"], progress.stages["completed"]
    assert (received[-1][1], completed[-1][1]) == (60, 60)
    # Received is moved or held: never behind the completes, ahead of them while messages are held.
    assert all(r[1] >= c[1] for r, c in zip(received, completed, strict=True))
    assert any(r[1] > c[1] for r, c in zip(received, completed, strict=True))
